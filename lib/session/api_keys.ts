/**
 * API keys (personal access tokens) as a credential `identityMiddleware`
 * resolves: a key sent as `Authorization: Bearer <key>` becomes an
 * {@linkcode Identity} whose `apiKey` names the key and its scopes. The
 * format is in `api_key_format.ts`; the store is the application's
 * ({@linkcode ApiKeyStore}, one read by the key's id).
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import { Deadline, DeadlineExceeded } from "../kv/deadline.ts";
import { subjectProblem } from "../_common/subject.ts";
import {
  checkApiKeyPrefix,
  DEFAULT_API_KEY_PREFIX,
  hashApiKey,
  mintApiKey,
  type MintedApiKey,
  parseApiKey,
} from "./api_key_format.ts";
import type { Identity } from "./session_payload.ts";

/** A key as its store keeps it: never the key itself, only its hash. */
export interface StoredApiKey {
  /** The subject id of the key's owner. */
  readonly subject: string;
  /** The SHA-256 of the whole key, 64 lowercase hex digits (`hashApiKey`). */
  readonly hash: string;
  /** The policy actions the key may perform. */
  readonly scopes: readonly string[];
  /** When it was made, unix milliseconds. */
  readonly createdAt: number;
  /** When it stops working, unix milliseconds. */
  readonly expiresAt: number;
  /** When it was last used (to the minute), unix milliseconds; 0: never. */
  readonly lastUsedAt: number;
}

/**
 * Where keys live: one read by the key's id per request that presents a
 * key, never a scan. Answer `null` for a key that must not work: unknown,
 * revoked, or whose owner is deleted or banned.
 */
export interface ApiKeyStore {
  /**
   * The key of this id, or `null`.
   *
   * @param id The key's public identifier (16 base32 characters).
   */
  findApiKey(id: string): Promise<StoredApiKey | null>;
  /**
   * Records that the key was used at `at` (unix milliseconds). Called at
   * most once a minute per key and process, after the key was verified,
   * and never awaited by the request (on Cloudflare Workers, where work
   * after the answer needs `waitUntil`, a write may be cut short: "last
   * used" is best effort, never a gate).
   *
   * @param id The key's id.
   * @param at When it was used.
   */
  recordApiKeyUse?(id: string, at: number): Promise<void>;
}

/** Options of {@linkcode ApiKeys}. */
export interface ApiKeysOptions {
  /** Where the keys are. */
  store: ApiKeyStore;
  /** The application's key prefix; default `pc`. */
  prefix?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /**
   * The deadline of each store read, in milliseconds; default 2000. A store
   * that fails or misses it answers no identity, and the gates 503.
   */
  timeoutMs?: number;
  /**
   * How stale "last used" may be, in seconds; default 60. A key's use is
   * written when the stored time is at least this old, at most once per
   * interval per key in each process, so a busy key costs one write a
   * minute, not one per request.
   */
  usageIntervalSeconds?: number;
  /** Receives a failed "last used" write (its message); default `console.error`. */
  onError?: (message: string) => void;
}

/** Verified keys remembered, so that a warm key skips its hash. */
const CACHE_SIZE = 10_000;
/** What an unknown id is compared with, so that it costs what a wrong secret does. */
const NO_HASH = "0".repeat(64);

/** A key verified before: its id, its hash, and its last identity. */
interface Verified {
  readonly id: string;
  readonly hash: string;
  identity: Identity | null;
}

/** Compares two strings of hex digits in time that depends only on length. */
function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Mints keys and resolves presented ones. Give it to `identityMiddleware`
 * (`apiKeys`), and a Bearer value that starts with the prefix is resolved
 * here instead of as a session: parsed (length, alphabet, checksum), then
 * the store's one read by id and the key's SHA-256 side by side, a
 * comparison in constant time, and the expiry. An unknown id and a wrong
 * secret do the same work (the hash is always computed and always
 * compared). A key verified before skips its hash (the store is read
 * every time: revocation is immediate).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiKeys, type StoredApiKey } from "@portcullis/auth/sessions";
 * const rows = new Map<string, StoredApiKey>();
 * const keys = new ApiKeys({ store: { findApiKey: async (id) => rows.get(id) ?? null } });
 * const { key, id, hash } = await keys.mint();
 * rows.set(id, { subject: "user_1", hash, scopes: ["notes:read"], createdAt: Date.now(), expiresAt: Date.now() + 86_400_000, lastUsedAt: 0 });
 * const who = await keys.resolve(key);
 * assert.equal(who?.subject, "user_1");
 * assert.deepEqual(who?.apiKey?.scopes, ["notes:read"]);
 * rows.delete(id); // revoked
 * assert.equal(await keys.resolve(key), null);
 * ```
 */
export class ApiKeys {
  #store: ApiKeyStore;
  #prefix: string;
  #head: string;
  #now: () => number;
  #deadline: Deadline;
  #interval: number;
  #onError: (message: string) => void;
  #verified = new Map<string, Verified>();
  #written = new Map<string, number>();

  /**
   * Checks the options once.
   *
   * @param options See {@linkcode ApiKeysOptions}.
   * @throws {TypeError} Without a store, or for a bad prefix.
   * @throws {RangeError} For a timeout or interval that is not positive.
   */
  constructor(options: ApiKeysOptions) {
    if (typeof options?.store?.findApiKey !== "function") {
      throw new TypeError(
        "ApiKeys needs a store with findApiKey(id): pass store",
      );
    }
    this.#store = options.store;
    this.#prefix = checkApiKeyPrefix(options.prefix ?? DEFAULT_API_KEY_PREFIX);
    this.#head = `${this.#prefix}_`;
    this.#now = options.now ?? Date.now;
    this.#deadline = new Deadline(options.timeoutMs ?? 2000);
    const interval = options.usageIntervalSeconds ?? 60;
    if (!(interval > 0)) {
      throw new RangeError(
        `usageIntervalSeconds must be positive: received ${interval}`,
      );
    }
    this.#interval = interval * 1000;
    this.#onError = options.onError ?? ((m) => console.error(m));
  }

  /** The application's key prefix. */
  get prefix(): string {
    return this.#prefix;
  }

  /**
   * Makes a new key with this prefix.
   *
   * @returns The key (show it once), its id and its hash (store both).
   */
  mint(): Promise<MintedApiKey> {
    return mintApiKey(this.#prefix);
  }

  /**
   * Whether a Bearer value is meant as one of these keys (it starts with
   * the prefix and `_`; a session token starts with `v1.`). Such a value is
   * resolved only here, never as a session.
   *
   * @param token The presented value.
   * @returns `true` when it is for {@linkcode ApiKeys.resolve}.
   */
  claims(token: string): boolean {
    return token.startsWith(this.#head);
  }

  /**
   * Resolves a presented key to the identity of its owner.
   *
   * @param token The presented value.
   * @returns The identity (`apiKey` set, `jti` the key's id), or `null` for
   * a malformed, unknown, revoked, expired or wrong key.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the store fails or misses
   * its deadline.
   */
  resolve(token: string): Promise<Identity | null> {
    // A key verified before: its id and hash are known, so no parse and no
    // SHA-256, but the store is read as ever (revocation, expiry, a ban).
    const known = this.#verified.get(token);
    if (known !== undefined) {
      return this.#find(known.id).then((record) =>
        this.#settle(token, known.id, record, known.hash, known)
      );
    }
    return this.#cold(token);
  }

  /** A key not verified before: the parse, then the read and the hash side by side. */
  async #cold(token: string): Promise<Identity | null> {
    const id = parseApiKey(this.#prefix, token);
    if (id === null) return null;
    const [record, hash] = await Promise.all([
      this.#find(id),
      hashApiKey(token),
    ]);
    return this.#settle(token, id, record, hash, null);
  }

  /** The store's read of one id, under the deadline. */
  #find(id: string): Promise<StoredApiKey | null> {
    let found: Promise<StoredApiKey | null>;
    try {
      found = this.#store.findApiKey(id);
    } catch (cause) {
      return Promise.reject(unavailable(cause));
    }
    return this.#deadline.guard(found, unavailable);
  }

  /** The identity of a read record whose hash matches, or `null`. */
  #settle(
    token: string,
    id: string,
    record: StoredApiKey | null,
    hash: string,
    known: Verified | null,
  ): Identity | null {
    // Compared even for an unknown id (against a hash nothing has), so that
    // it costs what a wrong secret does.
    const matches = sameHash(hash, record?.hash ?? NO_HASH);
    if (record === null || !matches) {
      if (known !== null) this.#verified.delete(token);
      return null;
    }
    const now = this.#now();
    if (!(now < record.expiresAt)) return null;
    this.#recordUse(id, record.lastUsedAt, now);
    // The identity of the last request with this key, while the record says
    // the same (a key's scopes and expiry may change in its store).
    const last = known?.identity;
    if (last && sameGrant(last, record)) return last;
    if (subjectProblem(record.subject) !== null) return null;
    const identity: Identity = Object.freeze({
      subject: record.subject,
      jti: id,
      issuedAt: record.createdAt,
      expiresAt: Math.floor(record.expiresAt / 1000),
      apiKey: Object.freeze({ id, scopes: Object.freeze([...record.scopes]) }),
    });
    if (known !== null) known.identity = identity;
    else this.#remember(token, { id, hash, identity });
    return identity;
  }

  #remember(token: string, verified: Verified): void {
    if (this.#verified.size >= CACHE_SIZE) {
      this.#verified.delete(this.#verified.keys().next().value!);
    }
    this.#verified.set(token, verified);
  }

  /** "Last used": a write when the stored time is an interval old, at most once an interval. */
  #recordUse(id: string, stored: number, now: number): void {
    const record = this.#store.recordApiKeyUse;
    if (record === undefined || now - stored < this.#interval) return;
    const last = this.#written.get(id);
    if (last !== undefined && now - last < this.#interval) return;
    if (this.#written.size >= CACHE_SIZE) {
      this.#written.delete(this.#written.keys().next().value!);
    }
    this.#written.set(id, now);
    let work: Promise<void>;
    try {
      work = record.call(this.#store, id, now);
    } catch (error) {
      work = Promise.reject(error);
    }
    work.catch((error) =>
      this.#onError(
        `portcullis: API key last-use not recorded: ${
          (error as Error)?.message
        }`,
      )
    );
  }
}

/** Whether an identity made from a key's record still says what the record says. */
function sameGrant(identity: Identity, record: StoredApiKey): boolean {
  const scopes = identity.apiKey!.scopes;
  if (
    identity.subject !== record.subject ||
    identity.issuedAt !== record.createdAt ||
    identity.expiresAt !== Math.floor(record.expiresAt / 1000) ||
    scopes.length !== record.scopes.length
  ) {
    return false;
  }
  for (let i = 0; i < scopes.length; i++) {
    if (scopes[i] !== record.scopes[i]) return false;
  }
  return true;
}

function unavailable(cause: unknown): AuthError {
  return new AuthError(
    "STORE_UNAVAILABLE",
    "API key store did not answer: no identity was established",
    {
      cause,
      reason: cause instanceof DeadlineExceeded ? "timeout" : "failed",
    },
  );
}
