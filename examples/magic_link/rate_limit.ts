/**
 * Fixed-window request limits over a {@linkcode KeyValueStore}: an atomic
 * `increment` where the store has one, else read-then-write.
 *
 * @module
 */
import type { KeyValueStore } from "@portcullis/auth";

/** One limit: at most `max` requests per `windowSeconds` for one `key`. */
export interface Limit {
  /** What is limited, such as `magic-link-email`. */
  name: string;
  /** Whom it is counted for (an email, an address); stored hashed. */
  key: string;
  /** Requests allowed in a window. */
  max: number;
  /** The window, in seconds. */
  windowSeconds: number;
}

/** Counts requests against limits. */
export class RateLimiter {
  #kv: KeyValueStore;
  #now: () => number;

  /**
   * Makes a limiter over a store.
   *
   * @param kv Where the counters live.
   * @param now The clock, in unix milliseconds.
   */
  constructor(kv: KeyValueStore, now: () => number = Date.now) {
    this.#kv = kv;
    this.#now = now;
  }

  /**
   * Counts one request against every limit.
   *
   * @returns 0 when allowed, else the seconds until the fullest window ends.
   */
  async take(limits: readonly Limit[]): Promise<number> {
    const slots = await Promise.all(limits.map((l) => this.#slot(l)));
    const ttl = (s: { secondsLeft: number }) => Math.max(s.secondsLeft, 60);
    let counts: number[];
    if (this.#kv.increment) {
      const increment = this.#kv.increment.bind(this.#kv);
      counts = await Promise.all(slots.map((s) => increment(s.key, ttl(s))));
    } else {
      const values = await this.#kv.getMany(slots.map((s) => s.key));
      counts = values.map((v) => Number(v ?? 0) + 1);
      await Promise.all(
        slots.map((s, i) =>
          counts[i] <= limits[i].max
            ? this.#kv.put(s.key, String(counts[i]), { ttlSeconds: ttl(s) })
            : undefined
        ),
      );
    }
    let wait = 0;
    counts.forEach((n, i) => {
      if (n > limits[i].max) wait = Math.max(wait, slots[i].secondsLeft);
    });
    return wait;
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
    const hex = [...digest.subarray(0, 16)]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
    return {
      key: `rate:${limit.name}:${hex}:${window}`,
      secondsLeft: (window + 1) * limit.windowSeconds - nowS,
    };
  }
}
