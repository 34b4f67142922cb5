/**
 * Mounts a handler of the form `(ctx, req, param)` as a Hono route handler:
 * the app's parts, the request (`c.req.raw`, which carries the identity the
 * portcullis adapter resolved) and the path's one `:param`, if any; the form
 * that also passes a module's settings; and the gate of the routes for
 * signed-in users.
 *
 * @module
 */
import {
  currentIdentity,
  requireAuthenticated,
  requirePerson,
} from "@portcullis/auth";
import type { ModuleContext } from "./context.ts";

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

/**
 * What a route adapted by {@linkcode handle} reads of Hono's context: the
 * request and the path's parameters.
 */
export interface RouteContext {
  /** Hono's request. */
  req: {
    /** The original `Request` (which carries the resolved identity). */
    raw: Request;
    /** The path's parameters. */
    param(): Record<string, string>;
  };
}

/** A handler adapted to Hono: pass it to `app.get`, `app.post`, … */
export type RouteFunction = (c: RouteContext) => Promise<Response> | Response;

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
export function handle(
  ctx: ModuleContext,
  handler: RouteHandler,
): RouteFunction {
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
): (handler: ModuleHandler<S>) => RouteFunction {
  return (handler) => (c) =>
    handler(ctx, settings, c.req.raw, Object.values(c.req.param())[0] ?? "");
}

/**
 * The subject of a request its account's owner makes in person, or `null`:
 * a session that is neither an API key nor an operator acting as the user.
 * What the mailed-link rules call "the account's own signed-in browser"
 * (a link it opens acts at once; any other party gives the password).
 *
 * @param req A request after the identity middleware.
 * @returns The subject, or `null`.
 */
export function ownSession(req: Request): string | null {
  const identity = currentIdentity(req);
  return identity === null || identity.apiKey !== undefined ||
      identity.actor !== undefined
    ? null
    : identity.subject;
}

/**
 * The gate of routes for signed-in people: 401 (JSON or a small page)
 * without a session, before the route runs; 403 `api_key_refused` for a
 * request authenticated by an API key (`requirePerson`: a key works only
 * on routes mounted behind {@linkcode signedInOrKey}). An operator acting
 * as the user passes (their writes are recorded); the account's credential
 * routes use {@linkcode signedInOwner} instead. The handler then reads the
 * user with `currentUser(req)!`.
 *
 * @example Usage
 * ```ts ignore
 * routes.post("/account/sessions/revoke", signedIn, on(revoke));
 * ```
 *
 * @param c Hono's context (its request).
 * @param next The route.
 * @returns The refusal, or what the route answered.
 */
export async function signedIn(
  c: { req: { raw: Request } },
  next: () => Promise<void>,
): Promise<Response | void> {
  return requirePerson(c.req.raw, { allowActor: true }) ?? await next();
}

/**
 * The gate of the account's credential routes (a password, an address, a
 * passkey, TOTP, an API key, the deletion): the owner in person. 401
 * without a session; 403 `api_key_refused` for an API key; 403
 * `impersonation_refused` for an operator acting as the user
 * (`requirePerson`).
 *
 * @example Usage
 * ```ts ignore
 * routes.post("/account/totp", signedInOwner, on(startTotp));
 * ```
 *
 * @param c Hono's context (its request).
 * @param next The route.
 * @returns The refusal, or what the route answered.
 */
export async function signedInOwner(
  c: { req: { raw: Request } },
  next: () => Promise<void>,
): Promise<Response | void> {
  return requirePerson(c.req.raw) ?? await next();
}

/**
 * The gate of an application's API routes that API keys may call: 401
 * without a session or a key, then the route. A key's identity carries its
 * scopes, and the policy gates (`authorize`, `allows`) refuse every action
 * outside them: such a route must authorise each action with a policy
 * (a route that does not is open to every key of the user).
 *
 * @example Usage
 * ```ts ignore
 * routes.put("/api/notes/:id", signedInOrKey, on(putNote)); // authorize(req, notes, "edit", id)
 * ```
 *
 * @param c Hono's context (its request).
 * @param next The route.
 * @returns The 401, or what the route answered.
 */
export async function signedInOrKey(
  c: { req: { raw: Request } },
  next: () => Promise<void>,
): Promise<Response | void> {
  return requireAuthenticated(c.req.raw) ?? await next();
}
