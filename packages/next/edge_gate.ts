/**
 * The gate for Next.js `middleware.ts` on the edge runtime.
 *
 * @module
 */
import { compose, type Middleware, requireAuth } from "@portcullis/auth";
import type { RequireAuthOptions } from "@portcullis/auth/http";

/** Options of {@linkcode edgeGate}: `redirectTo` and the protected paths. */
export interface EdgeGateOptions extends RequireAuthOptions {
  /**
   * The paths that need a signed-in visitor: a path matches a prefix when
   * it equals it or continues it after a `/` (`/dashboard` covers
   * `/dashboard/notes`, not `/dashboards`).
   */
  protect: readonly string[];
}

/**
 * What `middleware.ts` calls: the request, and a function that makes
 * Next's pass-through answer (`() => NextResponse.next()`).
 */
export type EdgeGate = (
  req: Request,
  pass: () => Response,
) => Promise<Response>;

/**
 * Builds the edge middleware's gate. For every request it runs the
 * `identityMiddleware` you give it, made over a **stateless**
 * `SessionManager` (`store: null`) with the Node side's secret: unsafe
 * cross-origin requests get 403 (on every path, protected or not), and a
 * request to a protected path without a validly signed session gets
 * `requireAuth()`'s answer (303 to the login page for a browser, 401 for an
 * API client). Otherwise it returns `pass()`.
 *
 * The edge runtime cannot reach a Node-side store, so this gate does not
 * see revocations: a signed-out token still passes here. The route
 * handlers, pages and actions resolve again with the store
 * ({@linkcode nextAuth}), and that check refuses it. The gate keeps
 * anonymous traffic and forged requests away from them cheaply.
 *
 * @param identity `identityMiddleware(statelessSessions, { crossOrigin: { appOrigin } })`.
 * @param options See {@linkcode EdgeGateOptions}.
 * @returns The gate.
 * @throws {TypeError} When a protected path does not start with `/`.
 *
 * @example Usage
 * ```ts ignore
 * // middleware.ts
 * import { NextResponse, type NextRequest } from "next/server";
 * import { identityMiddleware, SecretProvider, SessionManager } from "@portcullis/auth";
 * import { edgeGate } from "@portcullis/next";
 *
 * const sessions = new SessionManager({
 *   secret: SecretProvider.fromValue(process.env.AUTH_SECRET!),
 *   store: null, // the edge cannot reach the store: signatures only
 * });
 * const gate = edgeGate(
 *   identityMiddleware(sessions, { crossOrigin: { appOrigin: process.env.APP_ORIGIN } }),
 *   { protect: ["/dashboard", "/api/notes"] },
 * );
 * export function middleware(req: NextRequest) {
 *   return gate(req, () => NextResponse.next());
 * }
 * ```
 */
export function edgeGate(
  identity: Middleware,
  options: EdgeGateOptions,
): EdgeGate {
  for (const path of options.protect) {
    if (!path.startsWith("/")) {
      throw new TypeError(
        `A protected path must start with "/": received "${path}"`,
      );
    }
  }
  const prefixes = options.protect.map((p) =>
    p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p
  );
  const gate = requireAuth(options);
  const protectedOnly: Middleware<[() => Response]> = (req, next) =>
    isProtected(new URL(req.url).pathname, prefixes)
      ? gate(req, next)
      : next(req);
  const run = compose(
    [identity, protectedOnly],
    (_req, pass: () => Response) => pass(),
  );
  return async (req, pass) => absoluteLocation(await run(req, pass), req.url);
}

// Next's middleware refuses a relative `Location` ("Invalid URL").
function absoluteLocation(res: Response, base: string): Response {
  const location = res.headers.get("location");
  if (location === null || /^[a-z][a-z0-9+.-]*:/i.test(location)) return res;
  const headers = new Headers(res.headers);
  headers.set("location", new URL(location, base).href);
  return new Response(res.body, {
    status: res.status,
    statusText: res.statusText,
    headers,
  });
}

function isProtected(path: string, prefixes: readonly string[]): boolean {
  for (const prefix of prefixes) {
    if (prefix === "/" || path === prefix || path.startsWith(`${prefix}/`)) {
      return true;
    }
  }
  return false;
}
