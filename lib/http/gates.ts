/**
 * The gates that let only a signed-in request through: 401 (or a redirect
 * to the sign-in page for a browser), 503 on a store outage.
 *
 * @module
 */
import { type RequestState, requestStates } from "./_request_state.ts";
import {
  errorResponse,
  storeUnavailable,
  wantsHtml,
} from "../_common/error_response.ts";
import type { Middleware } from "./middleware.ts";
import { safeNextPath } from "./safe_next_path.ts";

/**
 * The gate for handlers: 401 when not signed in (with
 * `WWW-Authenticate: Bearer` when an `Authorization` header was sent), 503
 * when the session store could not be asked, 500 when `identityMiddleware`
 * did not run; `null` to go on.
 *
 * @param req The request.
 * @returns A response to send, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const denied = requireAuthenticated(req);
 * if (denied) return denied;
 * ```
 */
export function requireAuthenticated(req: Request): Response | null {
  const state = requestStates.get(req);
  if (state === undefined) return notInstalled(req);
  if (state.session.kind === "signedIn") return null;
  return unauthenticated(req, state);
}

/** Options of {@linkcode requirePerson}. */
export interface RequirePersonOptions {
  /**
   * Let an operator acting as the user (an impersonation session, whose
   * identity has `actor`) through; default `false`, so the gate on a
   * credential route refuses them too.
   */
  allowActor?: boolean;
}

/**
 * The gate for "a person, not a key": what only the account's owner in
 * person may do (change a password, an address, a passkey, TOTP, an API
 * key; delete the account). 401 as {@linkcode requireAuthenticated} when
 * not signed in; 403 `api_key_refused` for a request authenticated by an
 * API key, whatever its scopes; 403 `impersonation_refused` for an
 * operator acting as the user, unless `allowActor`; `null` to go on.
 *
 * @param req The request.
 * @param options Whether an operator acting as the user passes.
 * @returns A response to send, or `null`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { compose, identityMiddleware, KVSessionStore, MemoryKV, requirePerson, SecretProvider, SessionManager } from "@portcullis/auth";
 * const sessions = new SessionManager({
 *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
 *   store: new KVSessionStore(new MemoryKV()),
 * });
 * const changePassword = compose(
 *   [identityMiddleware(sessions)],
 *   (req) => requirePerson(req) ?? new Response("changed"),
 * );
 * const token = await sessions.issue("user_1");
 * const res = await changePassword(new Request("https://app.example/", {
 *   method: "POST",
 *   headers: { authorization: `Bearer ${token}` },
 * }));
 * assert.equal(res.status, 200);
 * ```
 */
export function requirePerson(
  req: Request,
  options: RequirePersonOptions = {},
): Response | null {
  const state = requestStates.get(req);
  if (state === undefined) return notInstalled(req);
  const session = state.session;
  if (session.kind !== "signedIn") return unauthenticated(req, state);
  if (session.identity.apiKey !== undefined) {
    return errorResponse(
      req,
      403,
      "api_key_refused",
      "An API key cannot do this: sign in to the account",
    );
  }
  if (session.identity.actor !== undefined && options.allowActor !== true) {
    return errorResponse(
      req,
      403,
      "impersonation_refused",
      "An operator acting as this user cannot do this",
    );
  }
  return null;
}

/** Options of {@linkcode requireAuth}. */
export interface RequireAuthOptions {
  /**
   * Where browsers are sent when not signed in; default `/login`. The
   * original path goes along as `?next=`.
   */
  redirectTo?: string;
}

/**
 * A middleware gate. Not signed in: a browser navigation (HTML `Accept` or
 * `Sec-Fetch-Mode: navigate`) gets 303 to `/login?next=<path>` (or
 * `redirectTo`); a request with an `Authorization` header gets 401 with
 * `WWW-Authenticate: Bearer` (RFC 6750); others get 401. A store outage
 * answers 503 with `Retry-After`. The handler never runs in those cases.
 *
 * @param options Where to send browsers.
 * @returns The middleware.
 *
 * @example Usage
 * ```ts ignore
 * const account = compose([identityMiddleware(sessions), requireAuth()], accountPage);
 * ```
 */
export function requireAuth(options: RequireAuthOptions = {}): Middleware {
  const target = options.redirectTo ?? "/login";
  if (!target.startsWith("/") || target.startsWith("//")) {
    throw new TypeError(
      `redirectTo must be a same-origin path starting with "/": received "${target}"`,
    );
  }
  return (req, next) => {
    const state = requestStates.get(req);
    if (state === undefined) return notInstalled(req);
    const session = state.session;
    if (session.kind === "signedIn") return next();
    const viaHeader = session.kind !== "anonymous" && session.via !== "cookie";
    if (session.kind !== "unavailable" && !viaHeader && isNavigation(req)) {
      const url = new URL(req.url);
      const back = safeNextPath(url.pathname + url.search);
      const sep = target.includes("?") ? "&" : "?";
      return new Response(null, {
        status: 303,
        headers: {
          location: `${target}${sep}next=${encodeURIComponent(back)}`,
          "cache-control": "no-store",
        },
      });
    }
    return unauthenticated(req, state);
  };
}

function isNavigation(req: Request): boolean {
  return req.headers.get("sec-fetch-mode") === "navigate" || wantsHtml(req);
}

function unauthenticated(req: Request, state: RequestState): Response {
  const session = state.session;
  if (session.kind === "unavailable") return storeUnavailable(req);
  const headers: Record<string, string> = {};
  if (session.kind === "invalid" && session.via === "bearer") {
    // With DPoP on, a Bearer token that does not resolve may be a DPoP-bound
    // one sent as Bearer (which cannot be told without its key): the error
    // stays with the scheme the client used, and a second challenge says
    // that DPoP is taken, with its algorithms (RFC 9449 §7.1, §7.2).
    const dpop = state.context.dpop;
    headers["www-authenticate"] = dpop === null
      ? 'Bearer realm="portcullis", error="invalid_token"'
      : `Bearer realm="portcullis", error="invalid_token", DPoP algs="${
        dpop.algorithms.join(" ")
      }"`;
  } else if (session.kind === "invalid" && session.via === "dpop") {
    headers["www-authenticate"] = 'DPoP error="invalid_token"';
  }
  return errorResponse(
    req,
    401,
    "unauthenticated",
    "Sign in to continue",
    headers,
  );
}

/**
 * The answer of a gate on a request `identityMiddleware` never saw: 500,
 * logged (a gate must not guess who is asking).
 *
 * @param req The request.
 * @returns The 500 answer.
 */
export function notInstalled(req: Request): Response {
  console.error(
    "portcullis: misconfigured: identityMiddleware did not run for this request",
  );
  return errorResponse(
    req,
    500,
    "misconfigured",
    "Authentication is not configured for this route",
  );
}
