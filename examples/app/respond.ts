/**
 * Small response helpers shared by the routes.
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";

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
