// Copied from packages/accounts/views/auth/magic_link.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The sign-in link's pages: the form on `/login` that asks for a link
 * (and, on its own, the page a refused address gets back), and the page
 * the mailed link opens, whose form posts the token.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";
import { accountPasswordField, field } from "./field.ts";
import type { PageContent } from "./layout.ts";

/**
 * The form that asks for a sign-in link (on the page of a refused
 * address, and under {@linkcode magicLinkLogin}'s heading).
 *
 * @param input Where to go after signing in, the email typed and an error.
 * @returns The markup.
 */
export function magicLinkForm(
  input: { next: string; email?: string; error?: string | null },
): Html {
  return html`<form method="post" action="/magic-link">
  <input type="hidden" name="next" value="${input.next}">
  ${
    field({
      id: "magic-link-email",
      name: "email",
      label: "Email",
      type: "email",
      autocomplete: "username",
      value: input.email,
      error: input.error ?? null,
    })
  }
  <p><button type="submit" id="magic-link">Email me a sign-in link</button></p>
</form>`;
}

/**
 * The piece of `/login` under the password form: a heading and the form.
 *
 * @param next Where to go after signing in.
 * @returns The markup.
 */
export function magicLinkLogin(next: string): Html {
  return html`<h2>Or get a sign-in link by email</h2>
${magicLinkForm({ next })}`;
}

/**
 * The page `POST /magic-link` answers when the address is not one (422).
 *
 * @param input What was typed, where to go next and the error.
 * @returns The page.
 */
export function magicLinkRequestPage(
  input: { email: string; next: string; error: string },
): PageContent {
  return {
    title: "Sign in by email",
    email: null,
    body: html`<h1>Sign in by email</h1>
${magicLinkForm(input)}
<p><a href="/login">Back to the login page</a></p>`,
  };
}

/** What {@linkcode confirmMagicLinkPage} needs. */
export interface ConfirmMagicLinkInput {
  /** The link's token (posted back, never consumed by the GET). */
  token: string;
  /** Where to go after signing in (a local path). */
  next: string;
  /**
   * `proven`: the address was proven before, one button; `session`: the
   * account's own signed-in browser, one button; `password`: the address
   * was never proven, so the account's password or "This wasn't me";
   * `none`: never proven and no password, "This wasn't me" alone.
   */
  mode: "proven" | "session" | "password" | "none";
  /** The signed-in user's email (of this browser), or `null`. */
  email: string | null;
  /** An error to show (a wrong password), or `null`. */
  error?: string | null;
}

/**
 * Renders the page a sign-in link opens. An address never proven is
 * proven by this link, so, as on the verification page, signing in needs
 * the password of the account registered with it; "This wasn't me"
 * removes every password, sign-in method and session someone else set up,
 * then signs the mailbox's owner in.
 *
 * @param input The token, the account's mode and the user.
 * @returns The page.
 */
export function confirmMagicLinkPage(
  input: ConfirmMagicLinkInput,
): PageContent {
  const hidden = html`
    <input type="hidden" name="token" value="${input.token}">
    <input type="hidden" name="next" value="${input.next}">
  `;
  const signIn = input.mode === "none"
    ? html``
    : html`<form method="post" action="/magic-link/callback">
  ${hidden}
  ${
      input.mode === "password"
        ? html`<p>This address was never confirmed. Enter the password you chose when you registered with it to sign in.</p>
  ${accountPasswordField(input.error ?? null)}`
        : html``
    }
  <p><button type="submit" id="sign-in">Sign in</button></p>
</form>`;
  const disown = input.mode === "password" || input.mode === "none"
    ? html`<h2>Didn't register?</h2>
<p>If you did not create an account with this address, someone else did. This removes the password, every sign-in method and every session they set up, and signs you in.</p>
<form method="post" action="/magic-link/callback">
  ${hidden}
  <input type="hidden" name="disown" value="1">
  <p><button type="submit" id="disown">${
      input.mode === "none" ? "Sign in" : "This wasn't me"
    }</button></p>
</form>`
    : html``;
  return {
    title: "Sign in",
    email: input.email,
    body: html`<h1>Sign in</h1>
${signIn}
${disown}`,
  };
}
