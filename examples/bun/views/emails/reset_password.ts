// Copied from packages/accounts/views/emails/reset_password.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The email that carries a password-reset link.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import type { EmailContent } from "./email_content.ts";

/**
 * Renders the password-reset email.
 *
 * @param input The link (built from the configured origin, never `Host`).
 * @returns Subject, HTML and text.
 */
export function resetPasswordEmail(input: { link: string }): EmailContent {
  const subject = "Reset your password";
  const view = String(html`
    <!doctype html>
    <html lang="en">
      <body>
        <p>Choose a new password by opening this link within one hour:</p>
        <p><a href="${input.link}">Choose a new password</a></p>
        <p>If you did not ask for this, ignore this email: your password stays as it is.</p>
      </body>
    </html>
  `);
  const text = `Choose a new password by opening this link within one hour:

${input.link}

If you did not ask for this, ignore this email: your password stays as it is.
`;
  return { subject, view, text };
}

/**
 * Renders the email that sets a first password on an account that has
 * none (one made by signing in with a provider); the link is a
 * password-reset link.
 *
 * @param input The link (built from the configured origin, never `Host`).
 * @returns Subject, HTML and text.
 */
export function setPasswordEmail(input: { link: string }): EmailContent {
  const subject = "Set a password";
  const view = String(html`
    <!doctype html>
    <html lang="en">
      <body>
        <p>Choose a password for your account by opening this link within one hour:</p>
        <p><a href="${input.link}">Choose a password</a></p>
        <p>Setting it signs out every session. If you did not ask for this, ignore this email: nothing changes.</p>
      </body>
    </html>
  `);
  const text =
    `Choose a password for your account by opening this link within one hour:

${input.link}

Setting it signs out every session. If you did not ask for this, ignore this email: nothing changes.
`;
  return { subject, view, text };
}
