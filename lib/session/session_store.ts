/**
 * The revocation store of the session layer, and its key-value form.
 *
 * @module
 */
import type { KeyValueStore } from "../kv/key_value_store.ts";
import { type WriteLog, writeLogOf } from "../kv/_write_log.ts";

/**
 * Where revocations live: a denylist of jtis and a per-subject cut-off.
 * One `isRevoked` call is one round trip. A store that cannot answer throws;
 * the session layer turns that into "no identity" and the gates answer 503.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { KVSessionStore, MemoryKV } from "@portcullis/auth";
 * const store = new KVSessionStore(new MemoryKV());
 * await store.revoke("some-jti", 60);
 * assert.equal(await store.isRevoked("user_1", "some-jti", Date.now()), true);
 * ```
 */
export interface SessionStore {
  /**
   * Tells whether a session was revoked: its jti is on the denylist, or its
   * subject signed out everywhere at or after `issuedAtMs`.
   *
   * @param subject The token's subject.
   * @param jti The token's id.
   * @param issuedAtMs When the session began (unix milliseconds).
   * @returns `true` when the token must not be accepted.
   */
  isRevoked(subject: string, jti: string, issuedAtMs: number): Promise<boolean>;
  /**
   * Optional: the answer `isRevoked` would give, synchronously, when the
   * store holds it in this process's memory (as `StaleSessionStore`
   * does within its bound); `undefined` when only a round trip can tell.
   * Lets the warm path of an authenticated request skip every promise.
   *
   * @param subject The token's subject.
   * @param jti The token's id.
   * @param issuedAtMs When the session began (unix milliseconds).
   * @returns `true` (revoked), `false` (live), or `undefined` (ask).
   */
  peek?(subject: string, jti: string, issuedAtMs: number): boolean | undefined;
  /**
   * Puts a jti on the denylist.
   *
   * @param jti The token's id (never the token).
   * @param ttlSeconds How long to keep it: the token's remaining life, at
   * least 60.
   */
  revoke(jti: string, ttlSeconds: number): Promise<void>;
  /**
   * Records that every session of `subject` that began at or before
   * `cutoffMs` is revoked.
   *
   * @param subject The subject.
   * @param cutoffMs Unix milliseconds.
   * @param ttlSeconds How long to keep the cut-off: the longest a token can
   * live, at least 60.
   */
  revokeAll(
    subject: string,
    cutoffMs: number,
    ttlSeconds: number,
  ): Promise<void>;
}

/** Options of {@linkcode KVSessionStore}. */
export interface KVSessionStoreOptions {
  /** Prefix of every key; default `"portcullis:"`. */
  prefix?: string;
}

/** The smallest time to live written, in seconds (Cloudflare KV's minimum). */
export const MIN_REVOCATION_TTL_SECONDS = 60;

/**
 * A {@linkcode SessionStore} over any {@linkcode KeyValueStore}: the denylist
 * entry and the subject's cut-off are read together in one `getMany`.
 *
 * Revocation is as fast as the key-value store is consistent: immediate on
 * memory, Deno KV, Upstash and libSQL; up to about 60 s on Cloudflare KV.
 *
 * @example Usage
 * ```ts
 * import { KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "@portcullis/auth";
 * const sessions = new SessionManager({
 *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
 *   store: new KVSessionStore(new MemoryKV()),
 * });
 * ```
 */
export class KVSessionStore implements SessionStore {
  #kv: KeyValueStore;
  #deny: string;
  #cut: string;
  // The two keys of each session seen lately, by jti. Built per request,
  // they were two new strings to allocate, hash and collect on the path of
  // every authenticated request; kept, they are hashed once. Bounded: the
  // memo starts over when full.
  #keys = new Map<string, SessionKeys>();
  #log: WriteLog | undefined;

  /**
   * Wraps a key-value store.
   *
   * @param kv The key-value store.
   * @param options The key prefix.
   */
  constructor(kv: KeyValueStore, options: KVSessionStoreOptions = {}) {
    const prefix = options.prefix ?? "portcullis:";
    this.#kv = kv;
    this.#log = writeLogOf(kv);
    this.#deny = `${prefix}deny:`;
    this.#cut = `${prefix}cut:`;
  }

  /** {@inheritDoc SessionStore.isRevoked} */
  isRevoked(
    subject: string,
    jti: string,
    issuedAtMs: number,
  ): Promise<boolean> {
    // A plain promise chain, not an async function: this runs on every
    // authenticated request.
    return this.#kv.getMany(this.#keysOf(subject, jti).keys).then(
      (values) => revokedBy(values, issuedAtMs),
    );
  }

  /**
   * {@inheritDoc SessionStore.peek}
   *
   * Answers only over a key-value store that reads synchronously
   * (`getManySync`, as `MemoryKV` does): then exactly what `isRevoked`
   * would, without a promise.
   */
  peek(subject: string, jti: string, issuedAtMs: number): boolean | undefined {
    const kv = this.#kv;
    if (kv.getManySync === undefined) return undefined;
    const session = this.#keysOf(subject, jti);
    // Over a store that counts its writes (MemoryKV): neither key held
    // when the count was what it is now means neither is held now, so the
    // answer is what reading both would give (not revoked), without the
    // read. Only that answer is remembered, and only while no key of the
    // store changed.
    const log = this.#log;
    if (log !== undefined) {
      const writes = log.writes;
      if (session.clearAt === writes) return false;
      if (log.noneHeld(session.keys)) {
        session.clearAt = writes;
        return false;
      }
    }
    return revokedBy(kv.getManySync(session.keys), issuedAtMs);
  }

  /** The denylist key of `jti` and the cut-off key of `subject`. */
  #keysOf(subject: string, jti: string): SessionKeys {
    const known = this.#keys.get(jti);
    if (known !== undefined && known.subject === subject) return known;
    if (this.#keys.size >= KEY_MEMO_SIZE) this.#keys.clear();
    const keys = Object.freeze([this.#deny + jti, this.#cut + subject]);
    const session = { subject, keys, clearAt: -1 };
    this.#keys.set(jti, session);
    return session;
  }

  /** {@inheritDoc SessionStore.revoke} */
  revoke(jti: string, ttlSeconds: number): Promise<void> {
    return this.#kv.put(this.#deny + jti, "1", {
      ttlSeconds: Math.max(MIN_REVOCATION_TTL_SECONDS, Math.ceil(ttlSeconds)),
    });
  }

  /** {@inheritDoc SessionStore.revokeAll} */
  revokeAll(
    subject: string,
    cutoffMs: number,
    ttlSeconds: number,
  ): Promise<void> {
    return this.#kv.put(this.#cut + subject, String(Math.floor(cutoffMs)), {
      ttlSeconds: Math.max(MIN_REVOCATION_TTL_SECONDS, Math.ceil(ttlSeconds)),
    });
  }
}

/** The keys {@linkcode KVSessionStore} reads for one session. */
interface SessionKeys {
  readonly subject: string;
  readonly keys: readonly string[];
  /**
   * The store's write count when neither key was held (see
   * `_write_log.ts`), or -1.
   */
  clearAt: number;
}

/** How many sessions' keys a {@linkcode KVSessionStore} keeps. */
const KEY_MEMO_SIZE = 4096;

/** A cut-off as `revokeAll` writes it: a canonical whole number. */
const CUTOFF = /^(?:0|[1-9][0-9]{0,15})$/;

/**
 * The denylist entry and the subject's cut-off, read together. A cut-off
 * that is not exactly what `revokeAll` writes (`""`, `" 5"`, `"1e3"`,
 * `"0x10"`, `"-1"`, a fraction, beyond 2^53) revokes: fail closed, where
 * `Number()` would read `""` as 0 and let every session through.
 */
function revokedBy(values: (string | null)[], issuedAtMs: number): boolean {
  if (values[0] !== null) return true;
  const cutoff = values[1];
  if (cutoff === null) return false;
  if (typeof cutoff !== "string" || !CUTOFF.test(cutoff)) return true;
  const cut = Number(cutoff);
  return !Number.isSafeInteger(cut) || issuedAtMs <= cut;
}
