/**
 * A key-value store on a Cloudflare Workers KV namespace binding, declared
 * by the shape it uses (no driver, no `@cloudflare/workers-types` import).
 *
 * **Consistency: eventual.** Workers KV caches values at the edge; a write
 * (including a delete) can take about 60 seconds or more to be seen in other
 * locations, while the location that wrote it sees it at once. And KV's
 * `expirationTtl` has a minimum of 60 seconds. For revocation this means:
 * a revoked session (or a "sign out everywhere") can keep working for up to
 * about a minute in other locations. If that window is not acceptable, keep
 * the denylist in a strongly consistent store (Durable Objects, D1, Upstash,
 * libSQL).
 *
 * **Never keep single-use tokens here** (email verification, password
 * reset): KV has no atomic read-and-delete or compare-and-swap, so a token
 * can be consumed twice, in two locations or even in one. Use the SQL store
 * (or D1) for them.
 *
 * Latency: a read served from the edge cache is fast; a cold read goes to
 * the central store. `getMany` is one bulk read per 100 keys.
 *
 * @module
 */
import type { KeyValueStore } from "@portcullis/auth";
import type { PutOptions } from "@portcullis/auth/sessions";

/** What a read with metadata answers for one key. */
export interface KVValueWithMetadata {
  /** The value, or `null` when the key is missing. */
  value: string | null;
  /** The metadata stored with the value, or `null`. */
  metadata: unknown;
}

/**
 * The part of a Workers KV namespace binding (`env.MY_KV`) that
 * {@linkcode CloudflareKV} uses. A real `KVNamespace` fits it.
 */
export interface KVNamespaceLike {
  /** Reads one key with its metadata. */
  getWithMetadata(
    key: string,
    type: "text",
  ): Promise<KVValueWithMetadata>;
  /**
   * Bulk read of up to 100 keys in one operation (Workers runtime since
   * April 2025); a missing key maps to `null` or to a `null` value.
   */
  getWithMetadata(
    keys: string[],
    type: "text",
  ): Promise<Map<string, KVValueWithMetadata | null>>;
  /** Writes one key. */
  put(
    key: string,
    value: string,
    options?: { expirationTtl?: number; metadata?: unknown },
  ): Promise<void>;
  /** Removes one key. */
  delete(key: string): Promise<void>;
}

/** Options of {@linkcode CloudflareKV}. */
export interface CloudflareKVOptions {
  /**
   * Use the bulk form `getWithMetadata(keys[])`: one KV operation per 100
   * keys. `true` by default. Set `false` for a runtime without bulk reads
   * (workerd before April 2025, Miniflare 3, whose KV answers bulk reads
   * with `405`); `getMany` then reads every key in parallel, which costs one
   * KV operation per key and counts against the Worker's limit on
   * simultaneous subrequests.
   */
  bulkGet?: boolean;
  /** The clock, in unix milliseconds; `Date.now` by default. */
  now?: () => number;
}

/** KV's smallest `expirationTtl`, in seconds. */
export const CLOUDFLARE_KV_MIN_TTL_SECONDS = 60;

/** Keys per bulk read; KV refuses more. */
const KEYS_PER_BULK_READ = 100;

/** Answers the value unless the metadata says it expired. */
function live(
  entry: KVValueWithMetadata | null | undefined,
  now: number,
): string | null {
  if (!entry || entry.value === null || entry.value === undefined) return null;
  const meta = entry.metadata as { expiresAt?: unknown } | null;
  if (typeof meta?.expiresAt === "number" && meta.expiresAt <= now) {
    return null;
  }
  return entry.value;
}

/**
 * A {@linkcode KeyValueStore} on a Workers KV namespace.
 *
 * - `getMany`: the bulk `getWithMetadata(keys, "text")`, one call per 100
 *   keys, in parallel (see {@linkcode CloudflareKVOptions.bulkGet} for the
 *   fallback).
 * - `put`: `expirationTtl` is the time to live rounded up to whole seconds
 *   and to at least 60 (KV's minimum). The exact expiry is stored in the
 *   entry's metadata (`{ expiresAt }`, unix milliseconds) and checked on
 *   every read, so an entry is never read after its own time to live even
 *   though KV keeps it up to 60 seconds longer.
 * - `delete`: `delete(key)`.
 *
 * Consistency is eventual, about 60 seconds across locations: read the
 * module doc before using this for revocation, and never use it for
 * single-use tokens. A binding failure throws the runtime's error.
 *
 * @example Usage
 * ```ts ignore
 * import { CloudflareKV } from "@portcullis/cloudflare";
 *
 * export default {
 *   async fetch(_req: Request, env: { AUTH_KV: KVNamespace }) {
 *     const kv = new CloudflareKV(env.AUTH_KV);
 *     await kv.put("revoked:abc", "1", { ttlSeconds: 3600 });
 *     const [hit] = await kv.getMany(["revoked:abc"]); // "1" here at once,
 *     // elsewhere within about 60 seconds
 *     return new Response(hit ?? "none");
 *   },
 * };
 * ```
 */
export class CloudflareKV implements KeyValueStore {
  #ns: KVNamespaceLike;
  #bulk: boolean;
  #now: () => number;

  /**
   * Wraps a KV namespace binding.
   *
   * @param namespace The binding, such as `env.AUTH_KV`.
   * @param options See {@linkcode CloudflareKVOptions}.
   */
  constructor(namespace: KVNamespaceLike, options: CloudflareKVOptions = {}) {
    this.#ns = namespace;
    this.#bulk = options.bulkGet ?? true;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Reads several keys: one bulk read per 100 keys (or one read per key with
   * `bulkGet: false`).
   *
   * @param keys The keys to read.
   * @returns One value per key, in order; `null` for a missing or expired key.
   */
  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    if (keys.length === 0) return [];
    if (!this.#bulk) {
      const entries = await Promise.all(
        keys.map((k) => this.#ns.getWithMetadata(k, "text")),
      );
      const now = this.#now();
      return entries.map((e) => live(e, now));
    }
    const chunks: string[][] = [];
    for (let i = 0; i < keys.length; i += KEYS_PER_BULK_READ) {
      chunks.push([...new Set(keys.slice(i, i + KEYS_PER_BULK_READ))]);
    }
    const maps = await Promise.all(
      chunks.map((c) => this.#ns.getWithMetadata(c, "text")),
    );
    const now = this.#now();
    const found = new Map<string, string | null>();
    for (const map of maps) {
      for (const [k, entry] of map) found.set(k, live(entry, now));
    }
    return keys.map((k) => found.get(k) ?? null);
  }

  /**
   * Writes one value; a time to live becomes `expirationTtl` of at least 60
   * seconds, with the exact expiry kept in the metadata.
   *
   * @param key The key.
   * @param value The value.
   * @param options The time to live; without it the entry does not expire.
   * @throws {RangeError} When `ttlSeconds` is not a positive number.
   */
  async put(key: string, value: string, options?: PutOptions): Promise<void> {
    const ttl = options?.ttlSeconds;
    if (ttl === undefined) {
      await this.#ns.put(key, value);
      return;
    }
    if (!Number.isFinite(ttl) || ttl <= 0) {
      throw new RangeError(
        `ttlSeconds must be a positive number of seconds: received ${ttl}`,
      );
    }
    await this.#ns.put(key, value, {
      expirationTtl: Math.max(CLOUDFLARE_KV_MIN_TTL_SECONDS, Math.ceil(ttl)),
      metadata: { expiresAt: this.#now() + Math.ceil(ttl * 1000) },
    });
  }

  /**
   * Removes one key (in other locations within about 60 seconds).
   *
   * @param key The key.
   */
  async delete(key: string): Promise<void> {
    await this.#ns.delete(key);
  }
}

/** The key-value protocol this store implements, re-exported so this entry documents itself. */
export type { KeyValueStore } from "@portcullis/auth";
export type { PutOptions } from "@portcullis/auth/sessions";
