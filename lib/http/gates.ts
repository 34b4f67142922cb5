/**
 * Reading the request's identity, and the gates that protect routes.
 *
 * @module
 */
import { evaluatePolicy, type Policy, principal } from "../authz/policy.ts";
import { Deadline } from "../kv/deadline.ts";
import type { Identity, SessionManager } from "../session/session_manager.ts";
import {
  type IdentityContext,
  identityOf,
  type RequestState,
  requestStates,
} from "./_request_state.ts";
import {
  errorResponse,
  storeUnavailable,
  wantsHtml,
} from "../_common/error_response.ts";
import type { Middleware } from "./middleware.ts";
import { safeNextPath } from "./safe_next_path.ts";

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

/**
 * The gate for actions that need a verified email: 401 when not signed in,
 * 403 when the account is not verified, 503 when the check fails or does
 * not answer within the session store's deadline (`storeTimeoutMs`).
 * Needs `isVerified` in the options of `identityMiddleware`.
 *
 * @param req The request.
 * @returns A response to send, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const denied = await requireVerified(req);
 * if (denied) return denied;
 * ```
 */
export async function requireVerified(req: Request): Promise<Response | null> {
  const denied = requireAuthenticated(req);
  if (denied !== null) return denied;
  const state = requestStates.get(req)!;
  const check = state.context.isVerified;
  if (check === undefined) {
    state.context.emit({
      type: "misconfigured",
      message:
        "requireVerified needs isVerified in the options of identityMiddleware",
    });
    return errorResponse(
      req,
      500,
      "misconfigured",
      "Verification check is not configured",
    );
  }
  let verified: boolean;
  try {
    const answer = check(identityOf(state)!.subject, req);
    // A check that never settles must not hold the request: it gets the
    // store's deadline, and past it the gate answers 503.
    verified = (typeof (answer as Promise<boolean>)?.then === "function"
      ? await deadlineOf(state.context).guard(
        Promise.resolve(answer),
        (e) =>
          late(e, "isVerified", state.context.manager),
      )
      : answer) === true;
  } catch (error) {
    state.context.emit({ type: "verification_check_failed", error });
    return storeUnavailable(req);
  }
  return verified
    ? null
    : errorResponse(req, 403, "unverified", "Verify your email address first");
}

/**
 * Asks a policy whether the request's principal may do `action` on `id`.
 * Fails closed: a policy that throws or rejects denies (and the error goes
 * to the event hook), and so does one that has not answered within the
 * session store's deadline (`storeTimeoutMs`).
 *
 * @param req The request.
 * @param policy The policy.
 * @param action One of the policy's actions (a misspelling is a type error).
 * @param id The object's id.
 * @returns `true` when allowed.
 *
 * @example Usage
 * ```ts ignore
 * if (await allows(req, notes, "edit", note.id)) { ... }
 * ```
 */
export async function allows<A extends string>(
  req: Request,
  policy: Policy<A>,
  action: NoInfer<A>,
  id: string,
): Promise<boolean> {
  const state = requestStates.get(req);
  if (state === undefined || state.session.kind === "unavailable") {
    return false;
  }
  return (await decide(state, policy, action, id)) === "allow";
}

/**
 * A policy's answer under the store's deadline: `late` when it has not
 * answered in time (reported as a `policy_error`); it never holds the
 * request longer.
 */
async function decide<A extends string>(
  state: RequestState,
  policy: Policy<A>,
  action: A,
  id: string,
): Promise<"allow" | "deny" | "late"> {
  const subject = identityOf(state)?.subject;
  const report = (error: unknown) =>
    state.context.emit({ type: "policy_error", error });
  try {
    const allowed = await deadlineOf(state.context).guard(
      evaluatePolicy(
        policy,
        subject === undefined ? null : principal(subject),
        action,
        id,
        report,
      ),
      (e) => late(e, "The policy", state.context.manager),
    );
    return allowed ? "allow" : "deny";
  } catch (error) {
    // evaluatePolicy never rejects: only the deadline gets here.
    try {
      report(error);
    } catch {
      // A failing reporter changes no answer.
    }
    return "late";
  }
}

/** One deadline per session manager: its `storeTimeoutMs`. */
const deadlines = new WeakMap<SessionManager, Deadline>();

function deadlineOf(context: IdentityContext): Deadline {
  let deadline = deadlines.get(context.manager);
  if (deadline === undefined) {
    deadline = new Deadline(context.manager.storeTimeoutMs);
    deadlines.set(context.manager, deadline);
  }
  return deadline;
}

/** The error a check gets past its deadline, naming what did not answer. */
function late(error: unknown, what: string, manager: SessionManager): unknown {
  if (!(error instanceof Error) || error.name !== "DeadlineExceeded") {
    return error;
  }
  const out = new Error(
    `${what} did not answer within ${manager.storeTimeoutMs} ms (storeTimeoutMs)`,
  );
  out.name = "DeadlineExceeded";
  return out;
}

/**
 * The policy gate: 403 when the policy denies (or throws), 503 when the
 * session store could not be asked or the policy has not answered within
 * the store's deadline (`storeTimeoutMs`); `null` to go on.
 *
 * @param req The request.
 * @param policy The policy.
 * @param action One of the policy's actions.
 * @param id The object's id.
 * @returns A response to send, or `null`.
 *
 * @example Usage
 * ```ts ignore
 * const denied = await authorize(req, notes, "edit", id);
 * if (denied) return denied;
 * ```
 */
export async function authorize<A extends string>(
  req: Request,
  policy: Policy<A>,
  action: NoInfer<A>,
  id: string,
): Promise<Response | null> {
  const state = requestStates.get(req);
  if (state === undefined) return notInstalled(req);
  if (state.session.kind === "unavailable") return storeUnavailable(req);
  const decision = await decide(state, policy, action, id);
  if (decision === "late") {
    return errorResponse(
      req,
      503,
      "policy_unavailable",
      "The permission check did not answer in time, try again shortly",
      { "retry-after": "5" },
    );
  }
  return decision === "allow"
    ? null
    : errorResponse(req, 403, "forbidden", "You are not allowed to do this");
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

function notInstalled(req: Request): Response {
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
