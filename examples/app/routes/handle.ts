/**
 * Mounts a handler of the form `(ctx, req, param)` as a Hono route handler:
 * the app's parts, the request (`c.req.raw`, which carries the identity the
 * portcullis adapter resolved) and the path's one `:param`, if any; and the
 * gate of the routes for signed-in users.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { requireAuthenticated } from "@portcullis/auth";
import type { AppContext } from "../context.ts";
import type { AppEnv, AppHonoContext } from "../module.ts";

/** A route handler: the app, the request, and the `:param` of its path. */
export type RouteHandler = (
  ctx: AppContext,
  req: Request,
  param: string,
) => Promise<Response> | Response;

/**
 * Adapts a {@linkcode RouteHandler} to Hono.
 *
 * @param ctx The app.
 * @param handler The handler.
 * @returns The Hono handler.
 */
export function handle(
  ctx: AppContext,
  handler: RouteHandler,
): (c: AppHonoContext) => Promise<Response> | Response {
  return (c) => handler(ctx, c.req.raw, Object.values(c.req.param())[0] ?? "");
}

/**
 * The gate of routes for signed-in users only: 401 (JSON or a small page)
 * without a session, before the route runs (`requireAuthenticated`). The
 * handler then reads the user with `currentUser(req)!`. A sign-in
 * method's routes use `on.signedIn` of `whenOn` instead, which answers the
 * same after the method's 404 while it is off.
 */
export const signedIn: MiddlewareHandler<AppEnv> = async (c, next) =>
  requireAuthenticated(c.req.raw) ?? await next();
