/**
 * Issues, resolves and revokes signed session tokens.
 *
 * @module
 */
import { GuardedStore } from "./_guarded_store.ts";
import type { PurposeKeys } from "./secret_provider.ts";
import {
  checkSubject,
  encodeSessionPayload,
  type Identity,
  ISSUE_SESSION,
  type IssuedSession,
  newJti,
  parseSessionPayload,
  PEEK_SESSION,
} from "./session_payload.ts";
import {
  type CheckedOptions,
  checkOptions,
  renewedExpiry,
  type SessionManagerOptions,
  type SlidingOptions,
  withinTimes,
} from "./session_options.ts";
import { MAX_TOKEN_LENGTH, signToken, verifyToken } from "./signed_token.ts";
import {
  bindingPurpose,
  IS_LIVE,
  MINT_BOUND,
  PEEK_DEVICE,
  RESOLVE_BOUND,
  type SessionBinding,
  SIGN_VALUE,
  VERIFY_VALUE,
} from "./session_binding.ts";
import { VerifiedTokenCache } from "./verified_token_cache.ts";

export type { Identity, IssuedSession, SessionManagerOptions, SlidingOptions };
export { ISSUE_SESSION, PEEK_SESSION };
export { DEFAULT_LIFETIME_SECONDS } from "./session_options.ts";

/** The purpose label of session tokens (bound into the MAC). */
export const SESSION_PURPOSE = "session";

/**
 * Issues and resolves session tokens. A token is
 * `v1.<kid>.<base64url(subject|jti|expiry)>.<base64url(HMAC-SHA256)>`,
 * opaque to clients. Resolution checks, in order: length and shape, the MAC
 * (constant time), the payload's strict form, expiry, and then one
 * round trip to the store for revocation.
 *
 * @example Usage
 * ```ts
 * import { KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "@portcullis/auth";
 * import assert from "node:assert/strict";
 * const sessions = new SessionManager({
 *   secret: SecretProvider.fromValue("19CRqcgP/VC3Dlx2GK5guv7BIfJjXBwWoyeP1VwPfnI="),
 *   store: new KVSessionStore(new MemoryKV()),
 * });
 * const token = await sessions.issue("user_1");
 * assert.equal((await sessions.resolve(token))?.subject, "user_1");
 * await sessions.revoke(token);
 * assert.equal(await sessions.resolve(token), null);
 * ```
 */
export class SessionManager {
  #o: CheckedOptions;
  #keys: PurposeKeys | undefined;
  #store: GuardedStore | null;
  #cache: VerifiedTokenCache;
  #deviceCache: VerifiedTokenCache;
  #issueFloor = 0;

  /**
   * Checks the options once; misuse throws here, not per request.
   *
   * @param options See {@linkcode SessionManagerOptions}.
   * @throws {TypeError} When `secret` or `store` is missing.
   * @throws {RangeError} When a lifetime is not a positive whole number.
   */
  constructor(options: SessionManagerOptions) {
    const o = this.#o = checkOptions(options);
    this.#store = o.store && new GuardedStore(o.store, o.storeTimeoutMs);
    this.#cache = new VerifiedTokenCache(o.cacheSize);
    this.#deviceCache = new VerifiedTokenCache(o.cacheSize);
  }

  /** The token lifetime in seconds. */
  get lifetimeSeconds(): number {
    return this.#o.lifetime;
  }

  /** Whether tokens can be revoked (a store was given). */
  get revocable(): boolean {
    return this.#store !== null;
  }

  /** Whether sliding renewal is on (see {@linkcode SessionManager.renew}). */
  get sliding(): boolean {
    return this.#o.sliding !== null;
  }

  /**
   * Seconds until an identity's token expires, by this manager's clock: the
   * `Max-Age` of its cookie.
   *
   * @param identity An identity.
   * @returns Whole seconds, at least 0.
   */
  secondsLeft(identity: Identity): number {
    return Math.max(0, identity.expiresAt - Math.ceil(this.#o.now() / 1000));
  }

  /**
   * Mints a token for a subject, with a new jti.
   *
   * @param subject A non-empty string of at most 255 UTF-8 bytes, without
   * `|` or control characters.
   * @returns The opaque token.
   * @throws {AuthError} `INVALID_SUBJECT` for a subject outside those rules.
   */
  async issue(subject: string): Promise<string> {
    return (await this[ISSUE_SESSION](subject)).token;
  }

  /**
   * {@linkcode SessionManager.issue} with the identity the token carries;
   * for the HTTP glue, not public API.
   *
   * @param subject See {@linkcode SessionManager.issue}.
   * @returns The token and its identity.
   */
  [ISSUE_SESSION](subject: string): Promise<IssuedSession> {
    checkSubject(subject);
    const now = this.#o.now();
    const issuedAt = Math.max(Math.floor(now), this.#issueFloor);
    const expiresAt = Math.floor(issuedAt / 1000) + this.#o.lifetime;
    return this.#mint(
      subject,
      newJti(issuedAt, this.#o.random(16)),
      issuedAt,
      expiresAt,
    );
  }

  /**
   * Resolves a token to its identity.
   *
   * @param token The presented token (any string).
   * @returns The identity, or `null` for a token that is malformed,
   * tampered, signed by an unknown key, expired or revoked.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the revocation store fails:
   * callers must not treat that as signed in (the gates answer 503).
   */
  resolve(token: string): Promise<Identity | null> {
    // The warm path (a token this manager verified before) stays free of
    // async frames: it runs on every authenticated request.
    const cached = this.#cache.get(token);
    if (cached !== undefined) return this.#checkLive(cached);
    return this.#resolveCold(token);
  }

  /**
   * {@linkcode SessionManager.resolve} without a promise, where memory can
   * answer; for the HTTP glue, not public API.
   *
   * @param token The presented token.
   * @returns The identity; `null` for a remembered token that expired or is
   * known revoked; `undefined` when only `resolve` can tell (a token not
   * seen before, or a store that must be asked).
   */
  [PEEK_SESSION](token: string): Identity | null | undefined {
    return this.#peek(this.#cache, token);
  }

  #peek(
    cache: VerifiedTokenCache,
    token: string,
  ): Identity | null | undefined {
    const id = cache.get(token);
    if (id === undefined) return undefined;
    if (this.#o.now() >= id.expiresAt * 1000) return null;
    if (this.#store === null) return id;
    const revoked = this.#store.peek(id.subject, id.jti, id.issuedAt);
    return revoked === undefined ? undefined : revoked ? null : id;
  }

  // One async function (fewer microtasks than chained thens); memory first.
  async #resolveCold(token: string): Promise<Identity | null> {
    if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) {
      return null;
    }
    const id = await this.#verify(token);
    if (id === null) return null;
    this.#cache.set(token, id);
    if (this.#o.now() >= id.expiresAt * 1000) return null;
    const store = this.#store;
    if (store === null) return id;
    return (store.peek(id.subject, id.jti, id.issuedAt) ??
        await store.isRevoked(id.subject, id.jti, id.issuedAt))
      ? null
      : id;
  }

  /** Expiry, then one store round trip for revocation. */
  #checkLive(identity: Identity): Promise<Identity | null> {
    if (this.#o.now() >= identity.expiresAt * 1000) {
      return Promise.resolve(null);
    }
    const store = this.#store;
    if (store === null) return Promise.resolve(identity);
    return store
      .isRevoked(identity.subject, identity.jti, identity.issuedAt)
      .then((revoked) => (revoked ? null : identity));
  }

  /**
   * Revokes one session: its jti goes on the denylist for as long as the
   * session could live (at least 60 s). Takes the token, or the identity a
   * request already resolved. Expired or invalid tokens need nothing and
   * answer `false`.
   *
   * @param session The token, or a resolved identity.
   * @returns `true` when a jti was put on the denylist, `false` when the
   * token was invalid or the session had already ended.
   * @throws {TypeError} For a stateless manager (`store: null`).
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async revoke(session: string | Identity): Promise<boolean> {
    const store = this.#requireStore("revoke");
    let identity: Identity | null;
    if (typeof session === "string") {
      identity = session.length <= MAX_TOKEN_LENGTH
        ? (this.#cache.get(session) ?? await this.#verify(session))
        : null;
    } else identity = session ?? null;
    if (identity === null) return false;
    const nowS = this.#o.now() / 1000;
    // A device-bound session outlives its short token (it is refreshed):
    // its jti stays denied for as long as any session begun then may live.
    const end = this.#o.sliding || identity.binding === "device"
      ? Math.floor(identity.issuedAt / 1000) +
        (this.#o.sliding?.absoluteLifetimeSeconds ?? this.#o.lifetime)
      : identity.expiresAt;
    if (end <= nowS) return false;
    await store.revoke(identity.jti, end - nowS);
    return true;
  }

  /**
   * Signs a subject out everywhere: every session that began until now is
   * revoked; sessions issued afterwards are not.
   *
   * @param subject The subject.
   * @throws {TypeError} For a stateless manager.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async revokeAll(subject: string): Promise<void> {
    const store = this.#requireStore("revokeAll");
    const cutoff = Math.floor(this.#o.now());
    const longest = this.#o.sliding?.absoluteLifetimeSeconds ??
      this.#o.lifetime;
    await store.revokeAll(subject, cutoff, longest);
    this.#issueFloor = Math.max(this.#issueFloor, cutoff + 1);
  }

  /**
   * Sliding renewal: when sliding is on and the token is at least
   * `renewAfterSeconds` old, mints a token for the same session (same jti)
   * with a later expiry, capped by the absolute lifetime.
   *
   * @param identity A resolved identity.
   * @returns The new token, or `null` when no renewal is due.
   */
  renew(identity: Identity): Promise<IssuedSession | null> {
    const expiresAt = renewedExpiry(identity, this.#o);
    if (expiresAt === null) return Promise.resolve(null);
    return this.#mint(
      identity.subject,
      identity.jti,
      identity.issuedAt,
      expiresAt,
    );
  }

  /**
   * Mints a token bound to a key (see `session_binding.ts`); for the HTTP
   * glue, not public API.
   *
   * @param binding What the session is bound to.
   * @param subject The subject.
   * @param expiresAt The token's expiry, unix seconds; `null` for the
   * manager's lifetime from the session's start.
   * @param session The session to continue (its jti and issue time); a new
   * jti begins now without it.
   * @returns The token and its identity.
   */
  [MINT_BOUND](
    binding: SessionBinding,
    subject: string,
    expiresAt: number | null,
    session?: { jti: string; issuedAt: number },
  ): Promise<IssuedSession> {
    checkSubject(subject);
    let jti = session?.jti, issuedAt = session?.issuedAt;
    if (jti === undefined || issuedAt === undefined) {
      issuedAt = Math.max(Math.floor(this.#o.now()), this.#issueFloor);
      jti = newJti(issuedAt, this.#o.random(16));
    }
    return this.#mint(
      subject,
      jti,
      issuedAt,
      expiresAt ?? Math.floor(issuedAt / 1000) + this.#o.lifetime,
      bindingPurpose(binding),
      binding.kind,
    );
  }

  /**
   * Resolves a token minted with a binding (MAC, times, revocation); for
   * the HTTP glue, not public API.
   *
   * @param binding The binding the token must carry.
   * @param token The presented token.
   * @returns The identity (with `binding` set), or `null`.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async [RESOLVE_BOUND](
    binding: SessionBinding,
    token: string,
  ): Promise<Identity | null> {
    if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) {
      return null;
    }
    const device = binding.kind === "device";
    let id = device ? this.#deviceCache.get(token) : undefined;
    if (id === undefined) {
      const verified = await this.#verify(
        token,
        bindingPurpose(binding),
        binding.kind,
      );
      if (verified === null) return null;
      id = verified;
      if (device) this.#deviceCache.set(token, id);
    }
    return this.#checkLive(id);
  }

  /**
   * {@linkcode SessionManager[PEEK_SESSION]} for device-bound tokens; not
   * public API.
   *
   * @param token The presented bound cookie.
   * @returns The identity, `null`, or `undefined` (ask).
   */
  [PEEK_DEVICE](token: string): Identity | null | undefined {
    return this.#peek(this.#deviceCache, token);
  }

  /**
   * Whether a session is unexpired and not revoked; for the HTTP glue.
   *
   * @param identity The session.
   * @returns `true` when it is live.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async [IS_LIVE](identity: Identity): Promise<boolean> {
    return (await this.#checkLive(identity)) !== null;
  }

  /**
   * Signs a short value with the session keys under a `dbsc.` purpose of
   * its own; for the HTTP glue, not public API.
   *
   * @param purpose The purpose label, beginning with `dbsc.`.
   * @param payload The bytes.
   * @returns The signed value.
   */
  async [SIGN_VALUE](purpose: string, payload: Uint8Array): Promise<string> {
    const keys = this.#keys ??= await this.#o.secret.keys(SESSION_PURPOSE);
    return signToken(keys.current, valuePurpose(purpose), payload);
  }

  /**
   * Verifies a value signed by {@linkcode SessionManager[SIGN_VALUE]}.
   *
   * @param purpose The purpose label.
   * @param value The presented value.
   * @returns The payload, or `null`.
   */
  async [VERIFY_VALUE](
    purpose: string,
    value: string,
  ): Promise<Uint8Array | null> {
    const keys = this.#keys ??= await this.#o.secret.keys(SESSION_PURPOSE);
    return verifyToken(keys, valuePurpose(purpose), value);
  }

  async #mint(
    subject: string,
    jti: string,
    issuedAt: number,
    expiresAt: number,
    purpose: string = SESSION_PURPOSE,
    binding?: "device" | "dpop",
  ): Promise<IssuedSession> {
    const keys = this.#keys ??= await this.#o.secret.keys(SESSION_PURPOSE);
    const identity: Identity = Object.freeze(
      binding === undefined
        ? { subject, jti, issuedAt, expiresAt }
        : { subject, jti, issuedAt, expiresAt, binding },
    );
    const token = await signToken(
      keys.current,
      purpose,
      encodeSessionPayload(identity),
    );
    return { token, identity };
  }

  async #verify(
    token: string,
    purpose: string = SESSION_PURPOSE,
    binding?: "device" | "dpop",
  ): Promise<Identity | null> {
    const keys = this.#keys ??= await this.#o.secret.keys(SESSION_PURPOSE);
    const payload = await verifyToken(keys, purpose, token);
    if (payload === null) return null;
    const identity = parseSessionPayload(payload);
    if (identity === null || !withinTimes(identity, this.#o)) return null;
    return binding === undefined
      ? identity
      : Object.freeze({ ...identity, binding });
  }

  #requireStore(what: string): GuardedStore {
    if (this.#store === null) {
      throw new TypeError(
        `${what}() needs a session store: this SessionManager was made stateless (store: null)`,
      );
    }
    return this.#store;
  }
}

/** A value purpose: always `dbsc.…`, never a session purpose. */
function valuePurpose(purpose: string): string {
  if (!purpose.startsWith("dbsc.")) {
    throw new TypeError(
      `Signed value purpose must begin with "dbsc.": received "${purpose}"`,
    );
  }
  return purpose;
}
