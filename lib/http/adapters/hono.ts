/**
 * Uses portcullis middleware (`identityMiddleware`, `requireAuth()`, …) as
 * Hono middleware. Hono hands out the original `Request` as `c.req.raw`,
 * so the identity the middleware attaches is what `currentUser(c.req.raw)`
 * and the gates read in a Hono handler.
 *
 * No `hono` import: the context is typed by the shape used, so this file
 * loads nothing and works with any Hono 4 release.
 *
 * @example Usage
 * ```ts ignore
 * import { Hono } from "hono";
 * import { currentUser, identityMiddleware, requireAuth } from "@portcullis/auth";
 * import { honoMiddleware } from "@portcullis/auth/adapters/hono";
 *
 * const app = new Hono();
 * app.use(honoMiddleware(identityMiddleware(sessions)));
 * app.get("/me", honoMiddleware(requireAuth()), (c) => c.json({ subject: currentUser(c.req.raw) }));
 * ```
 *
 * @module
 */
import type { Middleware, Next } from "../middleware.ts";

// Re-exported so that this entry's documentation is whole.
export type { Middleware, Next };

/** The part of Hono's `Context` the adapter uses. */
export interface HonoContextLike {
  /** The request; `raw` is the original `Request`. */
  req: { raw: Request };
  /** The bindings (Cloudflare's `env`), passed on to the middleware. */
  env?: unknown;
  /** The response so far; the adapter replaces it when the middleware changed it. */
  res: Response | undefined;
  /** Cloudflare's execution context; Hono throws when there is none. */
  readonly executionCtx?: unknown;
}

/** Hono's `next`. */
export type HonoNext = () => Promise<void>;

/** A Hono middleware, structurally. */
export type HonoMiddleware = (
  c: HonoContextLike,
  next: HonoNext,
) => Promise<Response | void>;

/**
 * Wraps a portcullis middleware as a Hono middleware.
 *
 * When the middleware answers itself (401, 303, 403 for a cross-site
 * request), Hono gets that answer and the route never runs. When it calls
 * `next`, the route runs; a response the middleware changed afterwards
 * (such as a renewed session cookie) replaces `c.res`, with every header of
 * the middleware's response kept.
 *
 * The middleware receives `c.env` and, where Hono has one, the execution
 * context, as its extra arguments, like a Workers handler.
 *
 * @param middleware A portcullis middleware.
 * @returns The Hono middleware.
 * @throws {TypeError} At request time, when the middleware passes `next`
 * a different `Request` (Hono keeps `c.req.raw`, so identity attached to
 * another object would be lost).
 */
export function honoMiddleware(middleware: Middleware): HonoMiddleware {
  return async (c, next) => {
    const raw = c.req.raw;
    let reached = false;
    let executionCtx: unknown;
    try {
      executionCtx = c.executionCtx;
    } catch {
      executionCtx = undefined;
    }
    const res = await middleware(
      raw,
      async (req?: Request) => {
        if (req !== undefined && req !== raw) {
          throw new TypeError(
            "honoMiddleware needs next() to get the same Request: Hono keeps c.req.raw",
          );
        }
        reached = true;
        await next();
        return c.res ?? new Response(null, { status: 404 });
      },
      c.env,
      executionCtx,
    );
    if (!reached) return res;
    if (res !== c.res) {
      // Hono's setter merges the old response's headers into the new one,
      // Set-Cookie included; clearing first keeps exactly the new headers.
      c.res = undefined;
      c.res = res;
    }
  };
}
