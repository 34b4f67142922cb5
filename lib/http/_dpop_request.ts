// A request with a DPoP proof or the DPoP scheme (RFC 9449): the proof must
// hold (for the token, when one is sent), else 401 `invalid_dpop_proof`
// before any handler runs. A token under the DPoP scheme resolves only when
// bound to the proof's key; a proof without a token or a live session
// cookie (a sign-in) lets `signIn` bind the new token to that key, and so
// does a token under the DPoP scheme: a session it starts keeps the
// binding. Beside a Bearer token or a live session cookie the proof must
// hold and binds nothing.
//
// With server nonces on, a proof without the current nonce is answered 401
// `use_dpop_nonce` with a `DPoP-Nonce` header (RFC 9449 §9; the sign-in,
// the token-issuing request, answers it the same way, with the same code in
// its body as §8 has it), and an accepted proof whose nonce is about to
// expire hands the next one to the handler's answer (`nonce`).
import { BearerTransport } from "../session/bearer_transport.ts";
import { BoundSessions } from "../session/bound_sessions.ts";
import type { DpopVerifier } from "../session/dpop_proof.ts";
import {
  ANONYMOUS,
  failed,
  type IdentityContext,
  type SessionState,
  settled,
} from "./_request_state.ts";
import { errorResponse, storeUnavailable } from "./error_response.ts";

const bearerTransport = new BearerTransport();
const DEVICE = Object.freeze({ kind: "device" as const });
const DPOP_SCHEME = /^DPoP ([A-Za-z0-9\-._~+/]+=*)$/i;

/** Whether a request has a `DPoP` header or uses the DPoP scheme. */
export function usesDpop(req: Request): boolean {
  if (req.headers.has("dpop")) return true;
  const header = req.headers.get("authorization");
  return header !== null && header.length > 5 &&
    header.slice(0, 5).toLowerCase() === "dpop ";
}

/** The answer (a refusal), or the session and the proof's key. */
export async function dpopOutcome(
  req: Request,
  context: IdentityContext,
  dpop: DpopVerifier,
): Promise<
  Response | {
    session: SessionState;
    proofKey?: string;
    nonce?: string;
    bound?: boolean;
  }
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
    return { session: settled(identity, scheme), proofKey, nonce };
  } catch (error) {
    return { session: failed(error, scheme, context), proofKey, nonce };
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
export function withNonce(response: Response, nonce: string): Response {
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
