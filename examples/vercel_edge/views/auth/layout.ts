// Copied from packages/accounts/views/auth/layout.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The page frame every page renders into.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";

/** A one-time message shown at the top of the next page. */
export interface FlashMessage {
  /** `"notice"` for good news, `"alert"` for problems. */
  kind: "notice" | "alert";
  /** The text. */
  message: string;
}

/**
 * A page before the layout frames it: what every page view answers, and what
 * {@linkcode layout} takes. The package frames each page with the app's
 * layout, so a replaced layout frames every page, the modules' included.
 */
export interface PageContent {
  /** The page title. */
  title: string;
  /** The signed-in user's email, or `null`. */
  email: string | null;
  /** A flash message to show once. */
  flash?: FlashMessage | null;
  /** The page's content. */
  body: Html;
}

/**
 * Renders a complete HTML page.
 *
 * @param input The title, the user, the flash and the content.
 * @returns The page.
 */
export function layout(input: PageContent): string {
  const nav = input.email === null
    ? html`<a href="/login">Log in</a> <a href="/register">Register</a>`
    : html`
      <span>${input.email}</span> <a href="/account">Account</a>
            <form method="post" action="/logout"
        class="inline"><button type="submit">Log out</button></form>
    `;
  const flash = input.flash
    ? html`<p class="flash ${input.flash.kind}" role="status">${input.flash.message}</p>`
    : "";
  return String(html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${input.title}</title>
        <link rel="stylesheet" href="/style.css">
      </head>
      <body>
        <nav><a href="/">Home</a> ${nav}</nav>
        <main>
    ${flash}
    ${input.body}
        </main>
      </body>
    </html>
  `);
}
