// Copied from packages/accounts/views/auth/message.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * A page with one message: a refused verification link, an error.
 *
 * @module
 */
import { html } from "@portcullis/accounts/views";
import type { PageContent } from "./layout.ts";

/** What {@linkcode messagePage} needs. */
export interface MessageInput {
  /** The heading. */
  title: string;
  /** The explanation. */
  message: string;
  /** The signed-in user's email, or `null`. */
  email: string | null;
}

/**
 * Renders a page with a heading and one paragraph.
 *
 * @param input The heading, the text and the user.
 * @returns The page.
 */
export function messagePage(input: MessageInput): PageContent {
  return {
    title: input.title,
    email: input.email,
    body: html`<h1>${input.title}</h1>
<p>${input.message}</p>
<p><a href="/">Back to the home page</a></p>`,
  };
}
