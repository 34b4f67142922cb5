// Copied from packages/totp/accounts/views.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The TOTP pages: the code form after the password, enrolment with its QR
 * code, the recovery codes (shown once), and the account page's section.
 *
 * @module
 */
import {
  currentPasswordField,
  type Html,
  html,
  type PageContent,
} from "@portcullis/accounts/views";

/** The step after the password: a code or a recovery code. */
export function totpLoginPage(input: { error: string | null }): PageContent {
  return {
    title: "Two-factor authentication",
    email: null,
    body: html`
      <h1>Enter your code</h1>
      ${input.error
        ? html`<p class="flash alert" role="alert">${input.error}</p>`
        : ""}
      <form method="post" action="/login/totp">
        <label for="code">Code from your authenticator app, or a recovery code</label>
        <input id="code" name="code" type="text" autocomplete="one-time-code"
          required maxlength="20" autofocus>
        <p><button type="submit">Verify</button></p>
      </form>
      <p><a href="/login">Start again</a></p>
    `,
  };
}

/** Enrolment: the QR code (an SVG the server drew), the secret, a code. */
export function totpEnrolPage(input: {
  email: string;
  qrSvg: Html;
  secret: string;
  error: string | null;
}): PageContent {
  return {
    title: "Set up two-factor authentication",
    email: input.email,
    body: html`
      <h1>Set up two-factor authentication</h1>
      <p>Scan this code with your authenticator app:</p>
      <div id="qr">${input.qrSvg}</div>
      <p>Or type this key: <code id="totp-secret">${input.secret}</code></p>
      ${input.error
        ? html`<p class="flash alert" role="alert">${input.error}</p>`
        : ""}
      <form method="post" action="/account/totp/confirm">
        <label for="code">Code from the app</label>
        <input id="code" name="code" type="text" inputmode="numeric"
          autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
        <p><button type="submit">Turn on</button></p>
      </form>
    `,
  };
}

/** The recovery codes, shown once. */
export function recoveryCodesPage(
  input: { email: string; codes: string[] },
): PageContent {
  return {
    title: "Recovery codes",
    email: input.email,
    body: html`
      <h1>Two-factor authentication is on</h1>
      <p>Keep these recovery codes somewhere safe. Each works once, in place
        of a code, if you lose your authenticator. They are not shown again.</p>
      <ul id="recovery-codes">${input.codes.map((c) =>
        html`<li><code>${c}</code></li>`
      )}</ul>
      <p><a href="/account">Back to your account</a></p>
    `,
  };
}

/**
 * The account page's TOTP section (an item of its Security group): off, with
 * the way to set it up, or on, with the way to turn it off. A form that asks
 * for more than a click opens behind its name.
 */
export function totpSection(
  input: {
    enabled: boolean;
    recoveryCodesLeft: number;
    /** No password field: the account has none (it re-authenticates). */
    passwordless?: boolean;
  },
): Html {
  const passwordless = input.passwordless ?? false;
  const password = (id: string) => currentPasswordField(id, passwordless);
  if (!input.enabled) {
    const setUp = html`
      <form method="post" action="/account/totp">
        ${password("totp-setup-password")}
        <p><button type="submit">Set up an authenticator app</button></p>
      </form>
    `;
    return html`
      <section id="two-factor" class="item" aria-labelledby="two-factor-h">
        <h3 id="two-factor-h">Two-factor authentication</h3>
        <p class="state" id="totp-off">Off.</p>
        ${passwordless ? setUp : html`
          <details class="action">
            <summary>Set up an authenticator app</summary>
            ${setUp}
          </details>
        `}
      </section>
    `;
  }
  return html`
    <section id="two-factor" class="item" aria-labelledby="two-factor-h">
      <h3 id="two-factor-h">Two-factor authentication</h3>
      <p class="state" id="totp-on">On. ${input
        .recoveryCodesLeft} recovery codes left.</p>
      <details class="action">
        <summary>Turn off</summary>
        <form method="post" action="/account/totp/disable">
          ${password("totp-password")}
          <label for="totp-code">Code or recovery code</label>
          <input id="totp-code" name="code" type="text"
            autocomplete="one-time-code" required>
          <p><button type="submit">Turn off two-factor authentication</button></p>
        </form>
      </details>
    </section>
  `;
}

/** The TOTP module's pages and its section of `/account`. */
export interface TotpViews {
  /** `GET /login/totp` and a refused code. */
  login: typeof totpLoginPage;
  /** Enrolment: the QR code and the code to confirm it. */
  enrol: typeof totpEnrolPage;
  /** The recovery codes, shown once. */
  recoveryCodes: typeof recoveryCodesPage;
  /** The section of `/account`. */
  section: typeof totpSection;
}

/** The TOTP module's default views. */
export const defaultTotpViews: TotpViews = {
  login: totpLoginPage,
  enrol: totpEnrolPage,
  recoveryCodes: recoveryCodesPage,
  section: totpSection,
};
