/**
 * Passkeys (WebAuthn) for portcullis over `@simplewebauthn/server`:
 * registration of discoverable credentials, sign-in without a username,
 * one-time challenges signed for their own purpose, origin, RP id, user
 * verification and signature-counter checks. The browser side is
 * `@simplewebauthn/browser`, bundled into one ES module the application
 * serves itself (`@portcullis/passkeys/browser-script`), no CDN.
 *
 * Authentication-layer code: it answers whose passkey signed; the
 * application calls `signIn(req, subject)` as after a password.
 *
 * @example Usage
 * ```ts
 * import { MemoryPasskeyStore, PasskeyAuthenticator } from "@portcullis/passkeys";
 * const store = new MemoryPasskeyStore();
 * const passkeys = new PasskeyAuthenticator({
 *   rpId: "localhost", rpName: "Example", origins: ["http://localhost:8000"],
 *   store, challenges: store,
 *   signer: { sign: async () => "signed", verify: async () => null },
 * });
 * console.assert((await passkeys.authenticate({})).kind === "refused");
 * ```
 *
 * @module
 */
export {
  type CreationOptionsJSON,
  PasskeyAuthenticator,
  type PasskeyAuthenticatorOptions,
  type PasskeyOutcome,
  type PasskeyRefusal,
  type RequestOptionsJSON,
} from "./passkey_authenticator.ts";
export {
  type ChallengeStore,
  MemoryPasskeyStore,
  type PasskeyRecord,
  type PasskeyStore,
} from "./passkey_store.ts";
export { passkeyLifecyclePart } from "./passkey_lifecycle.ts";
export type {
  AccountLifecyclePart,
  AddressProofKind,
  AddressProven,
} from "@portcullis/auth/passwords";
export type { PurposeSigner } from "./signed_values.ts";
