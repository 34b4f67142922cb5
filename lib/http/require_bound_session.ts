/**
 * The gate for routes that need a session bound to a key the client holds.
 *
 * @module
 */
import { identityOf, requestStates } from "./_request_state.ts";
import { errorResponse } from "./error_response.ts";
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
 * or DPoP-bound one. For a browser, the 403 carries the
 * `Secure-Session-Registration` offer (with `deviceBound` on), so a browser
 * able to bind does so and the retry passes; a browser without device-bound
 * sessions (Firefox and Safari today) never passes this gate: use it only
 * where that is the intent.
 *
 * @param req The request.
 * @returns A response to send, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const denied = await requireBoundSession(req);
 * if (denied) return denied;
 * ```
 */
export async function requireBoundSession(
  req: Request,
): Promise<Response | null> {
  const denied = requireAuthenticated(req);
  if (denied !== null) return denied;
  const state = requestStates.get(req)!;
  const identity = identityOf(state)!;
  if (identity.binding !== undefined) return null;
  const headers: Record<string, string> = {};
  const device = state.context.device;
  if (
    device !== null && state.session.kind === "signedIn" &&
    state.session.via === "cookie"
  ) {
    try {
      headers["secure-session-registration"] = await device
        .registrationHeader(identity);
    } catch {
      // The refusal stands without the offer.
    }
  }
  return errorResponse(
    req,
    403,
    "session_not_bound",
    "This action needs a session bound to this device",
    headers,
  );
}
