/**
 * A key-value store over Deno KV.
 *
 * @module
 */
import type { KeyValueStore, PutOptions } from "./key_value_store.ts";

/** The part of `Deno.Kv` this store uses (so no unstable types leak out). */
export interface DenoKvLike {
  /** Reads one key with its versionstamp. */
  get(
    key: readonly string[],
  ): Promise<{ value: unknown; versionstamp: string | null }>;
  /** Starts an atomic operation (used by `increment`). */
  atomic(): DenoKvAtomicLike;
  /** Reads up to 10 keys at once. */
  getMany(
    keys: readonly (readonly string[])[],
  ): Promise<readonly { value: unknown }[]>;
  /** Writes one key. */
  set(
    key: readonly string[],
    value: unknown,
    options?: { expireIn?: number },
  ): Promise<unknown>;
  /** Deletes one key. */
  delete(key: readonly string[]): Promise<void>;
  /** Closes the database. */
  close(): void;
}

/** The part of `Deno.AtomicOperation` this store uses. */
export interface DenoKvAtomicLike {
  /** Fails the commit unless the key still has this versionstamp. */
  check(
    ...checks: { key: readonly string[]; versionstamp: string | null }[]
  ): DenoKvAtomicLike;
  /** Writes a key when the commit succeeds. */
  set(
    key: readonly string[],
    value: unknown,
    options?: { expireIn?: number },
  ): DenoKvAtomicLike;
  /** Commits; `ok` is false when a check failed. */
  commit(): Promise<{ ok: boolean }>;
}

/** Options of {@linkcode DenoKV}. */
export interface DenoKVOptions {
  /** The first part of every key; default `"portcullis"`. */
  prefix?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

interface Stored {
  v: string;
  e: number; // unix ms of expiry, 0 when it does not expire
}

// Deno KV reads at most 10 keys in one getMany.
const BATCH = 10;

/**
 * A {@linkcode KeyValueStore} over Deno KV (local SQLite, or the managed
 * database on Deno Deploy). Revocation is immediate: reads are strongly
 * consistent by default.
 *
 * Deno KV's `expireIn` only says "delete at some point after": an expired
 * entry can still be read for a while. So each value carries its expiry and
 * is re-checked on every read. Reads of up to 10 keys are one round trip.
 *
 * @example Usage
 * ```ts ignore
 * import { DenoKV, KVSessionStore } from "@portcullis/auth";
 * const kv = await DenoKV.open(); // or new DenoKV(await Deno.openKv())
 * const store = new KVSessionStore(kv);
 * ```
 */
export class DenoKV implements KeyValueStore {
  #kv: DenoKvLike;
  #prefix: string;
  #now: () => number;

  /**
   * Wraps an open Deno KV database.
   *
   * @param kv An open `Deno.Kv`.
   * @param options Key prefix and clock.
   */
  constructor(kv: DenoKvLike, options: DenoKVOptions = {}) {
    this.#kv = kv;
    this.#prefix = options.prefix ?? "portcullis";
    this.#now = options.now ?? Date.now;
  }

  /**
   * Opens Deno KV (needs `--unstable-kv` or `"unstable": ["kv"]`).
   *
   * @param path A file path; default the project's default database.
   * @param options Key prefix and clock.
   * @returns The store.
   * @throws {TypeError} Outside Deno.
   */
  static async open(path?: string, options?: DenoKVOptions): Promise<DenoKV> {
    const d = (globalThis as {
      Deno?: { openKv?: (path?: string) => Promise<DenoKvLike> };
    }).Deno;
    if (typeof d?.openKv !== "function") {
      throw new TypeError(
        "Deno KV is not available: run on Deno with --unstable-kv, or use another store",
      );
    }
    return new DenoKV(await d.openKv(path), options);
  }

  /** Closes the underlying database. */
  close(): void {
    this.#kv.close();
  }

  /** {@inheritDoc KeyValueStore.getMany} */
  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    const now = this.#now();
    const parts: Promise<readonly { value: unknown }[]>[] = [];
    for (let i = 0; i < keys.length; i += BATCH) {
      parts.push(
        this.#kv.getMany(
          keys.slice(i, i + BATCH).map((k) => [this.#prefix, k]),
        ),
      );
    }
    const out: (string | null)[] = [];
    for (const entries of await Promise.all(parts)) {
      for (const { value } of entries) {
        const s = value as Stored | null;
        out.push(
          s !== null && typeof s === "object" && typeof s.v === "string" &&
            (s.e === 0 || s.e > now)
            ? s.v
            : null,
        );
      }
    }
    return out;
  }

  /** {@inheritDoc KeyValueStore.put} */
  async put(
    key: string,
    value: string,
    options: PutOptions = {},
  ): Promise<void> {
    const ttl = options.ttlSeconds;
    if (ttl === undefined) {
      await this.#kv.set([this.#prefix, key], { v: value, e: 0 });
    } else {
      const ms = Math.max(1, Math.ceil(ttl * 1000));
      await this.#kv.set(
        [this.#prefix, key],
        { v: value, e: this.#now() + ms },
        {
          expireIn: ms,
        },
      );
    }
  }

  /**
   * Atomic counter: a read and a checked write, retried when another writer
   * got there first.
   *
   * @param key The counter's key.
   * @param ttlSeconds The window, from the first increment.
   * @returns The counter after this increment.
   */
  async increment(key: string, ttlSeconds: number): Promise<number> {
    const k = [this.#prefix, key];
    for (let attempt = 0; attempt < 100; attempt++) {
      const now = this.#now();
      const current = await this.#kv.get(k);
      const s = current.value as Stored | null;
      const live = s !== null && typeof s === "object" &&
        typeof s.v === "string" && (s.e === 0 || s.e > now);
      const n = live ? (Number.parseInt(s.v, 10) || 0) + 1 : 1;
      const e = live ? s.e : now + Math.max(1, Math.ceil(ttlSeconds * 1000));
      const op = this.#kv.atomic().check({
        key: k,
        versionstamp: current.versionstamp,
      });
      const { ok } = await op
        .set(
          k,
          { v: String(n), e },
          e === 0 ? {} : { expireIn: Math.max(1, e - now) },
        )
        .commit();
      if (ok) return n;
    }
    throw new Error("DenoKV increment: too much contention on one key");
  }

  /** {@inheritDoc KeyValueStore.delete} */
  async delete(key: string): Promise<void> {
    await this.#kv.delete([this.#prefix, key]);
  }
}
