// The per-request path of identityMiddleware: read the credential, resolve
// it (synchronously when memory can tell), apply the cross-origin check,
// attach the request state, call the handler, renew the cookie if due.
import { AuthError } from "../auth_error.ts";
import { BearerTransport } from "../session/bearer_transport.ts";
import type { CookieTransport } from "../session/cookie_transport.ts";
import { type Identity, PEEK_SESSION } from "../session/session_manager.ts";
import { PEEK_DEVICE, RESOLVE_BOUND } from "../session/session_binding.ts";
import type { DpopVerifier } from "../session/dpop_proof.ts";
import {
  ANONYMOUS,
  type IdentityContext,
  type RequestState,
  requestStates,
  type SessionState,
  type Via,
} from "./_request_state.ts";
import type { CrossOriginProtection } from "./cross_origin_protection.ts";
import { errorResponse } from "./error_response.ts";
import type { Next } from "./middleware.ts";
import type { DeviceBoundSessions } from "./device_bound_sessions.ts";

const bearerTransport = new BearerTransport();
/** Every method but the three safe ones (three comparisons, no regex). */
function unsafe(method: string): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
}

// No async frames on this path: it runs on every request. A token this
// process verified before, whose revocation state memory can tell (a
// stateless manager, an in-memory store, or `revocationStaleness` within its
// bound), reaches the handler without a single promise of our own.
export function handle(
  req: Request,
  next: Next,
  context: IdentityContext,
  csrf: CrossOriginProtection,
  bearer: boolean,
): Response | Promise<Response> {
  // As an async function would: whatever throws becomes a rejection.
  try {
    return identify(req, next, context, csrf, bearer);
  } catch (error) {
    return Promise.reject(error);
  }
}

function identify(
  req: Request,
  next: Next,
  context: IdentityContext,
  csrf: CrossOriginProtection,
  bearer: boolean,
): Response | Promise<Response> {
  const dpop = context.dpop;
  if (
    dpop !== null &&
    (req.headers.has("dpop") || isDpopScheme(req.headers.get("authorization")))
  ) return identifyDpop(req, next, context, csrf, dpop);
  const device = context.device;
  if (device !== null && req.method === "POST") {
    const answer = device.handle(req);
    if (answer !== null) return answer;
  }
  let token: string | null = null;
  let via: Via = "cookie";
  let bound = false;
  const credentials = bearerTransport.read(req);
  if (credentials.present) {
    via = "bearer";
    if (bearer) token = credentials.token;
  } else if (context.cookie !== null) {
    // A bound cookie, when present, is the only one that counts.
    if (device !== null) token = device.cookie.read(req);
    bound = token !== null;
    if (!bound) token = context.cookie.read(req);
  }
  if (token === null) {
    const session = credentials.present
      ? { kind: "invalid", via } as const
      : ANONYMOUS;
    return proceed(req, next, context, csrf, session);
  }
  const manager = context.manager;
  let known: Identity | null | undefined;
  try {
    known = bound ? manager[PEEK_DEVICE](token) : manager[PEEK_SESSION](token);
  } catch {
    known = undefined; // resolve() below asks again and fails closed
  }
  if (known !== undefined) {
    return proceed(req, next, context, csrf, settled(known, via), bound);
  }
  let resolving: Promise<Identity | null>;
  try {
    resolving = bound
      ? manager[RESOLVE_BOUND](DEVICE, token)
      : manager.resolve(token);
  } catch (error) {
    resolving = Promise.reject(error);
  }
  return resolving.then(
    (identity) =>
      proceed(req, next, context, csrf, settled(identity, via), bound),
    (error) =>
      proceed(req, next, context, csrf, failed(error, via, context), bound),
  );
}

const DEVICE = Object.freeze({ kind: "device" as const });
const DPOP_SCHEME = /^DPoP ([A-Za-z0-9\-._~+/]+=*)$/i;

function isDpopScheme(header: string | null): boolean {
  return header !== null && header.length > 5 &&
    header.slice(0, 5).toLowerCase() === "dpop ";
}

/**
 * A request with a DPoP proof or the DPoP scheme: the proof must hold (for
 * the token, when one is sent), else 401 `invalid_dpop_proof` before any
 * handler runs. A token under the DPoP scheme resolves only when bound to
 * the proof's key; a proof without a token (a sign-in) lets `signIn` bind
 * the new token to that key.
 */
async function identifyDpop(
  req: Request,
  next: Next,
  context: IdentityContext,
  csrf: CrossOriginProtection,
  dpop: DpopVerifier,
): Promise<Response> {
  const header = req.headers.get("authorization");
  let token: string | null = null;
  let scheme: "dpop" | "bearer" | null = null;
  if (header !== null) {
    const m = header.length <= 4096 + 5 ? DPOP_SCHEME.exec(header) : null;
    if (m !== null) {
      token = m[1];
      scheme = "dpop";
    } else {
      const bearer = bearerTransport.read(req);
      if (bearer.token === null) return invalidProof(req, dpop, "malformed");
      token = bearer.token;
      scheme = "bearer";
    }
  }
  let thumbprint: string;
  try {
    const proof = await dpop.verify(req.headers.get("dpop"), req, token);
    if (!proof.ok) {
      context.emit({
        type: "dpop_proof_refused",
        reason: proof.reason,
        path: new URL(req.url).pathname,
      });
      return invalidProof(req, dpop, proof.reason);
    }
    thumbprint = proof.thumbprint;
  } catch (error) {
    // The replay store failed: the proof is not accepted (fail closed).
    failed(error, scheme ?? "dpop", context);
    return errorResponse(
      req,
      503,
      "session_store_unavailable",
      "Sign-in is temporarily unavailable, try again shortly",
      { "retry-after": "5" },
    );
  }
  if (scheme === null) {
    // A sign-in: the cookie, if any, still says who is asking.
    const cookieToken = context.cookie?.read(req) ?? null;
    let session: SessionState = ANONYMOUS;
    if (cookieToken !== null) {
      try {
        session = settled(await context.manager.resolve(cookieToken), "cookie");
      } catch (error) {
        session = failed(error, "cookie", context);
      }
    }
    return proceed(req, next, context, csrf, session, false, thumbprint);
  }
  let session: SessionState;
  try {
    const identity = scheme === "dpop"
      ? await context.manager[RESOLVE_BOUND](
        { kind: "dpop", thumbprint },
        token!,
      )
      : await context.manager.resolve(token!);
    session = settled(identity, scheme === "dpop" ? "dpop" : "bearer");
  } catch (error) {
    session = failed(error, scheme, context);
  }
  return proceed(req, next, context, csrf, session);
}

function invalidProof(
  req: Request,
  dpop: DpopVerifier,
  reason: string,
): Response {
  return errorResponse(
    req,
    401,
    "invalid_dpop_proof",
    `DPoP proof refused: ${reason}`,
    {
      "www-authenticate": `DPoP error="invalid_dpop_proof", algs="${
        dpop.algorithms.join(" ")
      }"`,
    },
  );
}

function settled(identity: Identity | null, via: Via): SessionState {
  return identity === null
    ? { kind: "invalid", via }
    : { kind: "signedIn", identity, via };
}

/** The cross-origin check, the state, the handler, and renewal if due. */
function proceed(
  req: Request,
  next: Next,
  context: IdentityContext,
  csrf: CrossOriginProtection,
  session: SessionState,
  bound = false,
  proofKey?: string,
): Response | Promise<Response> {
  const bearerIdentity = session.kind === "signedIn" &&
    session.via !== "cookie";
  if (!bearerIdentity && unsafe(req.method) && !csrf.check(req)) {
    context.emit({
      type: "cross_origin_rejected",
      method: req.method,
      path: new URL(req.url).pathname,
    });
    return errorResponse(
      req,
      403,
      "cross_origin_rejected",
      "Cross-origin request refused",
    );
  }
  const state: RequestState = { session, changed: false, context };
  if (bound) state.boundCookie = true;
  if (proofKey !== undefined) state.proofKey = proofKey;
  requestStates.set(req, state);
  const device = context.device;
  if (device !== null && context.cookie !== null) {
    return Promise.resolve(next(req)).then((response) =>
      finishDevice(req, response, state, device)
    );
  }
  // Renewal only where it can happen: otherwise the handler's promise is
  // answered as it is, with no frame of ours around it.
  if (
    session.kind === "signedIn" && session.via === "cookie" &&
    context.cookie !== null && context.manager.sliding
  ) {
    const cookie = context.cookie;
    return Promise.resolve(next(req)).then((response) =>
      state.changed
        ? response
        : renewed(response, session.identity, state, cookie)
    );
  }
  return next(req);
}

/** The state of a request whose token could not be resolved. */
function failed(
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

/**
 * With device-bound sessions: a sign-in or sign-out clears the bound cookie
 * the request carried; a signed-in, unbound cookie session (a sign-in, or a
 * page navigation) is offered registration; sliding renewal applies to
 * unbound cookies only.
 */
async function finishDevice(
  req: Request,
  response: Response,
  state: RequestState,
  device: DeviceBoundSessions,
): Promise<Response> {
  const session = state.session;
  const unboundCookie = session.kind === "signedIn" &&
    session.via === "cookie" && session.identity.binding === undefined;
  let register = unboundCookie &&
    (state.changed || (req.method === "GET" && isNavigation(req)));
  const clear = state.changed && state.boundCookie === true;
  if (!register && !clear) {
    if (unboundCookie && !state.changed && state.context.manager.sliding) {
      return renewed(response, session.identity, state, state.context.cookie!);
    }
    return response;
  }
  const out = new Response(response.body, response);
  if (clear) out.headers.append("set-cookie", device.cookie.clear());
  if (register && session.kind === "signedIn") {
    try {
      out.headers.set(
        "secure-session-registration",
        await device.registrationHeader(session.identity),
      );
    } catch {
      register = false; // the session works unbound, as without the option
    }
  }
  return out;
}

function isNavigation(req: Request): boolean {
  const dest = req.headers.get("sec-fetch-dest");
  if (dest !== null) return dest === "document";
  return (req.headers.get("accept") ?? "").includes("text/html");
}

async function renewed(
  response: Response,
  identity: Identity,
  state: RequestState,
  cookie: CookieTransport,
): Promise<Response> {
  const manager = state.context.manager;
  let fresh;
  try {
    fresh = await manager.renew(identity);
  } catch {
    return response;
  }
  if (fresh === null) return response;
  const out = new Response(response.body, response);
  out.headers.append(
    "set-cookie",
    cookie.serialize(fresh.token, manager.secondsLeft(fresh.identity)),
  );
  return out;
}
