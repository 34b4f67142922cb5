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
   * Optional: what `getMany` would answer, synchronously, for a store whose
   * data lives in this process's memory (`MemoryKV`). A store that needs
   * a round trip leaves it out.
   *
   * @param keys The keys.
   * @returns One value or `null` per key, in order.
   */
  getManySync?(keys: readonly string[]): (string | null)[];
  /**
   * Writes one value.
   *
   * @param key The key.
   * @param value The value.
   * @param options The time to live; without it the entry does not expire.
   */
  put(key: string, value: string, options?: PutOptions): Promise<void>;
  /**
   * Optional atomic counter, for rate limits: adds 1 to the integer at
   * `key` and answers the new value. A missing or expired key starts at 1
   * and lives `ttlSeconds` from then; later increments keep that expiry (a
   * fixed window). Stores without an atomic operation (Cloudflare KV) leave
   * it out, and callers fall back to `getMany` and `put`.
   *
   * @param key The counter's key.
   * @param ttlSeconds The window, from the first increment.
   * @returns The counter after this increment.
   */
  increment?(key: string, ttlSeconds: number): Promise<number>;
  /**
   * Removes one key; removing a missing key is not an error.
   *
   * @param key The key.
   */
  delete(key: string): Promise<void>;
}
