// Copied from packages/accounts/views/emails/change_email.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The emails of an address change: the confirmation link to the new
 * address, and the notice to the old one.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import type { EmailContent } from "./email_content.ts";

/**
 * Renders the confirmation email sent to the new address.
 *
 * @param input The link (built from the configured origin).
 * @returns Subject, HTML and text.
 */
export function changeEmailEmail(input: { link: string }): EmailContent {
  const subject = "Confirm your new email address";
  const view = String(html`
    <!doctype html>
    <html lang="en">
      <body>
        <p>Confirm this address for your account by opening this link within 24 hours:</p>
        <p><a href="${input.link}">Use this email address</a></p>
        <p>If you did not ask for this, ignore this email.</p>
      </body>
    </html>
  `);
  const text =
    `Confirm this address for your account by opening this link within 24 hours:

${input.link}

If you did not ask for this, ignore this email.
`;
  return { subject, view, text };
}

/**
 * Renders the notice sent to the old address after the change.
 *
 * @param input The new address and the app's origin.
 * @returns Subject, HTML and text.
 */
export function emailChangedNotice(
  input: { newEmail: string; origin: string },
): EmailContent {
  const subject = "Your email address was changed";
  const view = String(html`
    <!doctype html>
    <html lang="en">
      <body>
        <p>The email address of your account at ${input.origin} is now ${input
          .newEmail}.</p>
        <p>If you did not do this, contact us at once: someone else may hold your account.</p>
      </body>
    </html>
  `);
  const text =
    `The email address of your account at ${input.origin} is now ${input.newEmail}.

If you did not do this, contact us at once: someone else may hold your account.
`;
  return { subject, view, text };
}
