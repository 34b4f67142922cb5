/**
 * The passkeys module's own pages: sign-up with a passkey, the recovery
 * request, the page a recovery link opens, the recovery session's page,
 * and the recovery mail. Each works without JavaScript as far as it can:
 * a passkey needs it (WebAuthn is a script API), so those pages say so and
 * offer the way that does not (registration with a password, setting a
 * password).
 *
 * @module
 */
import {
  type EmailContent,
  html,
  type PageContent,
} from "@portcullis/accounts/views";

const SCRIPT = html`<script type="module" src="/assets/passkeys.js"></script>`;

/**
 * `GET /passkeys/signup`: an email and a button that creates the account
 * with a passkey.
 *
 * @param input Where to go after signing up.
 * @returns The page.
 */
export function passkeySignupPage(input: { next: string }): PageContent {
  return {
    title: "Sign up with a passkey",
    email: null,
    body: html`
      <h1>Sign up with a passkey</h1>
      <p>No password: your device keeps a passkey for this site, unlocked by your fingerprint, face or screen lock. We email you a link to confirm the address.</p>
      <form id="passkey-signup" data-next="${input.next}">
        <label for="signup-email">Email</label>
        <input id="signup-email" name="email" type="email" autocomplete="username"
          required>
        <p><button type="submit" id="passkey-signup-button" disabled>Create my account with a passkey</button></p>
      </form>
      <p id="passkey-status" role="status"></p>
      <noscript><p>Passkeys need JavaScript. <a href="/register">Register with a password</a> instead.</p></noscript>
      <p>Prefer a password? <a href="/register">Register with a password</a>.</p>
      ${SCRIPT}
    `,
  };
}

/**
 * `GET /passkeys/recover` (and a refused `POST`): asks for a recovery link.
 *
 * @param input The email typed and an error.
 * @returns The page.
 */
export function passkeyRecoverPage(
  input: { email: string; error: string | null },
): PageContent {
  const errorId = input.error ? "recover-email-error" : null;
  return {
    title: "Recover your account",
    email: null,
    body: html`
      <h1>Recover your account</h1>
      <p>Lost your passkey? We email you a link. It lets you add a new passkey or set a password, and nothing else.</p>
      <form method="post" action="/passkeys/recover">
        <label for="recover-email">Email</label>
        <input id="recover-email" name="email" type="email" autocomplete="username"
          required value="${input.email}"${errorId
            ? html`
              aria-invalid="true" aria-describedby="${errorId}"
            `
            : ""}>
        ${errorId
          ? html`<p id="${errorId}" class="field-error" role="alert">${input.error}</p>`
          : ""}
        <p><button type="submit">Email me a recovery link</button></p>
      </form>
    `,
  };
}

/**
 * The page a recovery link opens: a form that posts its token (a mail
 * scanner that fetches the link consumes nothing).
 *
 * @param input The token, and whether the address was never proven.
 * @returns The page.
 */
export function passkeyRecoverConfirmPage(
  input: { token: string; unverified: boolean },
): PageContent {
  return {
    title: "Recover your account",
    email: null,
    body: html`
      <h1>Recover your account</h1>
      ${input.unverified
        ? html`<p>This address was never confirmed: recovering the account removes every passkey and password set up on it so far, and signs out every session.</p>`
        : ""}
      <p>Next you can add a passkey or set a password, and nothing else until you do.</p>
      <form method="post" action="/passkeys/recover/callback">
        <input type="hidden" name="token" value="${input.token}">
        <p><button type="submit">Recover my account</button></p>
      </form>
    `,
  };
}

/**
 * The recovery session's page: add a passkey (with JavaScript), set a
 * password (a form), or end the recovery.
 *
 * @param input The account's address and an error of the password form.
 * @returns The page.
 */
export function passkeyRecoverySessionPage(
  input: { email: string; error: string | null },
): PageContent {
  const errorId = input.error ? "recover-password-error" : null;
  return {
    title: "Recovering your account",
    email: null,
    body: html`
      <h1>Recovering your account</h1>
      <p>Recovering <strong id="recover-email">${input
        .email}</strong>. Add a passkey or set a password: either one signs you in and signs out every other session.</p>
      <section aria-labelledby="recover-passkey-h">
        <h2 id="recover-passkey-h">Add a passkey</h2>
        <form id="passkey-recover-add" hidden>
          <label for="recover-passkey-name">Name for the passkey</label>
          <input id="recover-passkey-name" name="name" type="text" maxlength="64"
            value="Passkey">
          <p><button type="submit">Add a passkey</button></p>
        </form>
        <noscript><p>Adding a passkey needs JavaScript: set a password below instead.</p></noscript>
        <p id="passkey-status" role="status"></p>
      </section>
      <section aria-labelledby="recover-password-h">
        <h2 id="recover-password-h">Or set a password</h2>
        <form method="post" action="/passkeys/recover/password">
          <input type="email" name="email" value="${input
            .email}" autocomplete="username" hidden readonly>
          <label for="recover-password">New password</label>
          <input id="recover-password" name="password" type="password"
            autocomplete="new-password" required${errorId
              ? html`
                aria-invalid="true" aria-describedby="${errorId}"
              `
              : ""}>
          ${errorId
            ? html`<p id="${errorId}" class="field-error" role="alert">${input.error}</p>`
            : ""}
          <p><button type="submit">Set the password</button></p>
        </form>
      </section>
      <form method="post" action="/passkeys/recover/end">
        <p><button type="submit" class="secondary">End the recovery</button></p>
      </form>
      ${SCRIPT}
    `,
  };
}

/**
 * The mail that carries a recovery link.
 *
 * @param input The link (built from the configured origin).
 * @returns Subject, HTML and text.
 */
export function passkeyRecoveryEmail(input: { link: string }): EmailContent {
  const lines =
    "Open this link within 15 minutes to add a new passkey or set a password. It works once.";
  const ignore =
    "If you did not ask for it, ignore this email: nobody can use it without your mailbox.";
  return {
    subject: "Recover your account",
    view: String(html`
      <!doctype html>
      <html lang="en">
        <body>
          <p>${lines}</p>
          <p><a href="${input.link}">Recover my account</a></p>
          <p>${ignore}</p>
        </body>
      </html>
    `),
    text: `${lines}\n\n${input.link}\n\n${ignore}\n`,
  };
}

/** The passkeys module's own pages and mail. */
export interface PasskeyPages {
  /** `GET /passkeys/signup`. */
  signupPage: typeof passkeySignupPage;
  /** `GET /passkeys/recover`. */
  recoverPage: typeof passkeyRecoverPage;
  /** The page a recovery link opens. */
  recoverConfirmPage: typeof passkeyRecoverConfirmPage;
  /** The recovery session's page. */
  recoverySessionPage: typeof passkeyRecoverySessionPage;
  /** The recovery mail. */
  recoveryEmail: typeof passkeyRecoveryEmail;
}

/** The passkeys module's default pages and mail. */
export const defaultPasskeyPages: PasskeyPages = {
  signupPage: passkeySignupPage,
  recoverPage: passkeyRecoverPage,
  recoverConfirmPage: passkeyRecoverConfirmPage,
  recoverySessionPage: passkeyRecoverySessionPage,
  recoveryEmail: passkeyRecoveryEmail,
};
