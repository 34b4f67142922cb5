/**
 * Issues, resolves and revokes signed session tokens.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import { decodeBase64Url, encodeBase64Url } from "./_base64url.ts";
import type { PurposeKeys, SecretProvider } from "./secret_provider.ts";
import type { SessionStore } from "./session_store.ts";
import { StaleSessionStore } from "./stale_session_store.ts";
import { MAX_TOKEN_LENGTH, signToken, verifyToken } from "./signed_token.ts";

/** What a verified, unexpired, unrevoked session token proves. */
export interface Identity {
  /** The subject id the token was issued to. */
  readonly subject: string;
  /** The session id: 6 bytes of issue time and 16 random bytes, base64url. */
  readonly jti: string;
  /** When the session began, in unix milliseconds (from the jti). */
  readonly issuedAt: number;
  /** When this token expires, in unix seconds. */
  readonly expiresAt: number;
}

/** A freshly minted token with the identity it carries. */
export interface IssuedSession {
  /** The opaque token: a cookie value or a Bearer credential. */
  readonly token: string;
  /** What {@linkcode SessionManager.resolve} will answer for it. */
  readonly identity: Identity;
}

/** Options of sliding renewal; see {@linkcode SessionManagerOptions.sliding}. */
export interface SlidingOptions {
  /** The least time between two renewals, in seconds; default 3600. */
  renewAfterSeconds?: number;
  /**
   * The absolute lifetime of a session, however active, in seconds. Required:
   * a sliding session without a cap never ends.
   */
  absoluteLifetimeSeconds: number;
}

/** Options of {@linkcode SessionManager}. */
export interface SessionManagerOptions {
  /** The keys. */
  secret: SecretProvider;
  /**
   * Where revocations live. `null` is the explicit stateless choice: tokens
   * then cannot be revoked before they expire, and `revoke` throws.
   */
  store: SessionStore | null;
  /** Lifetime of a token, in seconds; default 7 days. */
  lifetimeSeconds?: number;
  /** Opt-in sliding renewal of cookie sessions; off by default. */
  sliding?: SlidingOptions;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /** The random source; default `crypto.getRandomValues`. */
  randomBytes?: (length: number) => Uint8Array;
  /**
   * How many verified tokens to remember, so a token seen before skips the
   * MAC; default 10000, 0 turns it off. The cache holds only what the MAC
   * proved; expiry and revocation are checked on every request regardless.
   */
  cacheSize?: number;
  /**
   * Opt-in bounded staleness, in seconds: reuse the store's revocation
   * answers for at most this long (see `StaleSessionStore`). Revocations made
   * through this manager apply at once; others within the bound. Default:
   * exact, one store round trip per request.
   */
  revocationStaleness?: number;
}

/** The default token lifetime: 7 days, in seconds. */
export const DEFAULT_LIFETIME_SECONDS = 7 * 24 * 3600;
/** The purpose label of session tokens (bound into the MAC). */
export const SESSION_PURPOSE = "session";

const MAX_SUBJECT_BYTES = 255;
// No "|" (the field separator) and no C0, DEL or C1 control characters.
// deno-lint-ignore no-control-regex
const BAD_SUBJECT = /[|\u0000-\u001f\u007f-\u009f]/;
const JTI_SHAPE = /^[A-Za-z0-9_-]{30}$/;
const EXPIRY_SHAPE = /^[1-9][0-9]{0,15}$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

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
 * const sessions = new SessionManager({
 *   secret: SecretProvider.fromValue("a-32-byte-or-longer-random-secret-value!"),
 *   store: new KVSessionStore(new MemoryKV()),
 * });
 * const token = await sessions.issue("user_1");
 * (await sessions.resolve(token))?.subject; // "user_1"
 * await sessions.revoke(token);
 * await sessions.resolve(token); // null
 * ```
 */
export class SessionManager {
  #secret: SecretProvider;
  #keys: PurposeKeys | undefined;
  #store: SessionStore | null;
  #lifetime: number;
  #sliding: Required<SlidingOptions> | null;
  #now: () => number;
  #random: (length: number) => Uint8Array;
  #cacheSize: number;
  #cache = new Map<string, Identity>();
  #ring: (string | undefined)[] = [];
  #ringAt = 0;
  #issueFloor = 0;

  /**
   * Checks the options once; misuse throws here, not per request.
   *
   * @param options See {@linkcode SessionManagerOptions}.
   * @throws {TypeError} When `secret` or `store` is missing.
   * @throws {RangeError} When a lifetime is not a positive whole number.
   */
  constructor(options: SessionManagerOptions) {
    if (!options?.secret || typeof options.secret.keys !== "function") {
      throw new TypeError(
        "SessionManager needs a secret: pass secret: SecretProvider.fromEnv()",
      );
    }
    if (options.store === undefined) {
      throw new TypeError(
        "SessionManager needs a store: pass a SessionStore, or store: null to choose stateless tokens that cannot be revoked",
      );
    }
    this.#secret = options.secret;
    this.#store = options.store !== null &&
        options.revocationStaleness !== undefined
      ? new StaleSessionStore(options.store, {
        maxStalenessSeconds: options.revocationStaleness,
        now: options.now,
      })
      : options.store;
    this.#lifetime = positiveInt(
      options.lifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS,
      "lifetimeSeconds",
    );
    if (options.sliding) {
      const absolute = positiveInt(
        options.sliding.absoluteLifetimeSeconds,
        "sliding.absoluteLifetimeSeconds",
      );
      if (absolute < this.#lifetime) {
        throw new RangeError(
          `sliding.absoluteLifetimeSeconds must be at least lifetimeSeconds: received ${absolute}`,
        );
      }
      this.#sliding = {
        absoluteLifetimeSeconds: absolute,
        renewAfterSeconds: positiveInt(
          options.sliding.renewAfterSeconds ?? 3600,
          "sliding.renewAfterSeconds",
        ),
      };
    } else {
      this.#sliding = null;
    }
    this.#now = options.now ?? Date.now;
    this.#random = options.randomBytes ??
      ((n) => crypto.getRandomValues(new Uint8Array(n)));
    this.#cacheSize = options.cacheSize ?? 10_000;
  }

  /** The token lifetime in seconds. */
  get lifetimeSeconds(): number {
    return this.#lifetime;
  }

  /** Whether tokens can be revoked (a store was given). */
  get revocable(): boolean {
    return this.#store !== null;
  }

  /** Whether sliding renewal is on (see {@linkcode SessionManager.renew}). */
  get sliding(): boolean {
    return this.#sliding !== null;
  }

  /**
   * Seconds until an identity's token expires, by this manager's clock: the
   * `Max-Age` of its cookie.
   *
   * @param identity An identity.
   * @returns Whole seconds, at least 0.
   */
  secondsLeft(identity: Identity): number {
    return Math.max(0, identity.expiresAt - Math.ceil(this.#now() / 1000));
  }

  /**
   * Mints a token for a subject, with a new jti.
   *
   * @param subject A non-empty string of at most 255 UTF-8 bytes, without
   * `|` or control characters.
   * @returns The token.
   * @throws {AuthError} `INVALID_SUBJECT` for a subject outside those rules.
   */
  async issue(subject: string): Promise<string> {
    return (await this.issueSession(subject)).token;
  }

  /**
   * Mints a token and answers the identity it carries (for `expiresAt`).
   *
   * @param subject See {@linkcode SessionManager.issue}.
   * @returns The token and its identity.
   * @throws {AuthError} `INVALID_SUBJECT`.
   */
  issueSession(subject: string): Promise<IssuedSession> {
    checkSubject(subject);
    const now = this.#now();
    const issuedAt = Math.max(Math.floor(now), this.#issueFloor);
    const expiresAt = Math.floor(issuedAt / 1000) + this.#lifetime;
    return this.#mint(
      subject,
      newJti(issuedAt, this.#random(16)),
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

  #resolveCold(token: string): Promise<Identity | null> {
    if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) {
      return Promise.resolve(null);
    }
    return this.#verify(token).then((identity) => {
      if (identity === null) return null;
      if (this.#cacheSize > 0 && !this.#cache.has(token)) {
        // Oldest-first through a ring of keys: deleting a Map's first key
        // leaves holes that `keys().next()` walks (40 µs per eviction at
        // 10000 entries), the ring is O(1).
        const at = this.#ringAt;
        const oldest = this.#ring[at];
        if (oldest !== undefined) this.#cache.delete(oldest);
        this.#ring[at] = token;
        this.#ringAt = at + 1 === this.#cacheSize ? 0 : at + 1;
        this.#cache.set(token, identity);
      }
      return this.#checkLive(identity);
    });
  }

  /** Expiry, then one store round trip for revocation. */
  #checkLive(identity: Identity): Promise<Identity | null> {
    if (this.#now() >= identity.expiresAt * 1000) return Promise.resolve(null);
    const store = this.#store;
    if (store === null) return Promise.resolve(identity);
    let pending: Promise<boolean>;
    try {
      pending = store.isRevoked(
        identity.subject,
        identity.jti,
        identity.issuedAt,
      );
    } catch (cause) {
      return Promise.reject(unavailable(cause));
    }
    return pending.then(
      (revoked) => (revoked ? null : identity),
      (cause) => {
        throw unavailable(cause);
      },
    );
  }

  /**
   * Revokes the session a token belongs to: its jti goes on the denylist for
   * as long as the session could live (at least 60 s). Expired or invalid
   * tokens need nothing and answer `false`.
   *
   * @param token The token.
   * @returns `true` when a jti was put on the denylist.
   * @throws {TypeError} For a stateless manager (`store: null`).
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async revoke(token: string): Promise<boolean> {
    const identity =
      typeof token === "string" && token.length <= MAX_TOKEN_LENGTH
        ? (this.#cache.get(token) ?? await this.#verify(token))
        : null;
    if (identity === null) return false;
    return await this.revokeIdentity(identity);
  }

  /**
   * Revokes the session of an identity already resolved.
   *
   * @param identity The identity.
   * @returns `true` when a jti was put on the denylist, `false` when the
   * session had already ended.
   * @throws {TypeError} For a stateless manager.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async revokeIdentity(identity: Identity): Promise<boolean> {
    const store = this.#requireStore("revoke");
    const nowS = this.#now() / 1000;
    const end = this.#sliding
      ? Math.floor(identity.issuedAt / 1000) +
        this.#sliding.absoluteLifetimeSeconds
      : identity.expiresAt;
    if (end <= nowS) return false;
    await this.#storeCall(() => store.revoke(identity.jti, end - nowS));
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
    const cutoff = Math.floor(this.#now());
    const longest = this.#sliding?.absoluteLifetimeSeconds ?? this.#lifetime;
    await this.#storeCall(() => store.revokeAll(subject, cutoff, longest));
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
    const s = this.#sliding;
    if (s === null) return Promise.resolve(null);
    const nowS = Math.floor(this.#now() / 1000);
    const tokenIssued = identity.expiresAt - this.#lifetime;
    const cap = Math.floor(identity.issuedAt / 1000) +
      s.absoluteLifetimeSeconds;
    const expiresAt = Math.min(nowS + this.#lifetime, cap);
    if (
      nowS - tokenIssued < s.renewAfterSeconds ||
      expiresAt <= identity.expiresAt
    ) {
      return Promise.resolve(null);
    }
    return this.#mint(
      identity.subject,
      identity.jti,
      identity.issuedAt,
      expiresAt,
    );
  }

  async #mint(
    subject: string,
    jti: string,
    issuedAt: number,
    expiresAt: number,
  ): Promise<IssuedSession> {
    const keys = this.#keys ??= await this.#secret.keys(SESSION_PURPOSE);
    const token = await signToken(
      keys.current,
      SESSION_PURPOSE,
      encoder.encode(`${subject}|${jti}|${expiresAt}`),
    );
    return {
      token,
      identity: Object.freeze({ subject, jti, issuedAt, expiresAt }),
    };
  }

  #verify(token: string): Promise<Identity | null> {
    const keys = this.#keys;
    if (keys === undefined) {
      return this.#secret.keys(SESSION_PURPOSE).then((k) => {
        this.#keys = k;
        return this.#verify(token);
      });
    }
    return verifyToken(keys, SESSION_PURPOSE, token).then((payload) => {
      if (payload === null) return null;
      const identity = parsePayload(payload);
      if (identity === null) return null;
      // A token may not outlive what this manager allows now: shortening
      // the lifetime takes effect for tokens already out.
      const longest = this.#sliding?.absoluteLifetimeSeconds ?? this.#lifetime;
      if (identity.expiresAt - identity.issuedAt / 1000 > longest + 1) {
        return null;
      }
      return identity;
    });
  }

  #requireStore(what: string): SessionStore {
    if (this.#store === null) {
      throw new TypeError(
        `${what}() needs a session store: this SessionManager was made stateless (store: null)`,
      );
    }
    return this.#store;
  }

  async #storeCall(f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (cause) {
      throw new AuthError(
        "STORE_UNAVAILABLE",
        "Session store did not answer: nothing was revoked",
        {
          cause,
        },
      );
    }
  }
}

function unavailable(cause: unknown): AuthError {
  return new AuthError(
    "STORE_UNAVAILABLE",
    "Session store did not answer: no identity was established",
    { cause },
  );
}

function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(
      `${name} must be a positive whole number of seconds: received ${value}`,
    );
  }
  return value;
}

function checkSubject(subject: string): void {
  if (typeof subject !== "string" || subject === "") {
    throw new AuthError(
      "INVALID_SUBJECT",
      "Subject must be a non-empty string",
    );
  }
  if (BAD_SUBJECT.test(subject)) {
    throw new AuthError(
      "INVALID_SUBJECT",
      "Subject must not contain '|' or control characters",
    );
  }
  if (encoder.encode(subject).length > MAX_SUBJECT_BYTES) {
    throw new AuthError(
      "INVALID_SUBJECT",
      `Subject must be at most ${MAX_SUBJECT_BYTES} bytes`,
    );
  }
}

function newJti(issuedAtMs: number, random: Uint8Array): string {
  if (random.length < 16) {
    throw new RangeError("randomBytes must return the length asked for");
  }
  const bytes = new Uint8Array(22);
  let t = issuedAtMs;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes.set(random.subarray(0, 16), 6);
  return encodeBase64Url(bytes);
}

/** The string of an all-ASCII byte array, or `null` when a byte is not ASCII. */
function asciiText(bytes: Uint8Array): string | null {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] > 0x7f) return null;
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/** Parses `subject|jti|expiry` strictly; `null` for anything else. */
function parsePayload(payload: Uint8Array): Identity | null {
  let text = asciiText(payload);
  if (text === null) {
    try {
      text = decoder.decode(payload);
    } catch {
      return null;
    }
  }
  const a = text.indexOf("|");
  const b = text.indexOf("|", a + 1);
  if (a <= 0 || b < 0 || text.indexOf("|", b + 1) !== -1) return null;
  const subject = text.slice(0, a);
  const jti = text.slice(a + 1, b);
  const expiry = text.slice(b + 1);
  if (
    BAD_SUBJECT.test(subject) || !JTI_SHAPE.test(jti) ||
    !EXPIRY_SHAPE.test(expiry)
  ) {
    return null;
  }
  const expiresAt = Number(expiry);
  if (!Number.isSafeInteger(expiresAt)) return null;
  // The payload was minted here (the MAC says so); the jti's shape was
  // checked above, and its first 8 characters carry the issue time.
  const head = decodeBase64Url(jti.slice(0, 8));
  if (head === null) return null;
  let issuedAt = 0;
  for (let i = 0; i < 6; i++) issuedAt = issuedAt * 256 + head[i];
  return Object.freeze({ subject, jti, issuedAt, expiresAt });
}
