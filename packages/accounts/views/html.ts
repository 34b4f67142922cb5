/**
 * The views' template tag: Hono's `html` (`hono/html`), which escapes every
 * interpolated value except markup it built itself (nested templates, and
 * `raw`), joins arrays, and renders `null`, `undefined` and booleans as
 * nothing. The views are synchronous, so {@linkcode html} gives the markup
 * itself, never a promise.
 *
 * @module
 */
import { html as honoHtml, raw as honoRaw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** Markup that is already safe: built by {@linkcode html} or {@linkcode raw}. */
export type Html = HtmlEscapedString;

/**
 * Markup taken as it is, unescaped: only for markup the app built itself
 * (an inline SVG of its own, a QR code), never for anything a user typed.
 *
 * @example Usage
 * ```ts
 * import { html, raw } from "./html.ts";
 * String(html`<p>${raw("<b>bold</b>")}</p>`); // "<p><b>bold</b></p>"
 * ```
 *
 * @param markup The markup.
 * @returns It, marked safe.
 */
export function raw(markup: string): Html {
  return honoRaw(markup);
}

/**
 * Builds markup (Hono's `html`, for synchronous values).
 *
 * @example Usage
 * ```ts
 * import { html } from "./html.ts";
 * String(html`<p>${"<b>"}</p>`); // "<p>&lt;b&gt;</p>"
 * ```
 *
 * @param strings The template's text.
 * @param values The interpolated values.
 * @returns The markup.
 * @throws {TypeError} When a value is a promise (await it first).
 */
export function html(
  strings: TemplateStringsArray,
  ...values: unknown[]
): Html {
  const out = honoHtml(strings, ...values);
  if (out instanceof Promise) {
    throw new TypeError("A view got a promise: await it before rendering");
  }
  return out;
}
