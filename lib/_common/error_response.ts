/**
 * Error answers: JSON for clients that accept it, a small HTML page otherwise.
 *
 * @module
 */

/**
 * Builds an error response: `{ "error": code, "message": message }` when the
 * request accepts JSON (or any type), a small HTML page when it asks for
 * HTML. Never includes a stack trace, a token or a secret.
 *
 * @param req The request (its `Accept` header decides the form).
 * @param status The status code.
 * @param code A short machine-readable code, for example `"unauthenticated"`.
 * @param message A sentence for people.
 * @param headers Extra headers (`WWW-Authenticate`, `Retry-After`, …).
 * @returns The response.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorResponse } from "@portcullis/auth";
 * const res = errorResponse(new Request("https://example.com/"), 401, "unauthenticated", "Sign in first");
 * assert.equal(res.status, 401);
 * ```
 */
export function errorResponse(
  req: Request,
  status: number,
  code: string,
  message: string,
  headers?: HeadersInit,
): Response {
  const h = new Headers(headers);
  h.set("cache-control", "no-store");
  if (wantsHtml(req)) {
    h.set("content-type", "text/html; charset=utf-8");
    const title = escapeHtml(`${status} ${message}`);
    return new Response(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
        `<body><h1>${escapeHtml(message)}</h1><p>Error: ${
          escapeHtml(code)
        }</p></body></html>\n`,
      { status, headers: h },
    );
  }
  h.set("content-type", "application/json; charset=utf-8");
  return new Response(JSON.stringify({ error: code, message }), {
    status,
    headers: h,
  });
}

/**
 * Whether the client prefers HTML: its `Accept` names `text/html` and does
 * not put `application/json` first.
 *
 * @param req The request.
 * @returns `true` for browsers navigating.
 *
 * @example Usage
 * ```ts
 * import { wantsHtml } from "@portcullis/auth/http";
 * wantsHtml(new Request("https://example.com/", { headers: { accept: "text/html" } })); // true
 * ```
 */
export function wantsHtml(req: Request): boolean {
  const accept = req.headers.get("accept") ?? "";
  const html = accept.indexOf("text/html");
  if (html < 0) return false;
  const json = accept.indexOf("application/json");
  return json < 0 || html < json;
}

/**
 * Escapes text for HTML element content and quoted attribute values.
 *
 * @param text Any text.
 * @returns The escaped text.
 *
 * @example Usage
 * ```ts
 * import { escapeHtml } from "@portcullis/auth/http";
 * escapeHtml("<a href='x'>"); // "&lt;a href=&#39;x&#39;&gt;"
 * ```
 */
export function escapeHtml(text: string): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * The one answer when the session store (or a store a gate depends on)
 * cannot tell: 503 with `Retry-After`, never the protected resource.
 * Internal to `lib/http`.
 *
 * @param req The request (for JSON or HTML).
 * @returns The 503 response.
 */
export function storeUnavailable(req: Request): Response {
  return errorResponse(
    req,
    503,
    "session_store_unavailable",
    "Sign-in is temporarily unavailable, try again shortly",
    { "retry-after": "5" },
  );
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
