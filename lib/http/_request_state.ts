// The per-request identity that identityMiddleware attaches, keyed by the
// Request object itself so it works with any framework that passes the
// original Request on.
import type { CookieTransport } from "../session/cookie_transport.ts";
import type { Identity, SessionManager } from "../session/session_manager.ts";
import type { AuthEvent } from "./auth_event.ts";

export interface IdentityContext {
  manager: SessionManager;
  cookie: CookieTransport | null;
  isVerified?: (subject: string, req: Request) => boolean | Promise<boolean>;
  emit: (event: AuthEvent) => void;
}

export interface RequestState {
  identity: Identity | null;
  via: "cookie" | "bearer" | null;
  /** An Authorization header was present (so the cookie was ignored). */
  authorization: boolean;
  /** A token was presented but did not resolve. */
  invalidToken: boolean;
  storeUnavailable: boolean;
  /** signIn or signOut ran: renewal must not overwrite their cookie. */
  sessionChanged: boolean;
  context: IdentityContext;
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
