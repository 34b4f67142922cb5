// Copied from packages/accounts/views/auth/confirm_verify.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The page `GET /verify` shows to any browser that is not the account's own
 * signed-in one: confirm with the account's password, or "this wasn't me".
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import { accountPasswordField } from "./field.ts";
import type { PageContent } from "./layout.ts";

/** What {@linkcode confirmVerifyPage} needs. */
export interface ConfirmVerifyInput {
  /** The verification token (posted back, never consumed by the GET). */
  token: string;
  /**
   * `password`: the account has one to confirm with; `none`: it has none
   * (only "this wasn't me" and a set-a-password link); `verified`: the
   * address is already proven, one button.
   */
  mode: "password" | "none" | "verified";
  /** The signed-in user's email (of this browser), or `null`. */
  email: string | null;
  /** An error to show (a wrong password), or `null`. */
  error?: string | null;
}

/**
 * Renders the confirmation page. Confirming needs the password of the
 * account registered with the address (the same party holds both, so the
 * password and its sessions stay); "This wasn't me" proves the address
 * and removes every password, sign-in method and session someone else set
 * up, then mails a link to set a password.
 *
 * @param input The token, the account's mode and the user.
 * @returns The page.
 */
export function confirmVerifyPage(input: ConfirmVerifyInput): PageContent {
  const token = html`<input type="hidden" name="token" value="${input.token}">`;
  const confirm = input.mode === "password"
    ? html`<p>Enter the password you chose when you registered with this address to confirm it.</p>
<form method="post" action="/verify">
  ${token}
  ${accountPasswordField(input.error ?? null)}
  <p><button type="submit" id="confirm">Confirm my email address</button></p>
</form>`
    : input.mode === "verified"
    ? html`<form method="post" action="/verify">
  ${token}
  <p><button type="submit" id="confirm">Confirm my email address</button></p>
</form>`
    : html`<p>This account has no password yet. Confirming sends you a link to set one.</p>`;
  const disown = input.mode === "verified"
    ? html``
    : html`<h2>Didn't register?</h2>
<p>If you did not create an account with this address, someone else did. This removes the password, every sign-in method and every session they set up, and mails you a link to set your own password.</p>
<form method="post" action="/verify">
  ${token}
  <input type="hidden" name="disown" value="1">
  <p><button type="submit" id="disown">${
      input.mode === "none" ? "Confirm and set a password" : "This wasn't me"
    }</button></p>
</form>`;
  return {
    title: "Confirm your email address",
    email: input.email,
    body: html`<h1>Confirm your email address</h1>
${confirm}
${disown}`,
  };
}
