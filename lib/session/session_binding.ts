/**
 * Sessions bound to a key the client holds, and how the binding rides in a
 * token that stays `subject|jti|expiry`: in the MAC input, beside the jti.
 * An ordinary session token is MACed under the purpose `session`; a
 * device-bound cookie (DBSC) under `session.device`; a DPoP-bound token
 * under `session.dpop.<jkt>`, where `<jkt>` is the RFC 7638 thumbprint of
 * the client's key. A bound token presented as an ordinary one (a DPoP
 * token as `Bearer`, a bound cookie copied into the unbound cookie) fails
 * its MAC, as does a DPoP token presented with a proof by another key.
 *
 * @module
 */

/** What a session is bound to. */
export type SessionBinding =
  | { readonly kind: "device" }
  | { readonly kind: "dpop"; readonly thumbprint: string };

/** The MAC purpose label of tokens with this binding. */
export function bindingPurpose(binding: SessionBinding): string {
  return binding.kind === "device"
    ? "session.device"
    : `session.dpop.${binding.thumbprint}`;
}

/**
 * Mints a token with a binding. Not public API: the HTTP glue's.
 * `(binding, subject, expiresAt, session?)`; without `session` a new jti
 * begins now.
 */
export const MINT_BOUND: unique symbol = Symbol("portcullis.mintBound");
/** Resolves a token with a binding. Not public API: the HTTP glue's. */
export const RESOLVE_BOUND: unique symbol = Symbol("portcullis.resolveBound");
/**
 * Answers a device-bound token's identity from memory when it can (see
 * `PEEK_SESSION`). Not public API.
 */
export const PEEK_DEVICE: unique symbol = Symbol("portcullis.peekDevice");
/**
 * Whether a session (subject, jti, issue time) is neither revoked nor
 * signed out everywhere: one store round trip. Not public API.
 */
export const IS_LIVE: unique symbol = Symbol("portcullis.isLive");
/**
 * Signs or verifies a short value of the session keys under a purpose of
 * its own (device-binding challenges). Not public API.
 */
export const SIGN_VALUE: unique symbol = Symbol("portcullis.signValue");
/** See {@linkcode SIGN_VALUE}. Not public API. */
export const VERIFY_VALUE: unique symbol = Symbol("portcullis.verifyValue");
