/**
 * Fixed-window rate limits kept in the key-value store (never in process
 * memory, so every instance of the app shares them).
 *
 * @module
 */
import type { KeyValueStore } from "@portcullis/auth";

/** One limit: at most `max` hits per `windowSeconds` for one key. */
export interface Limit {
  /** Which counter, for example `"login-email"`. */
  name: string;
  /** Whose counter, for example an email or a client address. */
  key: string;
  /** Hits allowed in one window. */
  max: number;
  /** The window's length, in seconds. */
  windowSeconds: number;
}

/**
 * A key-value store that may count atomically: `increment` adds 1 to a key
 * (creating it at 1 with that time to live when missing, the time to live
 * does not slide) and answers the new value. Optional in the protocol;
 * Cloudflare KV, for one, has no atomic operation.
 */
type MaybeCounting = KeyValueStore & {
  increment?: (key: string, ttlSeconds: number) => Promise<number>;
};

interface Slot {
  key: string;
  secondsLeft: number;
}

/**
 * Counts hits per key in fixed windows. Keys are hashed (SHA-256) before they
 * reach the store, so the store holds no email or address.
 *
 * Call {@linkcode RateLimiter.take} **before** the work a limit protects (a
 * password hash, a mail): it reserves the attempt first, so a burst of
 * concurrent requests cannot all pass the check before any of them is
 * counted.
 *
 * When the store has `increment`, a hit is one atomic increment and the
 * limit is exact under any concurrency. Without it (Cloudflare KV) the count
 * is a read followed by a write: concurrent requests that read the same
 * value all pass and count once, so a burst can get past `max` by about the
 * number of requests in flight. Use a store with `increment` where that
 * matters.
 */
export class RateLimiter {
  #kv: MaybeCounting;
  #now: () => number;

  /**
   * Makes a limiter over a store.
   *
   * @param kv The key-value store; its `increment`, when present, is used.
   * @param now The clock, in unix milliseconds.
   */
  constructor(kv: KeyValueStore, now: () => number) {
    this.#kv = kv;
    this.#now = now;
  }

  /** Whether hits are counted atomically (the store has `increment`). */
  get atomic(): boolean {
    return typeof this.#kv.increment === "function";
  }

  /**
   * Reserves one attempt against each limit, before the work it protects.
   * Atomic store: each counter is incremented, and the attempt is refused
   * when a new count passes its `max` (a refused attempt stays counted; the
   * window is fixed, so that only matters inside the window). Other
   * stores: refused, and not counted, when a counter already holds `max`;
   * otherwise each counter is read and written back plus one.
   *
   * @param limits The limits.
   * @returns `0` when the attempt may go on, otherwise the seconds until the
   * first refusing limit opens again (for `Retry-After`).
   */
  async take(limits: readonly Limit[]): Promise<number> {
    const slots = await this.#slots(limits);
    const increment = this.#kv.increment?.bind(this.#kv);
    if (increment !== undefined) {
      const counts = await Promise.all(
        slots.map((s) => increment(s.key, ttlOf(s))),
      );
      return waitFor(limits, slots, counts.map((n, i) => n > limits[i].max));
    }
    const values = (await this.#kv.getMany(slots.map((s) => s.key))).map((
      v,
    ) => Number(v ?? 0));
    const wait = waitFor(
      limits,
      slots,
      values.map((n, i) => n >= limits[i].max),
    );
    if (wait > 0) return wait;
    await Promise.all(
      slots.map((s, i) =>
        this.#kv.put(s.key, String(values[i] + 1), { ttlSeconds: ttlOf(s) })
      ),
    );
    return 0;
  }

  /**
   * Whether any of the limits is used up, without counting anything.
   *
   * @param limits The limits to check.
   * @returns Seconds until the first blocked limit opens again, or `0`.
   */
  async blocked(limits: readonly Limit[]): Promise<number> {
    const slots = await this.#slots(limits);
    const values = await this.#kv.getMany(slots.map((s) => s.key));
    return waitFor(
      limits,
      slots,
      values.map((v, i) => Number(v ?? 0) >= limits[i].max),
    );
  }

  /**
   * Forgets the current window of each limit (a successful login resets the
   * account's failure count).
   *
   * @param limits The limits.
   */
  async reset(limits: readonly Limit[]): Promise<void> {
    const slots = await this.#slots(limits);
    await Promise.all(slots.map((s) => this.#kv.delete(s.key)));
  }

  #slots(limits: readonly Limit[]): Promise<Slot[]> {
    return Promise.all(limits.map((l) => this.#slot(l)));
  }

  async #slot(limit: Limit): Promise<Slot> {
    const nowS = Math.floor(this.#now() / 1000);
    const window = Math.floor(nowS / limit.windowSeconds);
    const digest = new Uint8Array(
      await crypto.subtle.digest(
        "SHA-256",
        new TextEncoder().encode(`${limit.name}\n${limit.key}`),
      ),
    );
    let hex = "";
    for (const b of digest.subarray(0, 16)) {
      hex += b.toString(16).padStart(2, "0");
    }
    return {
      key: `rate:${limit.name}:${hex}:${window}`,
      secondsLeft: (window + 1) * limit.windowSeconds - nowS,
    };
  }
}

/** The counter lives to its window's end (at least 60 s, Cloudflare's minimum). */
function ttlOf(slot: Slot): number {
  return Math.max(slot.secondsLeft, 60);
}

function waitFor(
  limits: readonly Limit[],
  slots: readonly Slot[],
  over: readonly boolean[],
): number {
  let wait = 0;
  limits.forEach((_, i) => {
    if (over[i]) wait = Math.max(wait, slots[i].secondsLeft);
  });
  return wait;
}
