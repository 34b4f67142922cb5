/**
 * Uses portcullis middleware (`identityMiddleware`, `requireAuth()`, …) as
 * Hono middleware. Hono hands out the original `Request` as `c.req.raw`,
 * so the identity the middleware attaches is what `currentUser(c.req.raw)`
 * and the gates read in a Hono handler.
 *
 * The adapter also sets two typed context variables,
 * {@linkcode PortcullisVariables}: `c.get("identity")` and `c.get("user")`
 * once you declare them, with `new Hono<{ Variables: PortcullisVariables }>()`.
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
 * import type { PortcullisVariables } from "@portcullis/auth/adapters/hono";
 *
 * const app = new Hono<{ Variables: PortcullisVariables }>();
 * app.use(honoMiddleware(identityMiddleware(sessions)));
 * app.get("/me", honoMiddleware(requireAuth()), (c) => c.json({ subject: c.get("user") }));
 * app.get("/raw", (c) => c.json({ subject: currentUser(c.req.raw) })); // the same
 * ```
 *
 * @module
 */
import type { Identity } from "../../session/session_manager.ts";
import { currentIdentity } from "../current_identity.ts";
import type { Middleware, Next } from "../middleware.ts";

// Re-exported so that this entry's documentation is whole.
export type { Identity, Middleware, Next };

/**
 * The context variables {@linkcode honoMiddleware} sets before the route
 * runs. Declare them to read them typed:
 * `new Hono<{ Variables: PortcullisVariables }>()` (or merge them into
 * your own `Variables` type).
 *
 * They hold the identity as the request arrived. After `signIn` or
 * `signOut` in the same handler, read `currentUser(c.req.raw)`, which
 * follows the change.
 */
export interface PortcullisVariables {
  /** The session's identity, or `null` when anonymous (or the store could not tell). */
  identity: Identity | null;
  /** The subject id of {@linkcode PortcullisVariables.identity}, or `null`. */
  user: string | null;
}

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
  /**
   * Hono's `c.set`: the adapter sets {@linkcode PortcullisVariables}.
   *
   * @param key The variable.
   * @param value Its value.
   */
  set?(key: keyof PortcullisVariables, value: unknown): void;
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
 * Before the route runs, `c.set("identity", …)` and `c.set("user", …)`
 * record what the middleware resolved (see {@linkcode PortcullisVariables}).
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
        const identity = currentIdentity(raw);
        c.set?.("identity", identity);
        c.set?.("user", identity?.subject ?? null);
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
