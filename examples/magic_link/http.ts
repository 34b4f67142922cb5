/**
 * The small HTTP helpers of the magic-link example: an escaping `html`
 * template tag, the page layout, JSON/HTML/redirect answers and a bounded
 * body reader (JSON or an HTML form).
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";
import { escapeHtml } from "@portcullis/auth/http";

/** Markup that is already escaped. */
export class Html {
  /**
   * Wraps markup that needs no escaping.
   *
   * @param value The markup.
   */
  constructor(readonly value: string) {}
  /** The markup. */
  toString(): string {
    return this.value;
  }
}

/**
 * Escapes every interpolated value that is not already {@linkcode Html}.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { html } from "./http.ts";
 * assert.equal(String(html`<p>${"<b>"}</p>`), "<p>&lt;b&gt;</p>");
 * ```
 */
export function html(
  strings: TemplateStringsArray,
  ...values: unknown[]
): Html {
  let out = strings[0];
  values.forEach((value, i) => {
    out += (value instanceof Html
      ? value.value
      : value === null || value === undefined
      ? ""
      : escapeHtml(String(value))) + strings[i + 1];
  });
  return new Html(out);
}

/**
 * The page around a body.
 *
 * @param input The title, who is signed in (`null`: nobody) and the body.
 * @returns The whole document.
 */
export function layout(
  input: { title: string; email: string | null; body: Html },
): string {
  const nav = input.email === null ? "" : html`
    <span>${input.email}</span>
    <form method="post" action="/logout"><button>Log out</button></form>
  `;
  return String(html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${input.title}</title>
      </head>
      <body>
        <nav><a href="/">Home</a>${nav}</nav>
        <main>${input.body}</main>
      </body>
    </html>
  `);
}

/** An HTML answer that no cache keeps. */
export function page(body: string, status = 200): Response {
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
    },
  });
}

/** A JSON answer that no cache keeps. */
export function json(data: unknown, status = 200): Response {
  return Response.json(data, {
    status,
    headers: { "cache-control": "no-store" },
  });
}

/** A 303 to `location`, with the cookies to set. */
export function redirect(
  location: string,
  cookies: (string | null)[] = [],
): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) if (c) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

/** 429 with `Retry-After` (seconds, at least 1). */
export function tooManyRequests(req: Request, retryAfter: number): Response {
  return errorResponse(req, 429, "rate_limited", "Too many attempts", {
    "retry-after": String(Math.max(1, Math.ceil(retryAfter))),
  });
}

/** The largest body read, in bytes. */
export const MAX_BODY_BYTES = 16 * 1024;

/** A request body's string fields, and whether it came from a form. */
export interface Body {
  /** `form` for an HTML form post, `json` otherwise. */
  kind: "form" | "json";
  /** The string fields. */
  fields: Record<string, string>;
}

/**
 * Reads a JSON object or a URL-encoded form, at most
 * {@linkcode MAX_BODY_BYTES}.
 *
 * @returns The fields, or `null` for an unreadable or oversize body.
 */
export async function readBody(req: Request): Promise<Body | null> {
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  try {
    const text = await readText(req);
    if (text === null) return null;
    if (type.startsWith("application/x-www-form-urlencoded")) {
      return {
        kind: "form",
        fields: Object.fromEntries(new URLSearchParams(text)),
      };
    }
    const data = text.trim() === "" ? {} : JSON.parse(text);
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      return null;
    }
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) {
      if (typeof v === "string") fields[k] = v;
    }
    return { kind: "json", fields };
  } catch {
    return null;
  }
}

async function readText(req: Request): Promise<string | null> {
  if (req.body === null) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
