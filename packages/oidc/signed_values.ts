/**
 * The signer this package takes for short-lived, purpose-bound values.
 *
 * @module
 */

/**
 * Signs and verifies opaque values for **one** purpose. The application
 * builds it from a key derived for that purpose alone (with portcullis:
 * `signToken(keys.current, "oidc-state", bytes)` and
 * `verifyToken(keys, "oidc-state", value)` over
 * `secret.keys("oidc-state")`), so a value signed here never passes as a
 * session, a flash message or anything else, and nothing else passes here.
 * The package adds its own expiry inside the payload.
 */
export interface PurposeSigner {
  /** Signs bytes into a URL- and cookie-safe string. */
  sign(payload: Uint8Array): Promise<string>;
  /** Answers the signed bytes, or `null` for anything forged or malformed. */
  verify(value: string): Promise<Uint8Array | null>;
}
