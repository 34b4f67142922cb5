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

/**
 * The MAC purpose label of tokens with this binding.
 *
 * @param binding The binding.
 * @returns `session.device` or `session.dpop.<jkt>`.
 */
export function bindingPurpose(binding: SessionBinding): string {
  return binding.kind === "device"
    ? "session.device"
    : `session.dpop.${binding.thumbprint}`;
}
