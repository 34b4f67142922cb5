// The per-request path of identityMiddleware: read the credential, resolve
// it (synchronously when memory can tell), apply the cross-origin check,
// attach the request state, call the handler, renew the cookie if due.
//
// Built once per middleware: what the options decide (which transports,
// key binding, sliding renewal, the manager's warm path) is resolved into
// the closure below, and each request carries one value along the path:
// its RequestState. Key binding (DPoP, device-bound sessions) is one
// question, asked once (`_key_binding.ts`).
import { BearerTransport } from "../session/bearer_transport.ts";
import {
  type CookieTransport,
  cookieValue,
  isTokenValue,
} from "../session/cookie_transport.ts";
import type { Identity } from "../session/session_manager.ts";
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
import { type BindingOutcome, requestBinding } from "./_key_binding.ts";
import type { CrossOriginProtection } from "./cross_origin_protection.ts";
import { errorResponse } from "../_common/error_response.ts";
import type { Next } from "./middleware.ts";
import type { ApiKeys } from "../session/api_keys.ts";

/** The per-request function of one identityMiddleware. */
export type Identify = (
  req: Request,
  next: Next,
) => Response | Promise<Response>;

const bearerTransport = new BearerTransport();

/** Every method but the three safe ones (three comparisons, no regex). */
function unsafe(method: string): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
}

/**
 * The request's state, made once its credentials are settled: every field
 * present from the start, so that every request's state has one shape.
 */
function stateOf(
  session: SessionState,
  context: IdentityContext,
  outcome?: BindingOutcome,
): RequestState {
  return {
    session,
    changed: false,
    context,
    proofKey: outcome?.proofKey,
    nonce: outcome?.nonce,
    boundCookie: outcome?.bound ?? false,
    freshSignIn: false,
  };
}

/**
 * Builds the per-request path of one middleware.
 *
 * @param context The middleware's resolved options.
 * @param csrf Its cross-origin protection.
 * @param acceptBearer Whether `Authorization: Bearer` authenticates.
 * @returns The function each request goes through.
 */
export function identify(
  context: IdentityContext,
  csrf: CrossOriginProtection,
  acceptBearer: boolean,
): Identify {
  const { cookie, manager, keys } = context;
  const binding = requestBinding(context);
  // Renewal can only happen for an unbound cookie session of a sliding
  // manager.
  const sliding = cookie !== null && manager.sliding;
  const cookiePrefix = cookie === null ? "" : `${cookie.name}=`;

  /** A binding's outcome: its answer, or the request on its way. */
  function bound(
    req: Request,
    next: Next,
    o: Response | BindingOutcome,
  ): Response | Promise<Response> {
    return o instanceof Response
      ? o
      : proceed(req, next, stateOf(o.session, context, o));
  }

  // No async frames on this path: it runs on every request. A token this
  // process verified before, whose revocation state memory can tell (a
  // stateless manager, an in-memory store, or `revocationStaleness` within
  // its bound), reaches the handler without a single promise of our own.
  function read(req: Request, next: Next): Response | Promise<Response> {
    if (binding !== null) {
      const o = binding.check(req);
      if (o !== null) {
        return o instanceof Promise
          ? o.then((o) => bound(req, next, o))
          : bound(req, next, o);
      }
    }
    let token: string | null = null;
    let via: Via = "cookie";
    // The session cookie's value, its alphabet not checked yet: a value the
    // cache holds was verified, so it passed; any other is checked below.
    let unchecked = false;
    const credentials = bearerTransport.read(req);
    if (credentials.present) {
      via = "bearer";
      if (acceptBearer) token = credentials.token;
    } else if (cookie !== null) {
      token = cookieValue(req, cookiePrefix);
      unchecked = true;
    }
    // An API key: resolved by the keys alone, never as a session.
    if (
      keys !== null && via === "bearer" && token !== null && keys.claims(token)
    ) {
      return resolveKey(req, next, keys, token);
    }
    if (token === null) {
      const session = credentials.present
        ? { kind: "invalid", via } as const
        : ANONYMOUS;
      return proceed(req, next, stateOf(session, context));
    }
    let known: Identity | null | undefined;
    try {
      known = manager.peek(token);
    } catch {
      known = undefined; // resolve() below asks again and fails closed
    }
    if (known !== undefined) {
      return proceed(req, next, stateOf(settled(known, via), context));
    }
    let resolving: Promise<Identity | null>;
    try {
      resolving = manager.resolve(token);
    } catch (error) {
      resolving = Promise.reject(error);
    }
    // A malformed cookie is no cookie, as `CookieTransport.read` has it: a
    // value outside the token alphabet never resolves (the token's shape
    // and strict base64url refuse it before any crypto or store call), so
    // its alphabet is checked only when it did not, and a verified cookie
    // costs no regular expression.
    const malformed = () => unchecked && !isTokenValue(token);
    return resolving.then(
      (id) =>
        proceed(
          req,
          next,
          stateOf(
            id === null && malformed() ? ANONYMOUS : settled(id, via),
            context,
          ),
        ),
      (e) =>
        proceed(
          req,
          next,
          stateOf(malformed() ? ANONYMOUS : failed(e, via, context), context),
        ),
    );
  }

  /** An API key's identity (one store read), then on its way. */
  function resolveKey(
    req: Request,
    next: Next,
    keys: ApiKeys,
    token: string,
  ): Promise<Response> {
    let resolving: Promise<Identity | null>;
    try {
      resolving = keys.resolve(token);
    } catch (error) {
      resolving = Promise.reject(error);
    }
    return resolving.then(
      (id) => proceed(req, next, stateOf(settled(id, "bearer"), context)),
      (e) => proceed(req, next, stateOf(failed(e, "bearer", context), context)),
    );
  }

  /** The cross-origin check, the state, the handler, and renewal if due. */
  function proceed(
    req: Request,
    next: Next,
    state: RequestState,
  ): Response | Promise<Response> {
    const session = state.session;
    if (
      (session.kind !== "signedIn" || session.via === "cookie") &&
      unsafe(req.method) && !csrf.check(req)
    ) {
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
    requestStates.set(req, state);
    const renewable = sliding && session.kind === "signedIn" &&
      session.via === "cookie" && session.identity.binding === undefined;
    const finishing = binding !== null && binding.finishes(state);
    // Otherwise the handler's promise is answered as it is, with no frame
    // of ours around it.
    if (!renewable && !finishing) return next(req);
    return Promise.resolve(next(req)).then((response) => {
      const out = finishing ? binding.finish(response, state) : response;
      return state.changed || !renewable
        ? out
        : Promise.resolve(out).then((r) =>
          renewed(r, (session as { identity: Identity }).identity)
        );
    });
  }

  async function renewed(
    response: Response,
    identity: Identity,
  ): Promise<Response> {
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
      (cookie as CookieTransport).serialize(
        fresh.token,
        manager.secondsLeft(fresh.identity),
      ),
    );
    return out;
  }

  // As an async function would: whatever throws becomes a rejection.
  return (req, next) => {
    try {
      return read(req, next);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}
