// Copied from packages/accounts/views/auth/register.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * `GET /register` and a refused `POST /register`.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import type { PageContent } from "./layout.ts";

/** What {@linkcode registerPage} needs. */
export interface RegisterInput {
  /** The email typed before, to fill the field again. */
  email: string;
  /** An error to show, or `null`. */
  error: string | null;
  /**
   * The fewest characters of a password that is the account's only
   * factor; default 15 (NIST SP 800-63B-4).
   */
  minPasswordLength?: number;
}

/**
 * Renders the registration form.
 *
 * @param input The email typed and the error.
 * @returns The page.
 */
export function registerPage(input: RegisterInput): PageContent {
  const min = input.minPasswordLength ?? 15;
  return {
    title: "Register",
    email: null,
    body: html`
      <h1>Create an account</h1>
      ${input.error
        ? html`<p class="flash alert" role="alert">${input.error}</p>`
        : ""}
      <form method="post" action="/register">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required
          value="${input.email}">
        <label for="password">Password (at least ${min} characters)</label>
        <input id="password" name="password" type="password"
          autocomplete="new-password" required minlength="${min}">
        <p><button type="submit">Register</button></p>
      </form>
      <p>Already registered? <a href="/login">Log in</a>.</p>
    `,
  };
}
