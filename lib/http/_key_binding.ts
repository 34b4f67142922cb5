// Sessions bound to a key on the request path: the one question the
// per-request path asks ("is this request's binding satisfied?") and what
// the answer adds after the handler. The binding room (lib/binding) holds
// the proofs, keys and bound tokens; this file turns them into request
// states and HTTP answers, which only lib/http does.
//
// DPoP (RFC 9449): a request with a DPoP proof or the DPoP scheme must
// hold its proof (for the token, when one is sent), else 401
// `invalid_dpop_proof` before any handler runs. A token under the DPoP
// scheme resolves only when bound to the proof's key; a proof without a
// token or a live session cookie (a sign-in) lets `signIn` bind the new
// token to that key, and so does a token under the DPoP scheme: a session
// it starts keeps the binding. Beside a Bearer token or a live session
// cookie the proof must hold and binds nothing. With server nonces on, a
// proof without the current nonce is answered 401 `use_dpop_nonce` with a
// `DPoP-Nonce` header (RFC 9449 §9), and an accepted proof whose nonce is
// about to expire hands the next one to the handler's answer.
//
// Device-bound sessions (DBSC): the registration and refresh endpoints are
// answered here; a request with a bound cookie (and no Authorization
// header) is that cookie's session, from memory when the manager can tell.
// After the handler, a sign-in or sign-out clears the bound cookie the
// request carried, as does a bound cookie that no longer holds; the answer
// to a fresh sign-in that sets the ordinary session cookie (a browser's)
// carries the registration offer, and no other answer does: the offer's
// challenge is the one-time ticket that binding needs, so a copied cookie
// (which never signs in afresh) cannot be bound to a thief's key, and an
// API client that takes its token from a JSON body is never handed a
// challenge it cannot use.
import { BearerTransport } from "../session/bearer_transport.ts";
import { BoundSessions } from "../binding/bound_sessions.ts";
import type { DpopVerifier } from "../binding/dpop_proof.ts";
import type { DeviceBoundSessions } from "../binding/device_bound_sessions.ts";
import type { Identity } from "../session/session_manager.ts";
import {
  ANONYMOUS,
  failed,
  type IdentityContext,
  type RequestState,
  type SessionState,
  settled,
} from "./_request_state.ts";
import { errorResponse, storeUnavailable } from "../_common/error_response.ts";

/** What a request's key binding came to, when it carried one. */
export interface BindingOutcome {
  /** The request's session. */
  session: SessionState;
  /** The DPoP key a session started by this request is bound to. */
  proofKey?: string;
  /** The next DPoP nonce, for the answer. */
  nonce?: string;
  /** The request carried a device-bound cookie. */
  bound: boolean;
}

/**
 * The per-request path's one question about key binding, and what the
 * answer adds after the handler.
 */
export interface RequestBinding {
  /**
   * Whether this request's binding is satisfied: `null` when it carries no
   * key-bound credential and asks no binding endpoint (the ordinary path
   * goes on); an answer of the binding's own (an endpoint, a refused
   * proof); else the session it came to, without a promise when memory can
   * tell.
   *
   * @param req The request.
   */
  check(
    req: Request,
  ):
    | Response
    | BindingOutcome
    | Promise<Response | BindingOutcome>
    | null;
  /**
   * Whether {@linkcode RequestBinding.finish} has anything to add to this
   * request's answer.
   *
   * @param state The request's state.
   */
  finishes(state: RequestState): boolean;
  /**
   * The handler's answer with what the binding adds (the registration
   * offer, a cleared bound cookie, the next DPoP nonce).
   *
   * @param response The handler's answer.
   * @param state The request's state.
   */
  finish(response: Response, state: RequestState): Promise<Response>;
}

const DEVICE = Object.freeze({ kind: "device" as const });

/**
 * The request binding of one middleware, or `null` when neither DPoP nor
 * device-bound sessions are on.
 *
 * @param context The middleware's resolved options.
 * @returns The binding.
 */
export function requestBinding(
  context: IdentityContext,
): RequestBinding | null {
  const { dpop, device } = context;
  if (dpop === null && device === null) return null;

  function checkDevice(
    req: Request,
    device: DeviceBoundSessions,
  ):
    | Response
    | BindingOutcome
    | Promise<Response | BindingOutcome>
    | null {
    if (req.method === "POST") {
      const answer = device.handle(req);
      if (answer !== null) return answer;
    }
    // With an Authorization header only it is used (never the cookie).
    if (req.headers.has("authorization")) return null;
    const token = device.cookie.read(req);
    if (token === null) return null;
    let known: Identity | null | undefined;
    try {
      known = device.bound.peekDevice(token);
    } catch {
      known = undefined; // resolve() below asks again and fails closed
    }
    if (known !== undefined) {
      return { session: settled(known, "cookie"), bound: true };
    }
    let resolving: Promise<Identity | null>;
    try {
      resolving = device.bound.resolve(DEVICE, token);
    } catch (error) {
      resolving = Promise.reject(error);
    }
    return resolving.then(
      (id) => ({ session: settled(id, "cookie"), bound: true }),
      (e) => ({ session: failed(e, "cookie", context), bound: true }),
    );
  }

  return {
    check(req) {
      if (dpop !== null && usesDpop(req)) {
        return dpopOutcome(req, context, dpop);
      }
      return device === null ? null : checkDevice(req, device);
    },
    finishes(state) {
      return device !== null || state.nonce !== undefined;
    },
    async finish(response, state) {
      const out = device === null
        ? response
        : await finishDevice(device, response, state);
      // The proof's nonce is of the previous window: the next one rides on
      // this answer, so the client moves on without a refusal.
      return state.nonce === undefined ? out : withNonce(out, state.nonce);
    },
  };
}

const bearerTransport = new BearerTransport();
const DPOP_SCHEME = /^DPoP ([A-Za-z0-9\-._~+/]+=*)$/i;

/** Whether a request has a `DPoP` header or uses the DPoP scheme. */
function usesDpop(req: Request): boolean {
  if (req.headers.has("dpop")) return true;
  const header = req.headers.get("authorization");
  return header !== null && header.length > 5 &&
    header.slice(0, 5).toLowerCase() === "dpop ";
}

/** The answer (a refusal), or the session and the proof's key. */
async function dpopOutcome(
  req: Request,
  context: IdentityContext,
  dpop: DpopVerifier,
): Promise<
  Response | BindingOutcome
> {
  const header = req.headers.get("authorization");
  let token: string | null = null;
  let scheme: "dpop" | "bearer" | null = null;
  if (header !== null) {
    const m = header.length <= 4096 + 5 ? DPOP_SCHEME.exec(header) : null;
    if (m !== null) {
      token = m[1];
      scheme = "dpop";
    } else {
      token = bearerTransport.read(req).token;
      if (token === null) return invalidProof(req, dpop, "malformed");
      scheme = "bearer";
    }
  }
  let thumbprint: string;
  let nonce: string | undefined;
  try {
    const proof = await dpop.verify(req.headers.get("dpop"), req, token);
    if (!proof.ok) {
      context.emit({
        type: "dpop_proof_refused",
        reason: proof.reason,
        path: new URL(req.url).pathname,
      });
      return proof.reason === "nonce"
        ? useNonce(req, dpop, proof.nonce)
        : invalidProof(req, dpop, proof.reason);
    }
    thumbprint = proof.thumbprint;
    nonce = proof.nonce;
  } catch (error) {
    // The replay store failed: the proof is not accepted (fail closed).
    failed(error, scheme ?? "dpop", context);
    return storeUnavailable(req);
  }
  if (scheme === null) {
    // A sign-in: the cookie, if any, still says who is asking (a
    // device-bound one first, as on a request without a proof).
    const device = context.cookie === null ? null : context.device;
    const boundToken = device?.cookie.read(req) ?? null;
    const cookieToken = boundToken ?? context.cookie?.read(req) ?? null;
    let session: SessionState = ANONYMOUS;
    if (cookieToken !== null) {
      try {
        session = settled(
          boundToken !== null
            ? await device!.bound.resolve(DEVICE, boundToken)
            : await context.manager.resolve(cookieToken),
          "cookie",
        );
      } catch (error) {
        session = failed(error, "cookie", context);
      }
    }
    // The proof binds a session begun by someone not signed in. Beside a
    // live session cookie it binds nothing: a browser's session started
    // again ("sign out everywhere else", a password change) stays a cookie
    // session, never one bound to a key whose token no cookie carries.
    const proofKey = session.kind === "signedIn" ? undefined : thumbprint;
    return { session, proofKey, nonce, bound: boundToken !== null };
  }
  // Under the DPoP scheme the proof's key stays the request's: a session
  // this request starts (a sign-in again, "sign out everywhere else", a
  // password change) is bound to the same key, never handed out as a plain
  // Bearer token.
  const proofKey = scheme === "dpop" ? thumbprint : undefined;
  try {
    const identity = scheme === "dpop"
      ? await BoundSessions.of(context.manager).resolve(
        { kind: "dpop", thumbprint },
        token!,
      )
      : await context.manager.resolve(token!);
    return {
      session: settled(identity, scheme),
      proofKey,
      nonce,
      bound: false,
    };
  } catch (error) {
    return {
      session: failed(error, scheme, context),
      proofKey,
      nonce,
      bound: false,
    };
  }
}

/**
 * The answer's copy with a `DPoP-Nonce` header (the handler's headers may
 * be immutable, and its object shared). An answer that cannot be copied (a
 * 101 upgrade) goes out as it is: the client's nonce still holds for the
 * rest of its window, and a refusal hands it the next one after that.
 *
 * @param response The handler's answer.
 * @param nonce The nonce the client is to use next.
 * @returns The answer with the header, or the answer itself.
 */
function withNonce(response: Response, nonce: string): Response {
  try {
    const out = new Response(response.body, response);
    out.headers.set("dpop-nonce", nonce);
    return out;
  } catch {
    return response;
  }
}

function useNonce(
  req: Request,
  dpop: DpopVerifier,
  nonce: string | undefined,
): Response {
  const headers: Record<string, string> = {
    "www-authenticate":
      `DPoP error="use_dpop_nonce", error_description="The proof must carry the nonce of the DPoP-Nonce header", algs="${
        dpop.algorithms.join(" ")
      }"`,
  };
  // Without a nonce (it could not be made) the refusal stands all the same.
  if (nonce !== undefined) headers["dpop-nonce"] = nonce;
  return errorResponse(
    req,
    401,
    "use_dpop_nonce",
    "DPoP proof refused: it must carry the nonce of the DPoP-Nonce header",
    headers,
  );
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

async function finishDevice(
  device: DeviceBoundSessions,
  response: Response,
  state: RequestState,
): Promise<Response> {
  const session = state.session;
  const offer = state.freshSignIn === true && session.kind === "signedIn" &&
    session.via === "cookie" && session.identity.binding === undefined &&
    setsSessionCookie(response, state.context.cookie!.name);
  // A bound cookie that no longer holds is cleared too: the browser then
  // renews its session (moved on to another jti by a sign-in elsewhere)
  // at once, instead of looking signed out until the cookie expires.
  const clear = state.boundCookie === true &&
    (state.changed || session.kind === "invalid");
  if (!offer && !clear) return response;
  const out = new Response(response.body, response);
  if (clear) out.headers.append("set-cookie", device.cookie.clear());
  if (offer) {
    try {
      out.headers.set(
        "secure-session-registration",
        await device.registrationHeader(session.identity),
      );
    } catch {
      // Without the offer the session works unbound, as without the option.
    }
  }
  return out;
}

/** Whether an answer sets (not clears) the ordinary session cookie. */
function setsSessionCookie(response: Response, name: string): boolean {
  const prefix = `${name}=`;
  return response.headers.getSetCookie().some((c) =>
    c.startsWith(prefix) && c.length > prefix.length && c[prefix.length] !== ";"
  );
}
