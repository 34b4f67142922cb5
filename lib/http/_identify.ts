// The per-request path of identityMiddleware: read the credential, resolve
// it (synchronously when memory can tell), apply the cross-origin check,
// attach the request state, call the handler, renew the cookie if due.
import { BearerTransport } from "../session/bearer_transport.ts";
import type { CookieTransport } from "../session/cookie_transport.ts";
import { type Identity, PEEK_SESSION } from "../session/session_manager.ts";
import {
  ANONYMOUS,
  failed,
  type IdentityContext,
  type RequestState,
  requestStates,
  type SessionState,
  settled,
  type Via,
} from "./_request_state.ts";
import { dpopOutcome, usesDpop } from "./_dpop_request.ts";
import { finishDevice } from "./_device_finish.ts";
import type { CrossOriginProtection } from "./cross_origin_protection.ts";
import { errorResponse } from "./error_response.ts";
import type { Next } from "./middleware.ts";

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
  if (dpop !== null && usesDpop(req)) {
    return dpopOutcome(req, context, dpop).then((o) =>
      o instanceof Response
        ? o
        : proceed(req, next, context, csrf, o.session, false, o.proofKey)
    );
  }
  const device = context.device;
  if (device !== null && req.method === "POST") {
    const answer = device.handle(req);
    if (answer !== null) return answer;
  }
  let token: string | null = null;
  let via: Via = "cookie";
  let bound = false; // a device-bound cookie: when present, the only one
  const credentials = bearerTransport.read(req);
  if (credentials.present) {
    via = "bearer";
    if (bearer) token = credentials.token;
  } else if (context.cookie !== null) {
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
    known = bound
      ? device!.bound.peekDevice(token)
      : manager[PEEK_SESSION](token);
  } catch {
    known = undefined; // resolve() below asks again and fails closed
  }
  if (known !== undefined) {
    return proceed(req, next, context, csrf, settled(known, via), bound);
  }
  let resolving: Promise<Identity | null>;
  try {
    resolving = bound
      ? device!.bound.resolve(DEVICE, token)
      : manager.resolve(token);
  } catch (error) {
    resolving = Promise.reject(error);
  }
  return resolving.then(
    (id) => proceed(req, next, context, csrf, settled(id, via), bound),
    (e) => proceed(req, next, context, csrf, failed(e, via, context), bound),
  );
}

const DEVICE = Object.freeze({ kind: "device" as const });

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
      `Cross-origin request refused: this app takes unsafe requests from ${
        csrf.expectedOrigin(req)
      }`,
    );
  }
  const state: RequestState = { session, changed: false, context };
  if (bound) state.boundCookie = true;
  if (proofKey !== undefined) state.proofKey = proofKey;
  requestStates.set(req, state);
  const device = context.device;
  // Renewal only where it can happen (an unbound cookie session): otherwise
  // the handler's promise is answered as it is, with no frame of ours
  // around it, device-bound sessions aside (their offer and cookies).
  const renewable = session.kind === "signedIn" && session.via === "cookie" &&
    session.identity.binding === undefined && context.cookie !== null &&
    context.manager.sliding;
  if (renewable || (device !== null && context.cookie !== null)) {
    const cookie = context.cookie!;
    return Promise.resolve(next(req)).then((response) => {
      const out = device === null
        ? response
        : finishDevice(device, req, response, state);
      return state.changed || !renewable
        ? out
        : Promise.resolve(out).then((r) =>
          renewed(r, session.identity, state, cookie)
        );
    });
  }
  return next(req);
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
