/**
 * Sliding-window rate limits over a key-value store: at most `max` hits
 * per `windowSeconds` for one key, kept in the store (never in process
 * memory) so every instance of an app shares them.
 *
 * @module
 */
import { bump, counterKey } from "./_counter.ts";
import { guarded } from "./_guarded.ts";
import type { ThrottleStore } from "./throttle_store.ts";

/** One limit: at most `max` hits per `windowSeconds` for one key. */
export interface Limit {
  /** Which counter, for example `"register-address"`. */
  name: string;
  /** Whose counter, for example an account id or a client address. */
  key: string;
  /** Hits allowed in any window of `windowSeconds`. */
  max: number;
  /** The window's length, in seconds (at least 1). */
  windowSeconds: number;
}

/** Options of {@linkcode SlidingWindowLimiter}. */
export interface SlidingWindowLimiterOptions {
  /** Prefix of every key; default `"throttle:"`. */
  prefix?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

/**
 * Counts hits per key in a sliding window: the estimate is this window's
 * count plus the previous window's, weighted by how much of it still lies
 * inside the last `windowSeconds` (the approximation Cloudflare and Redis
 * rate limiters use). Unlike a fixed window, a burst at the end of one
 * window and the start of the next cannot reach twice the limit.
 *
 * Call {@linkcode SlidingWindowLimiter.take} **before** the work a limit
 * protects: it counts the hit first (an atomic increment where the store
 * has one), so concurrent requests cannot all pass before any is counted. A
 * refused hit stays counted. Keys are hashed (SHA-256) before they reach
 * the store.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryKV } from "@portcullis/auth";
 * import { SlidingWindowLimiter } from "@portcullis/auth/throttle";
 * const limiter = new SlidingWindowLimiter(new MemoryKV());
 * const limit = { name: "register", key: "203.0.113.9", max: 2, windowSeconds: 3600 };
 * assert.equal(await limiter.take([limit]), 0);
 * assert.equal(await limiter.take([limit]), 0);
 * assert.ok((await limiter.take([limit])) > 0); // seconds to wait
 * ```
 */
export class SlidingWindowLimiter {
  #store: ThrottleStore;
  #prefix: string;
  #now: () => number;

  /**
   * Makes a limiter over a store.
   *
   * @param store A key-value store; its `increment` is used when present.
   * @param options The key prefix and the clock.
   * @throws {TypeError} When the store is missing.
   */
  constructor(store: ThrottleStore, options: SlidingWindowLimiterOptions = {}) {
    if (store === undefined || typeof store?.getMany !== "function") {
      throw new TypeError(
        "SlidingWindowLimiter needs a store: a KeyValueStore such as MemoryKV or DenoKV",
      );
    }
    this.#store = guarded(store);
    this.#prefix = options.prefix ?? "throttle:";
    this.#now = options.now ?? Date.now;
  }

  /** Whether hits are counted atomically (the store has `increment`). */
  get atomic(): boolean {
    return typeof this.#store.increment === "function";
  }

  /**
   * Counts one hit against each limit and answers whether it may go on.
   *
   * @param limits The limits.
   * @returns `0` when the hit may go on, otherwise the seconds until the
   * first refusing limit lets a hit through again (for `Retry-After`).
   * @throws {RangeError} For a limit whose `max` or `windowSeconds` is not a
   * positive whole number.
   */
  async take(limits: readonly Limit[]): Promise<number> {
    const now = this.#now() / 1000;
    const waits = await Promise.all(limits.map(async (limit) => {
      checkLimit(limit);
      const w = limit.windowSeconds;
      const index = Math.floor(now / w);
      const base = await counterKey(this.#prefix, limit.name, limit.key);
      const [count, [previous]] = await Promise.all([
        bump(this.#store, `${base}:${index}`, 2 * w + 1),
        this.#store.getMany([`${base}:${index - 1}`]),
      ]);
      const elapsed = now - index * w;
      const prev = Number.parseInt(previous ?? "0", 10) || 0;
      const estimate = count + prev * (1 - elapsed / w);
      if (estimate <= limit.max) return 0;
      // Until the previous window's share has decayed enough, or this
      // window has ended.
      if (count > limit.max || prev === 0) return w - elapsed;
      const free = (count + prev - limit.max) / prev * w; // seconds into window
      return Math.max(1, Math.min(w - elapsed, free - elapsed));
    }));
    return Math.ceil(Math.max(0, ...waits));
  }

  /**
   * Forgets the counts of each limit (a successful password change resets
   * the account's count).
   *
   * @param limits The limits.
   */
  async reset(limits: readonly Limit[]): Promise<void> {
    const now = this.#now() / 1000;
    await Promise.all(limits.map(async (limit) => {
      const index = Math.floor(now / limit.windowSeconds);
      const base = await counterKey(this.#prefix, limit.name, limit.key);
      await Promise.all([
        this.#store.delete(`${base}:${index}`),
        this.#store.delete(`${base}:${index - 1}`),
      ]);
    }));
  }
}

function checkLimit(limit: Limit): void {
  for (const field of ["max", "windowSeconds"] as const) {
    const v = limit[field];
    if (!Number.isSafeInteger(v) || v <= 0) {
      throw new RangeError(
        `Limit "${limit.name}" needs ${field} as a positive whole number: received ${v}`,
      );
    }
  }
}
