/**
 * `GET /password/reset?token=…` and a refused `POST /password/reset`.
 *
 * @module
 */
import { html } from "../html.ts";
import { field } from "./field.ts";
import type { PageContent } from "./layout.ts";

/** What {@linkcode resetPasswordPage} needs. */
export interface ResetPasswordInput {
  /** The token from the link (posted back in a hidden field). */
  token: string;
  /** The account's address, for password managers (`autocomplete=username`). */
  email: string;
  /** Why the last password was refused, or `null`. */
  error: string | null;
  /**
   * The fewest characters the account's new password may have: 15 when
   * it is the only factor, 8 with a second factor; default 15.
   */
  minPasswordLength?: number;
}

/**
 * Renders the new-password form.
 *
 * @param input The token, the account's address and the error.
 * @returns The page.
 */
export function resetPasswordPage(input: ResetPasswordInput): PageContent {
  const min = input.minPasswordLength ?? 15;
  return {
    title: "Choose a new password",
    email: null,
    body: html`
      <h1>Choose a new password</h1>
      <form method="post" action="/password/reset">
        <input type="hidden" name="token" value="${input.token}">
        <input type="text" name="username" value="${input.email}"
          autocomplete="username" hidden readonly>
        ${field({
          id: "password",
          name: "password",
          label: "New password",
          type: "password",
          autocomplete: "new-password",
          minlength: min,
          hint:
            `At least ${min} characters. Every session of the account is signed out.`,
          error: input.error,
        })}
        <p><button type="submit" id="reset">Set the new password</button></p>
      </form>
    `,
  };
}
