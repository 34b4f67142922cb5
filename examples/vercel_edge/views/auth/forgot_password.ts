// Copied from packages/accounts/views/auth/forgot_password.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * `GET /password/forgot` and a refused `POST /password/forgot`.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import { field } from "./field.ts";
import type { PageContent } from "./layout.ts";

/**
 * Renders the form that asks for a password-reset link.
 *
 * @param input The email typed before and the error.
 * @returns The page.
 */
export function forgotPasswordPage(
  input: { email: string; error: string | null },
): PageContent {
  return {
    title: "Forgot your password?",
    email: null,
    body: html`
      <h1>Forgot your password?</h1>
      <form method="post" action="/password/forgot">
        <p>Enter the address you registered with. If it has an account, a
          link to choose a new password goes there; it works for one hour.</p>
        ${field({
          id: "email",
          name: "email",
          label: "Email",
          type: "email",
          autocomplete: "username",
          value: input.email,
          error: input.error,
        })}
        <p><button type="submit">Send me a reset link</button></p>
      </form>
      <p><a href="/login">Back to log in</a></p>
    `,
  };
}
