/**
 * Low-level signed tokens, for values an application signs itself (flash
 * messages, links, short-lived state): the wire form
 * `v1.<kid>.<base64url(payload)>.<base64url(HMAC-SHA256)>` with a purpose
 * bound into the MAC and a key derived per purpose.
 *
 * The `session` purpose is reserved (and `session.*`, `dbsc.*`, `dpop.*`):
 * sessions and the nonces of their proofs are minted only by the library,
 * so no caller can forge one with a payload of its choosing through these
 * functions.
 *
 * @example Usage
 * ```ts
 * import { SecretProvider } from "@portcullis/auth";
 * import { signToken, verifyToken } from "@portcullis/auth/tokens";
 * import assert from "node:assert/strict";
 *
 * const secret = SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32)));
 * const keys = await secret.keys("flash");
 * const token = await signToken(keys.current, "flash", new TextEncoder().encode("saved"));
 * const payload = await verifyToken(keys, "flash", token);
 * assert.equal(new TextDecoder().decode(payload!), "saved");
 * assert.equal(await verifyToken(keys, "flash", token + "x"), null);
 * await assert.rejects(() => signToken(keys.current, "session", new Uint8Array()), RangeError);
 * ```
 *
 * @module
 */
import type { PurposeKeys, SigningKey } from "../secrets/secret_provider.ts";
import * as raw from "./signed_token.ts";

export { MAX_TOKEN_LENGTH } from "./signed_token.ts";
export type { PurposeKeys, SigningKey } from "../secrets/secret_provider.ts";

// The purposes sessions use (SessionManager's SESSION_PURPOSE, "session",
// the bound sessions' "session.*" and "dbsc.*", the DPoP nonces'
// "dpop.nonce" under "dpop.*"), named here rather than imported so that
// lib/tokens stays below the session layer.
function refuseReserved(purpose: string): void {
  if (
    purpose === "session" || purpose?.startsWith?.("session.") ||
    purpose?.startsWith?.("dbsc.") || purpose?.startsWith?.("dpop.")
  ) {
    throw new RangeError(
      `The "${purpose}" purpose is reserved: sessions and their proofs' nonces are minted and checked by the library`,
    );
  }
  if (typeof purpose !== "string" || purpose === "" || purpose.includes(":")) {
    throw new RangeError(
      `A token purpose must be a non-empty string without ":": received "${purpose}"`,
    );
  }
}

/**
 * Signs a payload for one purpose.
 *
 * @param key The current signing key of that purpose (`(await secret.keys(purpose)).current`).
 * @param purpose The purpose label bound into the MAC input; not `"session"`.
 * @param payload The bytes to carry (readable by anyone holding the token).
 * @returns The token.
 * @throws {RangeError} For the reserved `"session"` purpose or an empty one.
 */
export function signToken(
  key: SigningKey,
  purpose: string,
  payload: Uint8Array,
): Promise<string> {
  try {
    refuseReserved(purpose);
  } catch (error) {
    return Promise.reject(error);
  }
  return raw.signToken(key, purpose, payload);
}

/**
 * Verifies a token of one purpose: length and shape first, then the MAC
 * (constant time), and only then is the payload decoded.
 *
 * @param keys The purpose's keys (current and previous, by kid).
 * @param purpose The purpose the token must have been minted for; not
 * `"session"` (use `SessionManager.resolve`).
 * @param token The presented token.
 * @returns The payload bytes, or `null` for any bad token.
 * @throws {RangeError} For the reserved `"session"` purpose or an empty one.
 */
export function verifyToken(
  keys: PurposeKeys,
  purpose: string,
  token: string,
): Promise<Uint8Array | null> {
  try {
    refuseReserved(purpose);
  } catch (error) {
    return Promise.reject(error);
  }
  return raw.verifyToken(keys, purpose, token);
}
