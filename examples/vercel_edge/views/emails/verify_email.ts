// Copied from packages/accounts/views/emails/verify_email.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The email that carries a verification link.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";

import type { EmailContent } from "./email_content.ts";
export type { EmailContent } from "./email_content.ts";

/**
 * Renders the verification email.
 *
 * @param input The link (built from the configured origin, never `Host`).
 * @returns Subject, HTML and text.
 */
export function verifyEmail(input: { link: string }): EmailContent {
  const subject = "Verify your email address";
  const view = String(html`
    <!doctype html>
    <html lang="en">
      <body>
        <p>Confirm your email address by opening this link within 24 hours:</p>
        <p><a href="${input.link}">Verify my email address</a></p>
        <p>If you did not create an account, ignore this email.</p>
      </body>
    </html>
  `);
  const text = `Confirm your email address by opening this link within 24 hours:

${input.link}

If you did not create an account, ignore this email.
`;
  return { subject, view, text };
}
