/**
 * The views' template tag: Hono's `html` (`hono/html`), which escapes every
 * interpolated value except markup it built itself (nested templates, and
 * `raw`), joins arrays, and renders `null`, `undefined` and booleans as
 * nothing. The views are synchronous, so {@linkcode html} gives the markup
 * itself, never a promise.
 *
 * @module
 */
import { html as honoHtml, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

export { raw };

/** Markup that is already safe: built by {@linkcode html} or `raw`. */
export type Html = HtmlEscapedString;

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
