/**
 * Mounts a handler of the form `(ctx, req, param)` as a Hono route handler:
 * the app's parts, the request (`c.req.raw`, which carries the identity the
 * portcullis adapter resolved) and the path's one `:param`, if any; the form
 * that also passes a module's settings; and the gate of the routes for
 * signed-in users.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { requireAuthenticated } from "@portcullis/auth";
import type { ModuleContext } from "./context.ts";
import type { AccountsEnv, AccountsHonoContext } from "./module.ts";

/** A route handler: the app, the request, and the `:param` of its path. */
export type RouteHandler = (
  ctx: ModuleContext,
  req: Request,
  param: string,
) => Promise<Response> | Response;

/**
 * A module's route handler: the app, the module's settings, the request and
 * the `:param` of its path.
 */
export type ModuleHandler<S> = (
  ctx: ModuleContext,
  settings: S,
  req: Request,
  param: string,
) => Promise<Response> | Response;

/** A handler adapted to Hono. */
export type HonoHandler = (
  c: AccountsHonoContext,
) => Promise<Response> | Response;

/**
 * Adapts a {@linkcode RouteHandler} to Hono.
 *
 * @example Usage
 * ```ts ignore
 * routes.get("/hello", handle(ctx, (_ctx, req) => new Response(req.url)));
 * ```
 *
 * @param ctx The app.
 * @param handler The handler.
 * @returns The Hono handler.
 */
export function handle(ctx: ModuleContext, handler: RouteHandler): HonoHandler {
  return (c) => handler(ctx, c.req.raw, Object.values(c.req.param())[0] ?? "");
}

/**
 * Adapts a module's handlers to Hono, each given the module's settings.
 *
 * @example Usage
 * ```ts ignore
 * const on = handleWith(ctx, settings);
 * routes.get("/login/totp", on(totpForm));
 * ```
 *
 * @param ctx The app.
 * @param settings What the module's factory and `setup` built.
 * @returns A function that adapts one {@linkcode ModuleHandler}.
 */
export function handleWith<S>(
  ctx: ModuleContext,
  settings: S,
): (handler: ModuleHandler<S>) => HonoHandler {
  return (handler) => (c) =>
    handler(ctx, settings, c.req.raw, Object.values(c.req.param())[0] ?? "");
}

/**
 * The gate of routes for signed-in users only: 401 (JSON or a small page)
 * without a session, before the route runs (`requireAuthenticated`). The
 * handler then reads the user with `currentUser(req)!`.
 *
 * @example Usage
 * ```ts ignore
 * routes.post("/account/totp", signedIn, on(startTotp));
 * ```
 */
export const signedIn: MiddlewareHandler<AccountsEnv> = async (c, next) =>
  requireAuthenticated(c.req.raw) ?? await next();
