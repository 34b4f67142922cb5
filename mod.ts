/**
 * portcullis: authentication and authorisation for Web-standard
 * `Request`/`Response` servers on Deno, Bun, Vercel Edge, Cloudflare Workers
 * and Node.
 *
 * - Sessions: HMAC-signed tokens over a cookie or `Authorization: Bearer`,
 *   revocable through a key-value store ({@linkcode SessionManager}).
 * - Authorisation: typed policies ({@linkcode definePolicy}).
 * - HTTP: {@linkcode identityMiddleware} and gates that fail closed
 *   ({@linkcode requireAuth}, {@linkcode authorize}, …).
 * - Passwords: {@linkcode PasswordAuthenticator} over a credential store.
 *
 * Stores that need a driver live on their own subpaths
 * (`@portcullis/auth/stores/sql`, `/stores/upstash`, …), so importing this
 * module loads no driver.
 *
 * @example Usage
 * ```ts
 * import {
 *   compose, currentUser, identityMiddleware, KVSessionStore, MemoryKV,
 *   requireAuth, SecretProvider, SessionManager,
 * } from "@portcullis/auth";
 *
 * const sessions = new SessionManager({
 *   secret: SecretProvider.fromValue("19CRqcgP/VC3Dlx2GK5guv7BIfJjXBwWoyeP1VwPfnI="),
 *   store: new KVSessionStore(new MemoryKV()),
 * });
 * const handler = compose(
 *   [identityMiddleware(sessions), requireAuth()],
 *   (req) => new Response(`hello ${currentUser(req)}`),
 * );
 * ```
 *
 * @module
 */

export { AuthError, type AuthErrorCode } from "./lib/auth_error.ts";

// Session layer
export {
  type FromEnvOptions,
  MIN_SECRET_BYTES,
  type PurposeKeys,
  type SecretInput,
  SecretProvider,
  type SigningKey,
} from "./lib/session/secret_provider.ts";
export {
  MAX_TOKEN_LENGTH,
  signToken,
  verifyToken,
} from "./lib/session/signed_token.ts";
export {
  DEFAULT_LIFETIME_SECONDS,
  type Identity,
  type IssuedSession,
  SESSION_PURPOSE,
  SessionManager,
  type SessionManagerOptions,
  type SlidingOptions,
} from "./lib/session/session_manager.ts";
export {
  KVSessionStore,
  type KVSessionStoreOptions,
  MIN_REVOCATION_TTL_SECONDS,
  type SessionStore,
} from "./lib/session/session_store.ts";
export type {
  KeyValueStore,
  PutOptions,
} from "./lib/session/key_value_store.ts";
export { MemoryKV, type MemoryKVOptions } from "./lib/session/memory_kv.ts";
export {
  DenoKV,
  type DenoKvAtomicLike,
  type DenoKvLike,
  type DenoKVOptions,
} from "./lib/session/deno_kv.ts";
export {
  CookieTransport,
  type CookieTransportOptions,
} from "./lib/session/cookie_transport.ts";
export {
  type BearerCredentials,
  BearerTransport,
} from "./lib/session/bearer_transport.ts";

// Authorisation layer
export {
  definePolicy,
  evaluatePolicy,
  type Policy,
  type PolicyVerdict,
  type Principal,
  principal,
} from "./lib/authz/policy.ts";

// Authentication layer (bcrypt and Argon2id live on their own subpaths:
// `@portcullis/auth/hashers/bcrypt`, `/hashers/argon2id`,
// `/hashers/argon2id-noble`, so this module loads no hashing library)
export type { PasswordHasher } from "./lib/authn/password_hasher.ts";
export type {
  CreateUserResult,
  CredentialStore,
  NewUserRecord,
  UpdateEmailOptions,
  UpdateEmailResult,
  UserRecord,
} from "./lib/authn/credential_store.ts";
export { MemoryCredentialStore } from "./lib/authn/memory_credential_store.ts";
export {
  Pbkdf2Hasher,
  type Pbkdf2HasherOptions,
  type Pbkdf2Route,
} from "./lib/authn/pbkdf2_hasher.ts";
export {
  selfTestHasher,
  type SelfTestOptions,
  type SelfTestReport,
} from "./lib/authn/hasher_self_test.ts";
export {
  MigrationHasher,
  type MigrationHasherOptions,
} from "./lib/authn/migration_hasher.ts";
export {
  MAX_EMAIL_LENGTH,
  normalizeEmail,
} from "./lib/authn/normalize_email.ts";
export {
  DEFAULT_MAX_PASSWORD_BYTES,
  DEFAULT_MIN_PASSWORD_LENGTH,
  PasswordPolicy,
  type PasswordPolicyOptions,
} from "./lib/authn/password_policy.ts";
export {
  type ChangePasswordInput,
  type LoginOptions,
  type LoginResult,
  PasswordAuthenticator,
  type PasswordAuthenticatorOptions,
  type PasswordThrottle,
  type RegisterRejectionReason,
  type RegisterResult,
  type VerifiedPassword,
} from "./lib/authn/password_authenticator.ts";

// Single-use tokens
export type {
  VerificationTokenRecord,
  VerificationTokenStore,
} from "./lib/verification/verification_token_store.ts";
export { MemoryVerificationTokenStore } from "./lib/verification/memory_verification_token_store.ts";
export {
  hashOneTimeToken,
  type IssueTokenInput,
  ONE_TIME_TOKEN_TTL_MS,
  OneTimeTokens,
  type OneTimeTokensOptions,
  type RedeemedToken,
  type RedeemOptions,
} from "./lib/verification/one_time_tokens.ts";
export {
  EMAIL_CHANGE_PURPOSE,
  EMAIL_VERIFICATION_PURPOSE,
  PASSWORD_RESET_PURPOSE,
  PURPOSE_TTL_MS,
} from "./lib/verification/token_purposes.ts";

// HTTP glue
export {
  compose,
  type Handler,
  type Middleware,
  type Next,
} from "./lib/http/middleware.ts";
export {
  errorResponse,
  escapeHtml,
  wantsHtml,
} from "./lib/http/error_response.ts";
export { type AuthEvent, logAuthEvent } from "./lib/http/auth_event.ts";
export {
  type CrossOriginOptions,
  CrossOriginProtection,
} from "./lib/http/cross_origin_protection.ts";
export {
  identityMiddleware,
  type IdentityOptions,
  type InstallableIdentityOptions,
} from "./lib/http/identity_middleware.ts";
export {
  allows,
  authorize,
  currentIdentity,
  currentUser,
  isAuthenticated,
  requireAuth,
  requireAuthenticated,
  type RequireAuthOptions,
  requireVerified,
} from "./lib/http/gates.ts";
export {
  type CheckedCredential,
  signIn,
  type SignInResult,
  signOut,
  type SignOutResult,
} from "./lib/http/sign_in.ts";
export { safeNextPath } from "./lib/http/safe_next_path.ts";
export { allowMethods } from "./lib/http/allow_methods.ts";
