/**
 * OpenID Connect sign-in for portcullis, over `oauth4webapi` (Web APIs
 * only, so it runs on every runtime portcullis does): the authorization
 * code flow with PKCE (S256), `state` and `nonce` bound to the browser in
 * one short-lived value signed for that purpose, `iss` checked (RFC 9207),
 * the ID token validated; the account-linking rule that never links by
 * email silently; and the identity store's protocol.
 *
 * Authentication-layer code: it answers who the provider says the user is;
 * the application maps that to a user and calls `signIn(req, subject)` as
 * after a password.
 *
 * @example Usage
 * ```ts
 * import { decideAccount } from "@portcullis/oidc";
 * const d = decideAccount({
 *   identity: { provider: "op", subject: "s1", email: "new@example.com", emailVerified: true },
 *   linkedSubject: null, currentSubject: null, userWithEmail: null,
 * });
 * console.assert(d.kind === "create");
 * ```
 *
 * @module
 */
export {
  OidcClient,
  type OidcClientOptions,
  type OidcIdentity,
  type OidcOutcome,
  type OidcProviderConfig,
  type OidcRefusal,
  type OidcStart,
  type OidcStartOptions,
} from "./oidc_client.ts";
export {
  type AccountDecision,
  type AccountFacts,
  decideAccount,
} from "./account_decision.ts";
export { identityLifecyclePart } from "./identity_lifecycle.ts";
export type {
  AccountLifecyclePart,
  AddressProofKind,
  AddressProven,
} from "@portcullis/auth/passwords";
export {
  type IdentityRecord,
  type IdentityStore,
  MemoryIdentityStore,
} from "./identity_store.ts";
export type { PurposeSigner } from "./signed_values.ts";
