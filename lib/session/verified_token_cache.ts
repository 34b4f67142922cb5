/**
 * A bounded memory of tokens whose MAC was already verified, so a token seen
 * before skips the HMAC. It holds only what the MAC proved (the parsed
 * payload); expiry and revocation are still checked on every request by the
 * manager. A hit needs the exact token string.
 *
 * @module
 */
import type { Identity } from "./session_payload.ts";
import { base64UrlSextet } from "../_common/base64url.ts";

/** A remembered token and what its MAC proved. */
interface Entry {
  readonly token: string;
  readonly identity: Identity;
}

/**
 * The slot of a token: 30 bits read from five characters of its MAC (the
 * last 43 characters; the final one carries 4 bits only, so the five before
 * it), or -1 when one of them is outside the base64url alphabet (no such
 * token was ever verified).
 *
 * Why not the token string itself as the key: a request's token is a fresh
 * string (a slice of its header), so a `Map` keyed by it hashes ~100
 * characters on every request through the engine's runtime, the largest
 * single cost of a warm request in V8's profile. The MAC's characters are
 * uniformly distributed (only verified tokens are stored), so five of them
 * spread the slots as well as any hash; reading them is five loads. A hit
 * still needs the whole token to be equal, and a forged token reaches that
 * comparison only by guessing 30 bits of a stored token's MAC.
 */
function slotOf(token: string): number {
  // A caller in plain JavaScript may pass anything: no slot, as a `Map`
  // keyed by the token had no entry for it.
  if (typeof token !== "string") return -1;
  const n = token.length;
  if (n < 6) return -1;
  let slot = 0;
  for (let i = n - 6; i < n - 1; i++) {
    const v = base64UrlSextet(token.charCodeAt(i));
    if (v < 0) return -1;
    slot = (slot << 6) | v;
  }
  return slot;
}

/**
 * Remembers up to `capacity` verified tokens; the oldest entry leaves first.
 * A capacity of 0 remembers nothing.
 */
export class VerifiedTokenCache {
  #capacity: number;
  #entries = new Map<number, Entry>();
  // Oldest-first through a ring of slots: deleting a Map's first key leaves
  // holes that `keys().next()` walks (40 µs per eviction at 10000 entries);
  // the ring is O(1). Every slot in the map is in the ring exactly once.
  #ring: number[] = [];
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
    const entry = this.#entries.get(slotOf(token));
    return entry !== undefined && entry.token === token
      ? entry.identity
      : undefined;
  }

  /** Remembers a verified token, evicting the oldest when full. */
  set(token: string, identity: Identity): void {
    const slot = slotOf(token);
    if (this.#capacity === 0 || slot < 0) return;
    const held = this.#entries.get(slot);
    if (held !== undefined) {
      // Another token with the same 30 bits (rare): the newer one takes the
      // slot, which keeps its place in the ring.
      if (held.token !== token) this.#entries.set(slot, { token, identity });
      return;
    }
    const at = this.#ringAt;
    if (at < this.#ring.length) this.#entries.delete(this.#ring[at]);
    this.#ring[at] = slot;
    this.#ringAt = at + 1 === this.#capacity ? 0 : at + 1;
    this.#entries.set(slot, { token, identity });
  }

  /** Forgets every token (for a change of keys). */
  clear(): void {
    this.#entries.clear();
    this.#ring = [];
    this.#ringAt = 0;
  }
}
