/**
 * The store the throttle counts in: the slice of the key-value protocol it
 * uses, declared here so that this folder imports nothing from the layers.
 * `MemoryKV`, `DenoKV`, `LibsqlKV`, `UpstashKV` (and any other
 * `KeyValueStore` with `increment`) satisfy it as they are.
 *
 * @module
 */

/**
 * What the throttle needs from a key-value store: several keys read in one
 * round trip, writes with a time to live, deletes, and (for exact counts
 * under concurrency) an atomic increment.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryKV } from "@portcullis/auth";
 * import type { ThrottleStore } from "@portcullis/auth/throttle";
 * const store: ThrottleStore = new MemoryKV();
 * assert.equal(await store.increment!("n", 60), 1);
 * assert.equal(await store.increment!("n", 60), 2);
 * ```
 */
export interface ThrottleStore {
  /**
   * Reads several keys in one round trip.
   *
   * @param keys The keys.
   * @returns One value per key, `null` for a missing or expired one.
   */
  getMany(keys: readonly string[]): Promise<(string | null)[]>;
  /**
   * Writes one value.
   *
   * @param key The key.
   * @param value The value.
   * @param options `ttlSeconds`: when the entry disappears.
   */
  put(
    key: string,
    value: string,
    options?: { ttlSeconds?: number },
  ): Promise<void>;
  /**
   * Removes one key.
   *
   * @param key The key.
   */
  delete(key: string): Promise<void>;
  /**
   * Adds 1 to the integer at `key` atomically and answers the new value; a
   * missing key starts at 1 and lives `ttlSeconds` from then. Optional: a
   * store without it (Cloudflare KV) is counted by a read and a write, which
   * concurrent requests can race past by about the number in flight.
   *
   * @param key The counter.
   * @param ttlSeconds Its lifetime, from the first increment.
   * @returns The counter after this increment.
   */
  increment?(key: string, ttlSeconds: number): Promise<number>;
}
