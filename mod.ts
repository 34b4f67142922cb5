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
 * This entry holds what an application writes by hand. The rest lives on
 * subpaths of this package: `/sessions` (options and store shapes),
 * `/tokens` (signed values of your own), `/passwords` (policy, migration,
 * self-test), `/verification` (single-use mail tokens), `/http`
 * (cross-origin protection, escaping), `/policies` (evaluating policies),
 * `/adapters/node` and `/adapters/hono`. Stores and hashers that need an
 * npm driver are packages of their own (`@portcullis/sql`,
 * `@portcullis/redis`, `@portcullis/upstash`, `@portcullis/libsql-kv`,
 * `@portcullis/cloudflare`, `@portcullis/hashers`), so this package has no
 * npm dependency at all.
 *
 * @example Usage
 * ```ts
 * import {
 *   compose, currentUser, identityMiddleware, KVSessionStore, MemoryKV,
 *   requireAuth, SecretProvider, SessionManager,
 * } from "@portcullis/auth";
 * import assert from "node:assert/strict";
 *
 * const sessions = new SessionManager({
 *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
 *   store: new KVSessionStore(new MemoryKV()),
 * });
 * const handler = compose(
 *   [identityMiddleware(sessions), requireAuth()],
 *   (req) => new Response(`hello ${currentUser(req)}`),
 * );
 * const token = await sessions.issue("user_1");
 * const ok = await handler(new Request("https://app.example/", {
 *   headers: { authorization: `Bearer ${token}` },
 * }));
 * assert.equal(await ok.text(), "hello user_1");
 * const anonymous = await handler(new Request("https://app.example/"));
 * assert.equal(anonymous.status, 401);
 * ```
 *
 * @module
 */

export {
  AuthError,
  type AuthErrorCode,
  type AuthErrorConstructor,
  type AuthErrorOf,
  type AuthErrorOptions,
  type AuthErrorReasons,
} from "./lib/auth_error.ts";

// Session layer
export { SecretProvider } from "./lib/secrets/secret_provider.ts";
export {
  type Identity,
  SessionManager,
} from "./lib/session/session_manager.ts";
export {
  KVSessionStore,
  type SessionStore,
} from "./lib/session/session_store.ts";
export type { KeyValueStore } from "./lib/kv/key_value_store.ts";
export { MemoryKV } from "./lib/kv/memory_kv.ts";
export { DenoKV } from "./lib/kv/deno_kv.ts";
export { CookieTransport } from "./lib/session/cookie_transport.ts";
export { BearerTransport } from "./lib/session/bearer_transport.ts";

// Authorisation layer
export {
  definePolicy,
  type Policy,
  type Principal,
} from "./lib/authz/policy.ts";

// Authentication layer
export type { PasswordHasher } from "./lib/authn/password_hasher.ts";
export type { CredentialStore } from "./lib/authn/credential_store.ts";
export { MemoryCredentialStore } from "./lib/authn/memory_credential_store.ts";
export { Pbkdf2Hasher } from "./lib/authn/pbkdf2_hasher.ts";
export { normalizeEmail } from "./lib/authn/normalize_email.ts";
export {
  PasswordAuthenticator,
  type RegisterResult,
} from "./lib/authn/password_authenticator.ts";

// HTTP glue
export {
  compose,
  type Handler,
  type Middleware,
} from "./lib/http/middleware.ts";
export { errorResponse } from "./lib/_common/error_response.ts";
export type { AuthEvent } from "./lib/http/auth_event.ts";
export { identityMiddleware } from "./lib/http/identity_middleware.ts";
export {
  currentIdentity,
  currentUser,
  isAuthenticated,
} from "./lib/http/current_identity.ts";
export {
  requireAuth,
  requireAuthenticated,
  requirePerson,
} from "./lib/http/gates.ts";
export { allows, authorize, requireVerified } from "./lib/http/policy_gates.ts";
export { signIn, signOut } from "./lib/http/sign_in.ts";
export { safeNextPath } from "./lib/http/safe_next_path.ts";
export { allowMethods } from "./lib/http/allow_methods.ts";
