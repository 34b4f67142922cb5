/**
 * `GET /login` and a failed `POST /login`.
 *
 * @module
 */
import { type Html, html } from "../html.ts";
import type { FlashMessage, PageContent } from "./layout.ts";

/** What {@linkcode loginPage} needs. */
export interface LoginInput {
  /** Where to go after signing in (already checked to be a local path). */
  next: string;
  /** An error to show, or `null`. */
  error: string | null;
  /** A flash message to show once. */
  flash: FlashMessage | null;
  /** Other ways to sign in (provider links, passkeys), or `null`. */
  extra?: Html | null;
}

/**
 * Renders the login form. The email is not echoed after a failure, so an
 * unknown email and a wrong password answer the same bytes.
 *
 * @param input Where to go next, and the error.
 * @returns The page.
 */
export function loginPage(input: LoginInput): PageContent {
  return {
    title: "Log in",
    email: null,
    flash: input.flash,
    body: html`
      <h1>Log in</h1>
      ${input.error
        ? html`<p class="flash alert" role="alert">${input.error}</p>`
        : ""}
      <form method="post" action="/login">
        <input type="hidden" name="next" value="${input.next}">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required>
        <label for="password">Password</label>
        <input id="password" name="password" type="password"
          autocomplete="current-password" required>
        <p><button type="submit">Log in</button></p>
      </form>
      <p><a href="/password/forgot">Forgot your password?</a></p>
      ${input.extra ?? ""}
      <p>No account? <a href="/register">Register</a>.</p>
    `,
  };
}
