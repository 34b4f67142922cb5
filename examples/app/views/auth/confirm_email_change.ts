// Copied from packages/accounts/views/auth/confirm_email_change.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * `GET /account/email/confirm?token=…` from anywhere but the owner's
 * signed-in browser: a button that confirms.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import { accountPasswordField } from "./field.ts";
import type { PageContent } from "./layout.ts";

/**
 * Renders the confirmation form of an email change: the account's password
 * proves that the one confirming is the one who asked.
 *
 * @param input The token, the signed-in user's email (or `null`), and an
 * error to show.
 * @returns The page.
 */
export function confirmEmailChangePage(
  input: { token: string; email: string | null; error?: string },
): PageContent {
  return {
    title: "Confirm your new email address",
    email: input.email,
    body: html`
      <h1>Confirm your new email address</h1>
      <p>The account that asked for this address moves to it. Enter that
      account's password to confirm. If you did not ask for this, ignore the
      message: nothing changes.</p>
      <form method="post" action="/account/email/confirm">
        <input type="hidden" name="token" value="${input.token}">
        ${accountPasswordField(input.error ?? null)}
        <p><button type="submit" id="confirm">Use this address</button></p>
      </form>
    `,
  };
}
