// The per-request identity that identityMiddleware attaches, keyed by the
// Request object itself so it works with any framework that passes the
// original Request on.
import { AuthError } from "../auth_error.ts";
import type { CookieTransport } from "../session/cookie_transport.ts";
import type { Identity, SessionManager } from "../session/session_manager.ts";
import type { DpopVerifier } from "../binding/dpop_proof.ts";
import type { AuthEvent } from "./auth_event.ts";
import type { DeviceBoundSessions } from "../binding/device_bound_sessions.ts";
import type { ApiKeys } from "../session/api_keys.ts";

export interface IdentityContext {
  manager: SessionManager;
  cookie: CookieTransport | null;
  isVerified?: (subject: string, req: Request) => boolean | Promise<boolean>;
  emit: (event: AuthEvent) => void;
  /** DPoP proofs are checked (opt-in), else `null`. */
  dpop: DpopVerifier | null;
  /** Device-bound browser sessions (opt-in), else `null`. */
  device: DeviceBoundSessions | null;
  /** API keys sent as Bearer values (opt-in), else `null`. */
  keys: ApiKeys | null;
}

/** How a token reached the server. */
export type Via = "cookie" | "bearer" | "dpop";

/**
 * What the request's credentials came to; one of four states, so that no
 * impossible combination (signed in and invalid, unavailable and signed in)
 * can be written down.
 *
 * - `anonymous`: no token was presented.
 * - `signedIn`: a token resolved to an identity.
 * - `invalid`: a token (or a malformed `Authorization` header) was
 *   presented and did not resolve.
 * - `unavailable`: a token was presented and the session store could not
 *   say whether it was revoked; gates answer 503.
 */
export type SessionState =
  | { readonly kind: "anonymous" }
  | {
    readonly kind: "signedIn";
    readonly identity: Identity;
    readonly via: Via;
  }
  | { readonly kind: "invalid"; readonly via: Via }
  | { readonly kind: "unavailable"; readonly via: Via };

export const ANONYMOUS: SessionState = Object.freeze({ kind: "anonymous" });

export interface RequestState {
  session: SessionState;
  /** signIn or signOut ran: renewal must not overwrite their cookie. */
  changed: boolean;
  context: IdentityContext;
  /**
   * The RFC 7638 thumbprint of the key of a valid DPoP proof sent without
   * a token or a live session cookie (a sign-in), or with a token under
   * the DPoP scheme: `signIn` then binds the new token to it (a bound
   * session re-minted stays bound).
   */
  proofKey?: string;
  /** The next DPoP nonce, for the answer (see `_key_binding.ts`). */
  nonce?: string;
  /** The request carried a device-bound cookie (cleared on sign-in/out). */
  boundCookie?: boolean;
  /**
   * `signIn` started a cookie session by a fresh authentication (not a
   * re-mint of the session presented): only its answer may carry the
   * device-bound registration offer.
   */
  freshSignIn?: boolean;
}

/** The identity of a state, or `null`. */
export function identityOf(state: RequestState | undefined): Identity | null {
  return state?.session.kind === "signedIn" ? state.session.identity : null;
}

// The state rides on the Request itself, under a module-private symbol: a
// property read is cheaper than a WeakMap lookup, and short-lived requests
// then leave no ephemeron entries for the garbage collector to process. A
// request that refuses new properties (frozen) falls back to a WeakMap.
const STATE: unique symbol = Symbol("portcullis.requestState");
const fallback = new WeakMap<Request, RequestState>();
type Carrier = Request & { [STATE]?: RequestState };

export const requestStates = {
  get(req: Request): RequestState | undefined {
    return (req as Carrier)[STATE] ?? fallback.get(req);
  },
  set(req: Request, state: RequestState): void {
    try {
      (req as Carrier)[STATE] = state;
    } catch {
      fallback.set(req, state);
    }
  },
};

/** The state of a resolved token. */
export function settled(identity: Identity | null, via: Via): SessionState {
  return identity === null
    ? { kind: "invalid", via }
    : { kind: "signedIn", identity, via };
}

/** The state of a request whose token could not be resolved. */
export function failed(
  error: unknown,
  via: Via,
  context: IdentityContext,
): SessionState {
  if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
    context.emit({ type: "store_unavailable", error: error.cause ?? error });
    return { kind: "unavailable", via };
  }
  context.emit({
    type: "misconfigured",
    message: String((error as Error)?.message),
  });
  return { kind: "invalid", via };
}
