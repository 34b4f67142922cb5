/**
 * `GET /account`: the signed-in user's page.
 *
 * @module
 */
import { type Html, html } from "../html.ts";
import type { FlashMessage, PageContent } from "./layout.ts";

/** What {@linkcode accountPage} needs. */
export interface AccountInput {
  /** The user's email. */
  email: string;
  /** The modules' markup under the address (its verification state). */
  status: Html[];
  /**
   * An account without a password (made by signing in with a provider):
   * the page offers a mailed link to set one instead of the change form.
   */
  passwordless?: boolean;
  /** A flash message to show once. */
  flash: FlashMessage | null;
  /** An error from the password form, or `null`. */
  error?: string | null;
  /** The sessions, activity, email and deletion sections. */
  sections?: Html;
}

/**
 * Renders the account page: the email, the modules' status lines, and the
 * password change form (or, for an account without a password, the button
 * that mails a link to set one).
 *
 * @param input The user and the flash.
 * @returns The page.
 */
export function accountPage(input: AccountInput): PageContent {
  return {
    title: "Account",
    email: input.email,
    flash: input.flash,
    body: html`
      <h1>Your account</h1>
      <p>Signed in as <strong id="email">${input.email}</strong>.</p>
      ${input.status}
      ${input.passwordless ? "" : html`<h2>Change password</h2>`}
      ${input.error
        ? html`<p class="flash alert" role="alert">${input.error}</p>`
        : ""}
      ${input.passwordless ? setPassword : changePassword}
      ${input.sections ?? ""}
    `,
  };
}

const changePassword = html`
  <form method="post" action="/account/password">
    <label for="current">Current password</label>
    <input id="current" name="currentPassword" type="password"
      autocomplete="current-password" required>
    <label for="new">New password</label>
    <input id="new" name="newPassword" type="password" autocomplete="new-password"
      required minlength="8">
    <p><button type="submit">Change password and sign out other sessions</button></p>
  </form>
`;

const setPassword = html`
  <section id="set-password" aria-labelledby="set-password-h">
    <h2 id="set-password-h">Password</h2>
    <p id="no-password">This account has no password: you sign in with a
      provider or a passkey. To add one, we email you a link (it works for one
      hour, and using it signs out every session).</p>
    <form method="post" action="/account/password/link">
      <p><button type="submit">Email me a link to set a password</button></p>
    </form>
  </section>
`;
