/**
 * The options and answers of `LoginThrottle`.
 *
 * @module
 */
import type { ThrottleStore } from "./throttle_store.ts";
import type { DeviceTrustOptions } from "./device_token.ts";

/** Options of {@linkcode LoginThrottle}. */
export interface LoginThrottleOptions {
  /** Where the counters live: a key-value store with `increment`. */
  store: ThrottleStore;
  /**
   * Consecutive failures on one account, from browsers it does not trust,
   * after which every such attempt on it is refused, the right password
   * included, until {@linkcode LoginThrottle.reset} (or a success before
   * the stop). A trusted browser (see `devices`) is never held by it. 1–100;
   * default 100 (SECURITY item 45, NIST SP 800-63B).
   */
  hardStop?: number;
  /** Failures before any delay starts (per account and per pair); default 3. */
  freeFailures?: number;
  /**
   * The first delay, in seconds; each further failure doubles it, up to
   * `maxDelaySeconds`. Default 1.
   */
  baseDelaySeconds?: number;
  /** The longest delay, in seconds; default 900 (15 minutes). */
  maxDelaySeconds?: number;
  /**
   * Attempts per client address, in a sliding window, successful ones
   * included: the first line against one address spraying many accounts.
   * Default 100 per 900 seconds.
   */
  perAddress?: { max: number; windowSeconds: number };
  /**
   * How long failure counts are kept, from an account's first failure, in
   * seconds; default 30 days. Past it the count starts again.
   */
  memorySeconds?: number;
  /**
   * Device tokens (OWASP "device cookies"): with a signer, a browser that
   * signed in to an account carries a token ({@linkcode LoginThrottle.trustDevice})
   * that exempts it from that account's delays and hard stop, so that
   * strangers' guesses cannot lock the owner out. Default: none (every
   * attempt is untrusted).
   */
  devices?: DeviceTrustOptions;
  /** Prefix of every key; default `"throttle:"`. */
  prefix?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

/** The answer of {@linkcode LoginThrottle.attempt}. */
export type ThrottleDecision =
  | {
    readonly allowed: true;
    /**
     * `true` when a valid device token let the attempt through: the
     * account's lockout did not apply to it.
     */
    readonly trustedDevice?: true;
  }
  | {
    readonly allowed: false;
    /** Seconds until an attempt may be let through (for `Retry-After`). */
    readonly retryAfterSeconds: number;
    /** Which rule refused. */
    readonly reason: "address" | "delay" | "hardStop";
  };
