/**
 * `GET /account/email/confirm?token=…` from anywhere but the owner's
 * signed-in browser: a button that confirms.
 *
 * @module
 */
import { html } from "../html.ts";
import { layout } from "./layout.ts";

/**
 * Renders the confirmation form of an email change.
 *
 * @param input The token and the signed-in user's email (or `null`).
 * @returns The page.
 */
export function confirmEmailChangePage(
  input: { token: string; email: string | null },
): string {
  return layout({
    title: "Confirm your new email address",
    email: input.email,
    body: html`
      <h1>Confirm your new email address</h1>
      <form method="post" action="/account/email/confirm">
        <input type="hidden" name="token" value="${input.token}">
        <p>Your account's address changes to the one this link was sent to.</p>
        <p><button type="submit" id="confirm">Use this address</button></p>
      </form>
    `,
  });
}
