// Copied from packages/accounts/views/auth/home.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * `GET /`: who is signed in, or links to log in and register.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import type { FlashMessage, PageContent } from "./layout.ts";

/** What {@linkcode homePage} needs. */
export interface HomeInput {
  /** The signed-in user, or `null`. */
  user: { email: string; verified: boolean } | null;
  /** A flash message to show once. */
  flash: FlashMessage | null;
  /**
   * Whether the user signed in before (a login on record): "Welcome back"
   * then, and "Welcome" for an account that was just created.
   */
  returning?: boolean;
}

/**
 * Renders the home page.
 *
 * @param input The user and the flash.
 * @returns The page.
 */
export function homePage(input: HomeInput): PageContent {
  const body = input.user === null
    ? html`<h1>Welcome</h1>
<p><a href="/login">Log in</a> or <a href="/register">create an account</a>.</p>`
    : html`<h1>${input.returning ? "Welcome back" : "Welcome"}</h1>
<p>You are signed in as <strong id="email">${input.user.email}</strong>.</p>
${
      input.user.verified
        ? html`<p id="verified">Your email address is verified.</p>`
        : html`<p id="unverified">Your email address is not verified yet.</p>`
    }`;
  return {
    title: "Home",
    email: input.user?.email ?? null,
    flash: input.flash,
    body,
  };
}
