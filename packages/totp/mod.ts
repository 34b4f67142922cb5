/**
 * TOTP second factor for portcullis (RFC 6238 over `otpauth`): enrolment
 * with an `otpauth://` URI and a QR code rendered server-side as SVG
 * (`qrcode-generator`), ten single-use recovery codes stored hashed, codes
 * accepted once per time step with ±1 step of skew, and a signed "second
 * factor pending" value between the password and the session.
 *
 * This package is Authentication-layer code: it checks a factor and answers
 * a subject; the application then calls `signIn(req, subject)` as it does
 * after a password. It never sees a session.
 *
 * @example Usage
 * ```ts
 * import { deriveSecretKey, MemoryTotpStore, TotpAuthenticator } from "@portcullis/totp";
 * const hmac = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
 * const totp = new TotpAuthenticator({
 *   store: new MemoryTotpStore(),
 *   issuer: "Example",
 *   secretKeys: [await deriveSecretKey(hmac)],
 *   pending: { sign: async () => "signed", verify: async () => null },
 * });
 * console.assert(!(await totp.isEnabled("user_1")));
 * ```
 *
 * @module
 */
export type { PendingSecondFactor } from "./pending_value.ts";
export {
  type Enrolment,
  type SecondFactor,
  TotpAuthenticator,
  type TotpAuthenticatorOptions,
} from "./totp_authenticator.ts";
export {
  MemoryTotpStore,
  type TotpRecord,
  type TotpStore,
} from "./totp_store.ts";
export { deriveSecretKey } from "./secret_box.ts";
export type { PurposeSigner } from "./signed_values.ts";
export { RECOVERY_CODE_COUNT } from "./recovery_codes.ts";
