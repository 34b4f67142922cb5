/**
 * The session layer's options, constants and store shapes: what a user
 * needs to configure `SessionManager`, the stores and the transports beyond
 * the main entry.
 *
 * @example Usage
 * ```ts
 * import { KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "@portcullis/auth";
 * import { DEFAULT_LIFETIME_SECONDS, type SessionManagerOptions } from "@portcullis/auth/sessions";
 * import assert from "node:assert/strict";
 *
 * const options: SessionManagerOptions = {
 *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
 *   store: new KVSessionStore(new MemoryKV()),
 *   lifetimeSeconds: 3600,
 * };
 * assert.equal(new SessionManager(options).lifetimeSeconds, 3600);
 * assert.equal(DEFAULT_LIFETIME_SECONDS, 7 * 24 * 3600);
 * ```
 *
 * @module
 */
export {
  type FromEnvOptions,
  MIN_SECRET_BYTES,
  type PurposeKeys,
  type SecretInput,
  type SigningKey,
} from "../secrets/secret_provider.ts";
export {
  DEFAULT_LIFETIME_SECONDS,
  type IssuedSession,
  type IssueOptions,
  type SessionManagerOptions,
  type SlidingOptions,
} from "./session_manager.ts";
export {
  type KVSessionStoreOptions,
  MIN_REVOCATION_TTL_SECONDS,
} from "./session_store.ts";
export type { PutOptions } from "../kv/key_value_store.ts";
export type { MemoryKVOptions } from "../kv/memory_kv.ts";
export type {
  DenoKvAtomicLike,
  DenoKvLike,
  DenoKVOptions,
} from "../kv/deno_kv.ts";
export type { CookieTransportOptions } from "./cookie_transport.ts";
export type { BearerCredentials } from "./bearer_transport.ts";
export {
  type DpopNonceOptions,
  type DpopOptions,
  type DpopRefusal,
  type DpopResult,
  DpopVerifier,
} from "../binding/dpop_proof.ts";
export type { ProofAlgorithm } from "../binding/proof_jwt.ts";
export {
  ApiKeys,
  type ApiKeysOptions,
  type ApiKeyStore,
  type StoredApiKey,
} from "./api_keys.ts";
export {
  checkApiKeyPrefix,
  DEFAULT_API_KEY_PREFIX,
  hashApiKey,
  mintApiKey,
  type MintedApiKey,
  parseApiKey,
} from "./api_key_format.ts";
