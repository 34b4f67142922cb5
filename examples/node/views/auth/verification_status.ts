// Copied from packages/accounts/views/auth/verification_status.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The line under the address at the top of `/account`: verified, or not yet
 * with a button for a new link.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";

/**
 * Renders whether the address is verified.
 *
 * @param input Whether it is.
 * @returns The markup.
 */
export function verificationStatus(input: { verified: boolean }): Html {
  return input.verified
    ? html`<p id="verified">Your email address is verified.</p>`
    : html`
      <p id="unverified">Your email address is not verified yet.</p>
      <form method="post" action="/verify/resend">
        <input type="hidden" name="next" value="/account">
        <button type="submit">Send a new verification link</button>
      </form>
    `;
}
