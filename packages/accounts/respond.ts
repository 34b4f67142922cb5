/**
 * Small response helpers shared by the routes.
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";
import type { PageContent } from "./views/auth/layout.ts";

/**
 * An HTML page.
 *
 * @param body The page.
 * @param status The status; default 200.
 * @param cookies `Set-Cookie` values to add.
 * @returns The response.
 */
export function page(
  body: string,
  status = 200,
  cookies: (string | null)[] = [],
): Response {
  const headers = new Headers({
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
  });
  for (const c of cookies) if (c) headers.append("set-cookie", c);
  return new Response(body, { status, headers });
}

/**
 * A JSON answer.
 *
 * @param data The value.
 * @param status The status; default 200.
 * @param headers Extra headers.
 * @returns The response.
 */
export function json(
  data: unknown,
  status = 200,
  headers: HeadersInit = {},
): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json; charset=utf-8");
  h.set("cache-control", "no-store");
  return new Response(JSON.stringify(data), { status, headers: h });
}

/**
 * A 303 redirect.
 *
 * @param location A local path.
 * @param cookies `Set-Cookie` values to add.
 * @returns The response.
 */
export function redirect(
  location: string,
  cookies: (string | null)[] = [],
): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) if (c) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

/**
 * 429 with `Retry-After`, as JSON or a small page.
 *
 * @param req The request.
 * @param retryAfter Seconds to wait.
 * @returns The response.
 */
export function tooManyRequests(req: Request, retryAfter: number): Response {
  return errorResponse(
    req,
    429,
    "rate_limited",
    "Too many attempts, try again later",
    { "retry-after": String(Math.max(1, Math.ceil(retryAfter))) },
  );
}

/**
 * A page of the app: `content` framed by the app's layout, as HTML.
 *
 * @param ctx The app (its views).
 * @param content The page's title, user, flash and body.
 * @param status The status; default 200.
 * @param cookies `Set-Cookie` values to add.
 * @returns The response.
 */
export function render(
  ctx: { views: { layout(content: PageContent): string } },
  content: PageContent,
  status = 200,
  cookies: (string | null)[] = [],
): Response {
  return page(ctx.views.layout(content), status, cookies);
}

/**
 * Sends `Referrer-Policy: strict-origin`: pages whose URL holds a token
 * never pass the path on, yet their forms keep a real `Origin` header
 * (`no-referrer` would make it `null`, which the cross-origin check
 * refuses in browsers without `Sec-Fetch-Site`).
 *
 * @param res The response.
 * @returns The same response.
 */
export function strictOrigin(res: Response): Response {
  res.headers.set("referrer-policy", "strict-origin");
  return res;
}
