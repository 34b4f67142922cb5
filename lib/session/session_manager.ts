/**
 * Issues, resolves and revokes signed session tokens.
 *
 * @module
 */
import { GuardedStore } from "./_guarded_store.ts";
import type {
  PurposeKeys,
  SecretProvider,
} from "../secrets/secret_provider.ts";
import {
  checkSubject,
  encodeSessionPayload,
  type Identity,
  type IssuedSession,
  newJti,
  parseSessionPayloadText,
} from "./session_payload.ts";
import {
  type CheckedOptions,
  checkOptions,
  longestLifetime,
  renewedExpiry,
  revocationEnd,
  type SessionManagerOptions,
  type SlidingOptions,
  withinTimes,
} from "./session_options.ts";
import {
  MAX_TOKEN_LENGTH,
  signToken,
  verifyTokenText,
} from "../tokens/signed_token.ts";
import { VerifiedTokenCache } from "./verified_token_cache.ts";

export type { Identity, IssuedSession, SessionManagerOptions, SlidingOptions };

/** Options of {@linkcode SessionManager.issueSession}. */
export interface IssueOptions {
  /**
   * The latest expiry the new session may have, in unix seconds: the end of
   * the session it replaces. Default: the manager's lifetime from now.
   */
  notAfter?: number;
  /**
   * The subject id of whoever holds the session on the subject's behalf
   * (an operator impersonating the subject; RFC 8693's `act`). The token
   * carries it under its MAC, {@linkcode Identity.actor} reports it, and
   * the session is never renewed: give `notAfter` for its time limit.
   */
  actor?: string;
}
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
 *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
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
  }

  /**
   * The secret this manager was built with. Tokens bound to a client's key
   * (DPoP, device-bound cookies) and DPoP nonces derive their keys from it,
   * each under a purpose of its own; whoever holds the manager can issue
   * sessions anyway, so this hands out no new power.
   */
  get secret(): SecretProvider {
    return this.#o.secret;
  }

  /**
   * {@linkcode SessionManager.resolve} without a promise, where memory can
   * answer: the warm path of every authenticated request.
   *
   * @param token A token this manager may have verified before.
   * @returns The identity; `null` for a remembered token that expired or is
   * known revoked; `undefined` when only `resolve` can tell (a token not
   * seen before, or a store that must be asked).
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "@portcullis/auth";
   * const sessions = new SessionManager({
   *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
   *   store: new KVSessionStore(new MemoryKV()),
   * });
   * const token = await sessions.issue("user_1");
   * assert.equal(sessions.peek(token), undefined); // never verified here
   * await sessions.resolve(token);
   * assert.equal(sessions.peek(token)?.subject, "user_1");
   * ```
   */
  peek(token: string): Identity | null | undefined {
    const id = this.#cache.get(token);
    if (id === undefined) return undefined;
    if (this.#o.now() >= id.expiresAt * 1000) return null;
    const store = this.#store;
    if (store === null) return id;
    const revoked = store.peek(id.subject, id.jti, id.issuedAt);
    return revoked === undefined ? undefined : revoked ? null : id;
  }

  /** The token lifetime in seconds. */
  get lifetimeSeconds(): number {
    return this.#o.lifetime;
  }

  /**
   * The deadline of each store call, in milliseconds (`storeTimeoutMs`).
   * The HTTP gates give a policy's `can`/`before` and an `isVerified`
   * check the same deadline.
   */
  get storeTimeoutMs(): number {
    return this.#o.storeTimeoutMs;
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
    return (await this.#issue(subject)).token;
  }

  /**
   * {@linkcode SessionManager.issue} with the identity the token carries,
   * and an end no later than one given: a session that replaces another
   * ("sign out everywhere else", a password change, a sign-in from a
   * signed-in client) keeps the end of the one it replaces, so re-minting
   * never extends a session past its absolute lifetime (OWASP ASVS 5.0
   * V7.3.2). Such a capped session is never renewed by sliding renewal.
   *
   * @param subject As for {@linkcode SessionManager.issue}.
   * @param options `notAfter`: the latest expiry, unix seconds.
   * @returns The token and its identity.
   * @throws {AuthError} `INVALID_SUBJECT`.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "@portcullis/auth";
   * const sessions = new SessionManager({
   *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
   *   store: new KVSessionStore(new MemoryKV()),
   * });
   * const first = await sessions.issueSession("user_1");
   * const again = await sessions.issueSession("user_1", { notAfter: first.identity.expiresAt });
   * assert.ok(again.identity.expiresAt <= first.identity.expiresAt);
   * ```
   */
  issueSession(
    subject: string,
    options: IssueOptions = {},
  ): Promise<IssuedSession> {
    if (options.actor !== undefined) checkSubject(options.actor);
    return this.#issue(subject, options.notAfter, options.actor);
  }

  #issue(
    subject: string,
    notAfter?: number,
    actor?: string,
  ): Promise<IssuedSession> {
    checkSubject(subject);
    const issuedAt = Math.max(Math.floor(this.#o.now()), this.#issueFloor);
    let expiresAt = Math.floor(issuedAt / 1000) + this.#o.lifetime;
    if (notAfter !== undefined) {
      if (!Number.isSafeInteger(notAfter)) {
        throw new RangeError(
          `notAfter must be whole unix seconds: received ${notAfter}`,
        );
      }
      expiresAt = Math.min(expiresAt, notAfter);
    }
    return this.#mint(
      subject,
      newJti(issuedAt, this.#o.random(16)),
      issuedAt,
      expiresAt,
      actor,
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
   * @throws {TypeError} When the store's `isRevoked` answers anything but
   * `true` or `false` (a broken custom store): only a strict `false` lets a
   * session through.
   */
  resolve(token: string): Promise<Identity | null> {
    // The warm path (a token this manager verified before) stays free of
    // async frames: it runs on every authenticated request.
    const cached = this.#cache.get(token);
    if (cached !== undefined) return this.#checkLive(cached);
    return this.#resolveCold(token);
  }

  // One `then` on the MAC's promise, no async frame: the payload, expiry and
  // (from memory when the store can tell) revocation in one callback.
  #resolveCold(token: string): Promise<Identity | null> {
    if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) {
      return NO_IDENTITY;
    }
    const keys = this.#keys;
    if (keys === undefined) {
      return this.#sessionKeys().then(() => this.#resolveCold(token));
    }
    let verified: Promise<string | null>;
    try {
      verified = verifyTokenText(keys, SESSION_PURPOSE, token);
    } catch (error) {
      return Promise.reject(error);
    }
    return verified.then((payload) => {
      if (payload === null) return null;
      const id = this.#identityOf(payload);
      if (id === null) return null;
      this.#cache.set(token, id);
      if (this.#o.now() >= id.expiresAt * 1000) return null;
      const store = this.#store;
      if (store === null) return id;
      const known = store.peek(id.subject, id.jti, id.issuedAt);
      return known !== undefined
        ? liveUnless(known, id)
        : store.isRevoked(id.subject, id.jti, id.issuedAt).then((revoked) =>
          liveUnless(revoked, id)
        );
    });
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
      .then((revoked) => liveUnless(revoked, identity));
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
    const end = revocationEnd(identity, this.#o);
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
    await store.revokeAll(subject, cutoff, longestLifetime(this.#o));
    this.#issueFloor = Math.max(this.#issueFloor, cutoff + 1);
  }

  /**
   * Sliding renewal: when sliding is on and the token is at least
   * `renewAfterSeconds` old, mints a token for the same session (same jti)
   * with a later expiry, capped by the absolute lifetime.
   *
   * A session held by an actor (impersonation) is never renewed.
   *
   * @param identity A resolved identity.
   * @returns The new token, or `null` when no renewal is due.
   */
  renew(identity: Identity): Promise<IssuedSession | null> {
    if (identity.actor !== undefined || identity.apiKey !== undefined) {
      return Promise.resolve(null);
    }
    const expiresAt = renewedExpiry(identity, this.#o);
    if (expiresAt === null) return Promise.resolve(null);
    const { subject, jti, issuedAt } = identity;
    return this.#mint(subject, jti, issuedAt, expiresAt);
  }

  /** The session keys. */
  async #sessionKeys(): Promise<PurposeKeys> {
    return this.#keys ??= await this.#o.secret.keys(SESSION_PURPOSE);
  }

  async #mint(
    subject: string,
    jti: string,
    issuedAt: number,
    expiresAt: number,
    actor?: string,
  ): Promise<IssuedSession> {
    const keys = this.#keys ??= await this.#o.secret.keys(SESSION_PURPOSE);
    const identity: Identity = Object.freeze(
      actor === undefined
        ? { subject, jti, issuedAt, expiresAt }
        : { subject, jti, issuedAt, expiresAt, actor },
    );
    const token = await signToken(
      keys.current,
      SESSION_PURPOSE,
      encodeSessionPayload(identity),
    );
    return { token, identity };
  }

  async #verify(token: string): Promise<Identity | null> {
    const keys = this.#keys ?? await this.#sessionKeys();
    const payload = await verifyTokenText(keys, SESSION_PURPOSE, token);
    return payload === null ? null : this.#identityOf(payload);
  }

  /** A verified payload's identity, if well formed and within the times. */
  #identityOf(payload: string): Identity | null {
    const identity = parseSessionPayloadText(payload);
    return identity !== null && withinTimes(identity, this.#o)
      ? identity
      : null;
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

const NO_IDENTITY: Promise<null> = Promise.resolve(null);

/**
 * The identity when the store answered a strict `false`; `null` for
 * `true`. Any other answer (`undefined`, `null`, `0`, `""`, a string) is a
 * broken store: it throws, so no identity comes of it and the error says
 * what to fix (the HTTP glue reports it as `misconfigured`).
 */
function liveUnless(revoked: unknown, identity: Identity): Identity | null {
  if (revoked === false) return identity;
  if (revoked === true) return null;
  throw new TypeError(
    `SessionStore.isRevoked must answer true or false: received ${
      revoked === null ? "null" : typeof revoked
    }; no identity was established`,
  );
}
