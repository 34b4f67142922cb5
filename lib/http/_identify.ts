// The per-request path of identityMiddleware: read the credential, resolve
// it (synchronously when memory can tell), apply the cross-origin check,
// attach the request state, call the handler, renew the cookie if due.
import { AuthError } from "../auth_error.ts";
import { BearerTransport } from "../session/bearer_transport.ts";
import type { CookieTransport } from "../session/cookie_transport.ts";
import { type Identity, PEEK_SESSION } from "../session/session_manager.ts";
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
  let token: string | null = null;
  let via: Via = "cookie";
  const credentials = bearerTransport.read(req);
  if (credentials.present) {
    via = "bearer";
    if (bearer) token = credentials.token;
  } else if (context.cookie !== null) {
    token = context.cookie.read(req);
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
    known = manager[PEEK_SESSION](token);
  } catch {
    known = undefined; // resolve() below asks again and fails closed
  }
  if (known !== undefined) {
    return proceed(req, next, context, csrf, settled(known, via));
  }
  let resolving: Promise<Identity | null>;
  try {
    resolving = manager.resolve(token);
  } catch (error) {
    resolving = Promise.reject(error);
  }
  return resolving.then(
    (identity) => proceed(req, next, context, csrf, settled(identity, via)),
    (error) => proceed(req, next, context, csrf, failed(error, via, context)),
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
): Response | Promise<Response> {
  const bearerIdentity = session.kind === "signedIn" &&
    session.via === "bearer";
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
  requestStates.set(req, state);
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
