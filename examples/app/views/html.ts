/**
 * A tiny HTML template tag that escapes every interpolated value.
 *
 * @module
 */
import { escapeHtml } from "@portcullis/auth/http";

/** Markup that is already safe: produced by {@linkcode html}, never by hand. */
export class Html {
  /** The markup. */
  readonly value: string;

  /** @param value Markup that is already escaped. */
  constructor(value: string) {
    this.value = value;
  }

  /** @returns The markup. */
  toString(): string {
    return this.value;
  }
}

/**
 * Builds markup. Interpolated values are escaped, except {@linkcode Html}
 * values (nested templates); arrays are joined; `null`, `undefined` and
 * `false` render nothing.
 *
 * @example Usage
 * ```ts
 * import { html } from "./html.ts";
 * String(html`<p>${"<b>"}</p>`); // "<p>&lt;b&gt;</p>"
 * ```
 */
export function html(
  strings: TemplateStringsArray,
  ...values: unknown[]
): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) {
    out += render(values[i]) + strings[i + 1];
  }
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}
