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
 * Counts hits per key in fixed windows. Keys are hashed (SHA-256) before they
 * reach the store, so the store holds no email or address. The count is a
 * read followed by a write: concurrent hits can undercount slightly, which a
 * rate limit tolerates (a store with an atomic increment would be exact).
 */
export class RateLimiter {
  #kv: KeyValueStore;
  #now: () => number;

  /**
   * @param kv The key-value store.
   * @param now The clock, in unix milliseconds.
   */
  constructor(kv: KeyValueStore, now: () => number) {
    this.#kv = kv;
    this.#now = now;
  }

  /**
   * Whether any of the limits is used up, in one store round trip.
   *
   * @param limits The limits to check.
   * @returns Seconds until the first blocked limit opens again (for
   * `Retry-After`), or `0` when none is used up.
   */
  async blocked(limits: readonly Limit[]): Promise<number> {
    const slots = await Promise.all(limits.map((l) => this.#slot(l)));
    const values = await this.#kv.getMany(slots.map((s) => s.key));
    let wait = 0;
    values.forEach((value, i) => {
      if (Number(value ?? 0) >= limits[i].max) {
        wait = Math.max(wait, slots[i].secondsLeft);
      }
    });
    return wait;
  }

  /**
   * Counts one hit against each limit.
   *
   * @param limits The limits.
   */
  async hit(limits: readonly Limit[]): Promise<void> {
    const slots = await Promise.all(limits.map((l) => this.#slot(l)));
    const values = await this.#kv.getMany(slots.map((s) => s.key));
    await Promise.all(
      slots.map((slot, i) =>
        this.#kv.put(slot.key, String(Number(values[i] ?? 0) + 1), {
          ttlSeconds: Math.max(slot.secondsLeft, 60),
        })
      ),
    );
  }

  /**
   * Forgets the current window of each limit (a successful login resets the
   * account's failure count).
   *
   * @param limits The limits.
   */
  async reset(limits: readonly Limit[]): Promise<void> {
    const slots = await Promise.all(limits.map((l) => this.#slot(l)));
    await Promise.all(slots.map((s) => this.#kv.delete(s.key)));
  }

  async #slot(limit: Limit): Promise<{ key: string; secondsLeft: number }> {
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
