/**
 * The key-value protocol the session layer stores its denylist in.
 *
 * @module
 */

/** Options of {@linkcode KeyValueStore.put}. */
export interface PutOptions {
  /**
   * Seconds until the entry disappears. Stores with a minimum (Cloudflare KV:
   * 60) round up; readers must never see an entry after it expired.
   */
  ttlSeconds?: number;
}

/**
 * A small key-value protocol: several keys read in one round trip, and writes
 * with a time to live. Values are strings. An implementation that cannot
 * reach its backend throws (any error); the session layer turns that into an
 * `AuthError` with code `"STORE_UNAVAILABLE"`, and the gates answer 503.
 *
 * Every store in `stores/` passes the shared conformance suite in
 * `tests/stores/_conformance.ts`.
 *
 * @example Usage
 * ```ts
 * import { MemoryKV } from "@portcullis/auth";
 * const kv = new MemoryKV();
 * await kv.put("a", "1", { ttlSeconds: 60 });
 * const [a, b] = await kv.getMany(["a", "b"]); // ["1", null]
 * ```
 */
export interface KeyValueStore {
  /**
   * Reads several keys in one round trip.
   *
   * @param keys The keys to read.
   * @returns One value per key, in order; `null` for a missing or expired key.
   */
  getMany(keys: readonly string[]): Promise<(string | null)[]>;
  /**
   * Writes one value.
   *
   * @param key The key.
   * @param value The value.
   * @param options The time to live; without it the entry does not expire.
   */
  put(key: string, value: string, options?: PutOptions): Promise<void>;
  /**
   * Removes one key; removing a missing key is not an error.
   *
   * @param key The key.
   */
  delete(key: string): Promise<void>;
}
