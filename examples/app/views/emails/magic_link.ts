// Copied from packages/accounts/views/emails/magic_link.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The email that carries a sign-in link.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import type { EmailContent } from "./email_content.ts";

/**
 * Renders the sign-in email.
 *
 * @param input The link (built from the configured origin, never `Host`).
 * @returns Subject, HTML and text.
 */
export function magicLinkEmail(input: { link: string }): EmailContent {
  const subject = "Your sign-in link";
  const view = String(html`
    <!doctype html>
    <html lang="en">
      <body>
        <p>Sign in by opening this link within 15 minutes. It works once.</p>
        <p><a href="${input.link}">Sign in</a></p>
        <p>If you did not ask for it, ignore this email: nobody can use it without your mailbox.</p>
      </body>
    </html>
  `);
  const text = `Sign in by opening this link within 15 minutes. It works once.

${input.link}

If you did not ask for it, ignore this email: nobody can use it without your mailbox.
`;
  return { subject, view, text };
}
