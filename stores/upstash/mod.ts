/**
 * A key-value store on Upstash Redis over its REST API (`@upstash/redis`),
 * for runtimes without TCP sockets (Cloudflare Workers, Vercel Edge) or
 * without a local Redis.
 *
 * Consistency: immediate on a single-region database: a revocation written
 * by one instance is seen by the next read from any instance. On an Upstash
 * Global database with read regions, reads go to the nearest replica, which
 * the primary updates asynchronously; the client's read-your-writes token
 * only covers that same client's own writes. Keep the denylist on a
 * single-region database, or accept that replication lag.
 * Latency: one HTTPS request per call, so one per authenticated request.
 *
 * @module
 */
import { Redis } from "@upstash/redis";
import type { KeyValueStore } from "@portcullis/auth";
import type { PutOptions } from "@portcullis/auth/sessions";

/**
 * The part of an `@upstash/redis` `Redis` client this store uses, described
 * by shape so that any build of the client fits (`@upstash/redis`,
 * `@upstash/redis/cloudflare`, `@upstash/redis/fastly`).
 */
export interface UpstashRedisLike {
  /** `MGET`. */
  mget(...args: never[]): Promise<unknown>;
  /** `SET`. */
  set(...args: never[]): Promise<unknown>;
  /** `DEL`. */
  del(...args: never[]): Promise<unknown>;
  /** Starts a MULTI/EXEC transaction. */
  multi(): unknown;
}

/** Options of {@linkcode UpstashKV} built from a URL and a token. */
export interface UpstashKVUrlOptions {
  /** The REST URL (`UPSTASH_REDIS_REST_URL`). */
  url: string;
  /** The REST token (`UPSTASH_REDIS_REST_TOKEN`); never logged. */
  token: string;
  /** Prepended to every key, such as `"auth:"`; empty by default. */
  prefix?: string;
}

/** Options of {@linkcode UpstashKV} over a client you made. */
export interface UpstashKVClientOptions {
  /**
   * A client made with `automaticDeserialization: false`; otherwise values
   * such as `"1"` or `"{}"` would come back parsed as JSON, so the
   * constructor refuses it. On Cloudflare Workers import `Redis` from
   * `"@upstash/redis/cloudflare"`.
   */
  redis: UpstashRedisLike;
  /** Prepended to every key, such as `"auth:"`; empty by default. */
  prefix?: string;
}

/** Options of {@linkcode UpstashKV}: a URL and token, or a client. */
export type UpstashKVOptions = UpstashKVUrlOptions | UpstashKVClientOptions;

/** Checks a time to live and answers it in whole milliseconds. */
function ttlMillis(ttlSeconds: number): number {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(
      `ttlSeconds must be a positive number of seconds: received ${ttlSeconds}`,
    );
  }
  return Math.ceil(ttlSeconds * 1000);
}

/**
 * A {@linkcode KeyValueStore} on Upstash Redis: `getMany` is one `MGET`
 * (one HTTP request), `put` is `SET key value EX ttl` (`PX` for a
 * fractional ttl), `delete` is `DEL`. Values are stored as plain strings, so
 * other Redis clients read them as they are.
 *
 * Consistency: immediate (see the module doc). Failures (network, a wrong
 * token, Redis errors) throw the client's `UpstashError` or a fetch error;
 * the client's own retries (by default five, with backoff, several seconds
 * in all) apply to network errors only. To fail fast, pass your own client
 * made with `retry: { retries: 1 }` or `retry: false`.
 *
 * @example Usage
 * ```ts ignore
 * import { UpstashKV } from "@portcullis/upstash";
 *
 * const kv = new UpstashKV({
 *   url: Deno.env.get("UPSTASH_REDIS_REST_URL")!,
 *   token: Deno.env.get("UPSTASH_REDIS_REST_TOKEN")!,
 *   prefix: "auth:",
 * });
 * await kv.put("revoked:abc", "1", { ttlSeconds: 3600 });
 * const [hit, miss] = await kv.getMany(["revoked:abc", "revoked:xyz"]);
 * // hit === "1", miss === null
 * ```
 */
export class UpstashKV implements KeyValueStore {
  #redis: Redis;
  #prefix: string;

  /**
   * Makes a store from a URL and token, or over an existing client.
   *
   * @param options See {@linkcode UpstashKVOptions}.
   * @throws {TypeError} When the client would parse values as JSON, or the
   * URL or token is missing.
   */
  constructor(options: UpstashKVOptions) {
    this.#prefix = options.prefix ?? "";
    if ("redis" in options) {
      // `opts` is the client's own record of its options (protected in its
      // type, a plain field at run time).
      const opts = (options.redis as unknown as {
        opts?: { automaticDeserialization?: boolean };
      }).opts;
      if (opts?.automaticDeserialization !== false) {
        throw new TypeError(
          'UpstashKV needs a Redis client made with automaticDeserialization: false: otherwise values such as "1" come back parsed as JSON',
        );
      }
      this.#redis = options.redis as unknown as Redis;
    } else {
      if (!options.url || !options.token) {
        throw new TypeError(
          "UpstashKV needs both url and token: one of them is empty",
        );
      }
      this.#redis = new Redis({
        url: options.url,
        token: options.token,
        automaticDeserialization: false,
        enableTelemetry: false,
      });
    }
  }

  /**
   * Reads several keys with one `MGET`.
   *
   * @param keys The keys to read.
   * @returns One value per key, in order; `null` for a missing or expired key.
   */
  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    if (keys.length === 0) return [];
    const values = await this.#redis.mget<(string | null)[]>(
      keys.map((k) => this.#prefix + k),
    );
    if (!Array.isArray(values) || values.length !== keys.length) {
      throw new Error(
        `Upstash answered MGET with ${
          Array.isArray(values) ? values.length : "no"
        } values: expected ${keys.length}`,
      );
    }
    return values.map((v) => v === null || v === undefined ? null : String(v));
  }

  /**
   * Writes one value with `SET`, with `EX` (or `PX`) when a time to live is
   * given.
   *
   * @param key The key.
   * @param value The value.
   * @param options The time to live; without it the entry does not expire.
   * @throws {RangeError} When `ttlSeconds` is not a positive number.
   */
  async put(key: string, value: string, options?: PutOptions): Promise<void> {
    const k = this.#prefix + key;
    if (options?.ttlSeconds === undefined) {
      await this.#redis.set(k, value);
      return;
    }
    const ms = ttlMillis(options.ttlSeconds);
    if (ms % 1000 === 0) await this.#redis.set(k, value, { ex: ms / 1000 });
    else await this.#redis.set(k, value, { px: ms });
  }

  /**
   * Atomic counter in one HTTP request: `SET key 0 EX ttl NX` then `INCR`
   * inside one MULTI/EXEC transaction, so the window starts at the first hit.
   *
   * @param key The counter's key.
   * @param ttlSeconds The window, from the first increment.
   * @returns The counter after this increment.
   */
  async increment(key: string, ttlSeconds: number): Promise<number> {
    const k = this.#prefix + key;
    const ms = ttlMillis(ttlSeconds);
    const tx = this.#redis.multi();
    tx.set(k, "0", { px: ms, nx: true });
    tx.incr(k);
    const [, n] = await tx.exec<[unknown, number]>();
    return Number(n);
  }

  /**
   * Removes one key with `DEL`.
   *
   * @param key The key.
   */
  async delete(key: string): Promise<void> {
    await this.#redis.del(this.#prefix + key);
  }
}

/** The key-value protocol this store implements, re-exported so this entry documents itself. */
export type { KeyValueStore } from "@portcullis/auth";
export type { PutOptions } from "@portcullis/auth/sessions";
