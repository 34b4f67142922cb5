/**
 * A bounded memory of tokens whose MAC was already verified, so a token seen
 * before skips the HMAC. It holds only what the MAC proved (the parsed
 * payload); expiry and revocation are still checked on every request by the
 * manager. Keyed by the exact token string.
 *
 * @module
 */
import type { Identity } from "./session_payload.ts";

/**
 * Remembers up to `capacity` verified tokens; the oldest entry leaves first.
 * A capacity of 0 remembers nothing.
 */
export class VerifiedTokenCache {
  #capacity: number;
  #entries = new Map<string, Identity>();
  // Oldest-first through a ring of keys: deleting a Map's first key leaves
  // holes that `keys().next()` walks (40 µs per eviction at 10000 entries);
  // the ring is O(1).
  #ring: (string | undefined)[] = [];
  #ringAt = 0;

  /** @param capacity How many tokens to remember (0 turns it off). */
  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 0) {
      throw new RangeError(
        `cacheSize must be a whole number of tokens, 0 or more: received ${capacity}`,
      );
    }
    this.#capacity = capacity;
  }

  /** How many tokens are remembered now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The identity a token was verified to carry, if remembered. */
  get(token: string): Identity | undefined {
    return this.#entries.get(token);
  }

  /** Remembers a verified token, evicting the oldest when full. */
  set(token: string, identity: Identity): void {
    if (this.#capacity === 0 || this.#entries.has(token)) return;
    const at = this.#ringAt;
    const oldest = this.#ring[at];
    if (oldest !== undefined) this.#entries.delete(oldest);
    this.#ring[at] = token;
    this.#ringAt = at + 1 === this.#capacity ? 0 : at + 1;
    this.#entries.set(token, identity);
  }

  /** Forgets every token (for a change of keys). */
  clear(): void {
    this.#entries.clear();
    this.#ring = [];
    this.#ringAt = 0;
  }
}
