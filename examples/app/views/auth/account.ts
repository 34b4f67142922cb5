/**
 * `GET /account`: the signed-in user's page.
 *
 * @module
 */
import { type Html, html } from "../html.ts";
import { type FlashMessage, layout } from "./layout.ts";

/** What {@linkcode accountPage} needs. */
export interface AccountInput {
  /** The user's email. */
  email: string;
  /** Whether the email is verified. */
  verified: boolean;
  /** A flash message to show once. */
  flash: FlashMessage | null;
  /** An error from the password form, or `null`. */
  error?: string | null;
  /** Sections of the sign-in methods (two-factor, passkeys, linked accounts). */
  sections?: (Html | null)[];
}

/**
 * Renders the account page: the email, its verification state, and the
 * password change form.
 *
 * @param input The user and the flash.
 * @returns The page.
 */
export function accountPage(input: AccountInput): string {
  const verification: Html[] = [];
  // [verification] begin
  verification.push(
    input.verified
      ? html`<p id="verified">Your email address is verified.</p>`
      : html`
        <p id="unverified">Your email address is not verified yet.</p>
        <form method="post" action="/verify/resend">
          <input type="hidden" name="next" value="/account">
          <button type="submit">Send a new verification link</button>
        </form>
      `,
  );
  // [verification] end
  return layout({
    title: "Account",
    email: input.email,
    flash: input.flash,
    body: html`
      <h1>Your account</h1>
      <p>Signed in as <strong id="email">${input.email}</strong>.</p>
      ${verification}
      <h2>Change password</h2>
      ${input.error
        ? html`<p class="flash alert" role="alert">${input.error}</p>`
        : ""}
      <form method="post" action="/account/password">
        <label for="current">Current password</label>
        <input id="current" name="currentPassword" type="password"
          autocomplete="current-password" required>
        <label for="new">New password</label>
        <input id="new" name="newPassword" type="password" autocomplete="new-password"
          required minlength="8">
        <p><button type="submit">Change password and sign out other sessions</button></p>
      </form>
      ${input.sections ?? []}
    `,
  });
}
