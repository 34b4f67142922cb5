// Copied from packages/accounts/views/auth/account.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * `GET /account`: the signed-in user's page, in groups a person finds at a
 * glance: Security (the password and every sign-in method), Sessions (with
 * the recent activity), Email address, Danger zone.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";
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
  /**
   * The fewest characters a new password of this account may have: 15
   * when the password is its only factor, 8 with a second factor (NIST SP
   * 800-63B-4). Default 15.
   */
  minPasswordLength?: number;
  /** A flash message to show once. */
  flash: FlashMessage | null;
  /** An error from one of the page's forms, or `null`. */
  error?: string | null;
  /**
   * The rest of the Security group, after the password: the modules'
   * sections (two-factor authentication, passkeys, linked providers, …)
   * and, for an account without a password, "Confirm it's you" first.
   */
  security?: Html;
  /**
   * The sessions, activity, email and deletion sections
   * (the `accountSections` view); without them (a page that
   * answers a refused form) the page shows the password part alone.
   */
  sections?: Html;
}

/**
 * Renders the account page: the email and the modules' status lines, a
 * list of the page's groups, then the Security group (the password change,
 * or for an account without a password the button that mails a link to set
 * one, then the modules' sections) and the other groups.
 *
 * @param input The user, the flash and the page's parts.
 * @returns The page.
 */
export function accountPage(input: AccountInput): PageContent {
  const error = input.error
    ? html`<p class="flash alert" role="alert">${input.error}</p>`
    : "";
  return {
    title: "Account",
    email: input.email,
    flash: input.flash,
    body: html`
      <h1>Your account</h1>
      <p>Signed in as <strong id="email">${input.email}</strong>.</p>
      ${input.status}
      ${input.sections ? contents : ""}
      ${error}
      <section id="security" class="group" aria-labelledby="security-h">
        <h2 id="security-h">Security</h2>
        ${input.passwordless
          ? setPassword
          : changePassword(Boolean(error), input.minPasswordLength ?? 15)}
        ${input.security ?? ""}
      </section>
      ${input.sections ?? ""}
    `,
  };
}

const contents = html`
  <nav class="toc" aria-label="On this page">
    <ul>
      <li><a href="#security">Security</a></li>
      <li><a href="#sessions">Sessions</a></li>
      <li><a href="#email-address">Email address</a></li>
      <li><a href="#danger-zone">Danger zone</a></li>
    </ul>
  </nav>
`;

function changePassword(open: boolean, min: number): Html {
  return html`
    <section id="password" class="item" aria-labelledby="password-h">
      <h3 id="password-h">Password</h3>
      <details class="action" ${open ? " open" : ""}>
        <summary>Change password</summary>
        <form method="post" action="/account/password">
          <label for="current">Current password</label>
          <input id="current" name="currentPassword" type="password"
            autocomplete="current-password" required>
          <label for="new">New password</label>
          <input id="new" name="newPassword" type="password"
            autocomplete="new-password" required minlength="${min}"
            aria-describedby="new-hint">
          <p class="hint" id="new-hint">At least ${min} characters. Every other
            session is signed out.</p>
          <p><button type="submit">Change password</button></p>
        </form>
      </details>
    </section>
  `;
}

const setPassword = html`
  <section id="set-password" class="item" aria-labelledby="set-password-h">
    <h3 id="set-password-h">Password</h3>
    <p id="no-password">This account has no password: you sign in with a
      provider or a passkey. To add one, we email you a link (it works for one
      hour, and using it signs out every session).</p>
    <form method="post" action="/account/password/link">
      <p><button type="submit">Email me a link to set a password</button></p>
    </form>
  </section>
`;
