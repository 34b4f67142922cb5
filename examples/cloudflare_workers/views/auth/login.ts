// Copied from packages/accounts/views/auth/login.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * `GET /login` and a failed `POST /login`.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";
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
  /**
   * Whether the email field also offers passkeys in the browser's autofill
   * (`autocomplete="username webauthn"`); the passkeys module's script makes
   * the conditional request that fills it.
   */
  autofill?: boolean;
  /**
   * The email as typed, to fill in again after a refusal (the same page
   * for an unknown email and a wrong password: it echoes what was typed,
   * never what the app knows).
   */
  email?: string;
}

/**
 * Renders the login form, with every other way to sign in under it. After
 * a refusal the email typed is filled in again and the password field has
 * the focus; an unknown email and a wrong password answer the same page
 * (only the echoed email differs, and it is what the person typed).
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
        <input id="email" name="email" type="email"
          autocomplete="${input.autofill ? "username webauthn" : "username"}"
          required${input.email
            ? html`
              value="${input.email}"
            `
            : ""}>
        <label for="password">Password</label>
        <input id="password" name="password" type="password"
          autocomplete="current-password" required${input.email
            ? html`
              autofocus
            `
            : ""}>
        <p><button type="submit">Log in</button></p>
      </form>
      <p><a href="/password/forgot">Forgot your password?</a></p>
      ${input.extra ?? ""}
      <p>No account? <a href="/register">Register</a>.</p>
    `,
  };
}
