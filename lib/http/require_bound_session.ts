/**
 * The gate for routes that need a session bound to a key the client holds.
 *
 * @module
 */
import { identityOf, requestStates } from "./_request_state.ts";
import { errorResponse } from "../_common/error_response.ts";
import { requireAuthenticated } from "./gates.ts";

/**
 * Whether the request's session is bound to a key: `"device"` (a
 * device-bound browser session), `"dpop"` (a DPoP-bound token), or `null`
 * (an ordinary session, or none).
 *
 * @param req A request that went through `identityMiddleware`.
 * @returns The binding, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const bound = sessionBinding(req) !== null;
 * ```
 */
export function sessionBinding(req: Request): "device" | "dpop" | null {
  return identityOf(requestStates.get(req))?.binding ?? null;
}

/**
 * The key a session started by this request would be bound to: the RFC
 * 7638 thumbprint of the DPoP proof's key on a sign-in (no token, no live
 * session cookie) or under the DPoP scheme, else `null`. `signIn` binds
 * the new token to it; a flow in several steps (a password, then a second
 * factor) can tie its intermediate value to it, so that only the client
 * holding that key can finish.
 *
 * @param req A request that went through `identityMiddleware`.
 * @returns The thumbprint, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const pending = await totp.issuePending(subject, "/", {
 *   boundTo: dpopKeyOf(req),
 * });
 * ```
 */
export function dpopKeyOf(req: Request): string | null {
  return requestStates.get(req)?.proofKey ?? null;
}

/**
 * The gate for sensitive routes that a copied credential must not reach:
 * 401 when not signed in (503 on a store outage), 403
 * `session_not_bound` for an ordinary session, `null` for a device-bound
 * or DPoP-bound one. The 403 carries no registration offer: a browser binds
 * its session only on the answer to a fresh sign-in (an offer here would
 * let a copied cookie be bound to a thief's key), so an ordinary session
 * passes after signing in again from a browser that supports device-bound
 * sessions. Firefox and Safari do not today: use this gate only where that
 * is the intent.
 *
 * @param req The request.
 * @returns A response to send, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const denied = requireBoundSession(req);
 * if (denied) return denied;
 * ```
 */
export function requireBoundSession(req: Request): Response | null {
  const denied = requireAuthenticated(req);
  if (denied !== null) return denied;
  const identity = identityOf(requestStates.get(req))!;
  if (identity.binding !== undefined) return null;
  return errorResponse(
    req,
    403,
    "session_not_bound",
    "This action needs a session bound to this device: sign in again from a browser that supports device-bound sessions",
  );
}
