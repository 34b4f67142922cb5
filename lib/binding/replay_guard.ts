/**
 * One-time use of short-lived values (DPoP proof `jti`s, device-bound
 * refresh challenges): a value is accepted once within its life. Always
 * remembered in this process's memory; with a key-value store, also there,
 * so that a value used on one instance is refused on every other.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import type { KeyValueStore } from "../kv/key_value_store.ts";
import { sha256Base64Url } from "./proof_jwt.ts";

/** Options of {@linkcode ReplayGuard}. */
export interface ReplayGuardOptions {
  /**
   * The shared store. With `increment` (memory, Deno KV, Redis, Upstash,
   * libSQL) the first use wins atomically across instances; without it
   * (Cloudflare KV) a read then a write: a replay racing the first use on
   * another instance, or arriving there before the write propagates (up to
   * about 60 s on Cloudflare KV), can pass. Without a store, one instance
   * only.
   */
  store?: KeyValueStore | null;
  /** Key prefix; default `"portcullis:once:"`. */
  prefix?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /** How many values memory keeps (oldest leave first); default 100000. */
  capacity?: number;
}

/**
 * Accepts each value once within a window.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { ReplayGuard } from "./replay_guard.ts";
 * const once = new ReplayGuard();
 * assert.equal(await once.first("proof-1", 60), true);
 * assert.equal(await once.first("proof-1", 60), false);
 * ```
 */
export class ReplayGuard {
  #store: KeyValueStore | null;
  #prefix: string;
  #now: () => number;
  #capacity: number;
  #seen = new Map<string, number>();

  /**
   * Takes the store and the window's clock.
   *
   * @param options See {@linkcode ReplayGuardOptions}.
   */
  constructor(options: ReplayGuardOptions = {}) {
    this.#store = options.store ?? null;
    this.#prefix = options.prefix ?? "portcullis:once:";
    this.#now = options.now ?? Date.now;
    this.#capacity = options.capacity ?? 100_000;
  }

  /**
   * Records a value, answering whether this is its first use.
   *
   * @param value The one-time value (any string; hashed before storage).
   * @param ttlSeconds How long it must stay refused: at least its life.
   * @returns `true` the first time within `ttlSeconds`, `false` after.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the shared store fails
   * (the value then counts as not accepted: fail closed).
   */
  async first(value: string, ttlSeconds: number): Promise<boolean> {
    const key = await sha256Base64Url(value);
    const now = this.#now();
    const until = this.#seen.get(key);
    if (until !== undefined && until > now) return false;
    this.#remember(key, now + ttlSeconds * 1000, now);
    const store = this.#store;
    if (store === null) return true;
    const full = this.#prefix + key;
    const ttl = Math.max(60, Math.ceil(ttlSeconds));
    try {
      if (store.increment !== undefined) {
        return (await store.increment(full, ttl)) === 1;
      }
      const [seen] = await store.getMany([full]);
      if (seen !== null) return false;
      await store.put(full, "1", { ttlSeconds: ttl });
      return true;
    } catch (cause) {
      throw new AuthError(
        "STORE_UNAVAILABLE",
        "Replay store did not answer: the value was not accepted",
        { cause, reason: "failed" },
      );
    }
  }

  #remember(key: string, until: number, now: number): void {
    const seen = this.#seen;
    seen.delete(key);
    seen.set(key, until);
    if (seen.size <= this.#capacity) return;
    // Oldest first: values share one window, so these expire first.
    for (const [k, t] of seen) {
      if (seen.size <= this.#capacity && t > now) break;
      seen.delete(k);
    }
  }
}
