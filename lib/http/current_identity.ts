/**
 * Reading the request's identity: who is asking, as `identityMiddleware`
 * established it.
 *
 * @module
 */
import type { Identity } from "../session/session_manager.ts";
import { identityOf, requestStates } from "./_request_state.ts";

/**
 * The signed-in subject of a request, or `null`. Identity comes only from a
 * verified token: ids in the body, the query or headers change nothing.
 *
 * @param req A request that went through `identityMiddleware`.
 * @returns The subject id, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const who = currentUser(req) ?? "anonymous";
 * ```
 */
export function currentUser(req: Request): string | null {
  return identityOf(requestStates.get(req))?.subject ?? null;
}

/**
 * The full identity of a request (subject, jti, expiry), or `null`.
 *
 * @param req A request that went through `identityMiddleware`.
 * @returns The identity, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const expiresAt = currentIdentity(req)?.expiresAt;
 * ```
 */
export function currentIdentity(req: Request): Identity | null {
  return identityOf(requestStates.get(req));
}

/**
 * Whether the request carries a valid session.
 *
 * @param req A request that went through `identityMiddleware`.
 * @returns `true` when signed in.
 *
 * @example Usage
 * ```ts ignore
 * if (isAuthenticated(req)) { ... }
 * ```
 */
export function isAuthenticated(req: Request): boolean {
  return currentUser(req) !== null;
}
