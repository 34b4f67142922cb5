/**
 * Throttling password guesses: per client address, per (account, address)
 * and per account, with delays that grow with consecutive failures and a
 * hard stop that only a reset lifts; browsers that signed in to the
 * account before (device tokens) are exempt from the account's lockout.
 *
 * @module
 */
import { bump, counterKey, int, whole } from "./_counter.ts";
import { guarded } from "./_guarded.ts";
import type { ThrottleStore } from "./throttle_store.ts";
import type { DeviceToken, DeviceTrustOptions } from "./device_token.ts";
import { DeviceTrust } from "./_device_trust.ts";

/** Options of {@linkcode LoginThrottle}. */
export interface LoginThrottleOptions {
  /** Where the counters live: a key-value store with `increment`. */
  store: ThrottleStore;
  /**
   * Consecutive failures on one account, from browsers it does not trust,
   * after which every such attempt on it is refused, the right password
   * included, until {@linkcode LoginThrottle.reset} (or a success before
   * the stop). A trusted browser (see `devices`) is never held by it. 1–100;
   * default 100 (NIST SP 800-63B; docs/security.md, "Strangers cannot lock
   * the owner out").
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

/**
 * Throttles password guesses. Call {@linkcode LoginThrottle.attempt}
 * before a password is checked, and {@linkcode LoginThrottle.succeeded}
 * after it was right; `attempt` counts the attempt as a failure in
 * advance (an atomic increment), so a burst of concurrent guesses cannot
 * pass together and a check that never reports back stays counted.
 *
 * The rules, each over counters in the store (keys are hashed):
 *
 * - **per address**: at most `perAddress.max` attempts in a sliding window;
 * - **per (account, address)**: after `freeFailures` consecutive failures,
 *   each attempt waits `baseDelaySeconds · 2^(n − freeFailures)` after the
 *   last, up to `maxDelaySeconds`;
 * - **per account**: the same growing delay over the account's
 *   consecutive failures from every address, which holds only addresses
 *   that have themselves failed on the account since its last success or
 *   reset; and at `hardStop` failures every attempt is refused until
 *   {@linkcode LoginThrottle.reset} (a password reset by email).
 *
 * So strangers guessing from other addresses slow down each other but
 * never keep the owner's right password out from an address that has not
 * failed, until the hard stop; then a password reset lifts it. A success
 * clears the account's and the pair's counts. Attempts the throttle refuses
 * on its read are not counted (they reach no hasher), so a flood of refused
 * requests cannot push an account to its hard stop. Attempts sent at the
 * same moment that all pass the read are counted first and judged in the
 * order of their counts: those past a limit are refused, and stay counted
 * as failures (one burst from an address adds about as many as it sent;
 * later ones are refused on the read).
 *
 * **Device tokens** (OWASP "device cookies", with `devices`): a browser
 * that gave the right password gets a token ({@linkcode LoginThrottle.trustDevice});
 * its later attempts on that account skip the address limit, the delays
 * and the hard stop, which then count untrusted attempts only. See
 * `DeviceTrustOptions` for the rules and an example.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryKV } from "@portcullis/auth";
 * import { LoginThrottle } from "@portcullis/auth/throttle";
 * const throttle = new LoginThrottle({ store: new MemoryKV(), hardStop: 3 });
 * for (let i = 0; i < 3; i++) {
 *   assert.equal((await throttle.attempt("a@example.com", "198.51.100.7")).allowed, true);
 *   // …the password was wrong: nothing to report
 * }
 * const stopped = await throttle.attempt("a@example.com", "203.0.113.1");
 * assert.equal(stopped.allowed, false);
 * await throttle.reset("a@example.com"); // after a password reset by email
 * assert.equal((await throttle.attempt("a@example.com", "203.0.113.1")).allowed, true);
 * ```
 */
export class LoginThrottle {
  #store: ThrottleStore;
  #hardStop: number;
  #free: number;
  #base: number;
  #maxDelay: number;
  #perAddress: { max: number; windowSeconds: number };
  #memory: number;
  #prefix: string;
  #now: () => number;
  #devices: DeviceTrust | null;

  /**
   * Checks the options once.
   *
   * @param options See {@linkcode LoginThrottleOptions}.
   * @throws {TypeError} When the store is missing.
   * @throws {RangeError} When `hardStop` is outside 1–100 or another number
   * is not a positive whole number.
   */
  constructor(options: LoginThrottleOptions) {
    if (typeof options?.store?.getMany !== "function") {
      throw new TypeError(
        "LoginThrottle needs a store: a KeyValueStore such as DenoKV, LibsqlKV or UpstashKV",
      );
    }
    this.#store = guarded(options.store);
    this.#hardStop = whole(options.hardStop ?? 100, "hardStop", 1);
    if (this.#hardStop > 100) {
      throw new RangeError(
        `hardStop must be at most 100 consecutive failures (NIST SP 800-63B): received ${this.#hardStop}`,
      );
    }
    this.#free = whole(options.freeFailures ?? 3, "freeFailures", 0);
    this.#base = whole(options.baseDelaySeconds ?? 1, "baseDelaySeconds", 1);
    this.#maxDelay = whole(
      options.maxDelaySeconds ?? 900,
      "maxDelaySeconds",
      1,
    );
    const perAddress = options.perAddress ?? { max: 100, windowSeconds: 900 };
    this.#perAddress = {
      max: whole(perAddress.max, "perAddress.max", 1),
      windowSeconds: whole(
        perAddress.windowSeconds,
        "perAddress.windowSeconds",
        1,
      ),
    };
    this.#memory = whole(
      options.memorySeconds ?? 30 * 86400,
      "memorySeconds",
      1,
    );
    this.#prefix = options.prefix ?? "throttle:";
    this.#now = options.now ?? Date.now;
    this.#devices = options.devices === undefined
      ? null
      : new DeviceTrust(options.devices, this.#store, this.#prefix, this.#now);
  }

  /**
   * Decides whether a password check for `account` from `address` may run,
   * and counts it as a failure in advance when it may.
   *
   * @param account The account as looked up (a normalised email), whether
   * or not it exists: unknown accounts are throttled alike.
   * @param address The client's address.
   * @param device The browser's device token, if it sent one: a valid one
   * for this account makes the attempt trusted (see the class).
   * @returns `allowed` (with `trustedDevice` when a device token let it
   * through), or the reason and the seconds to wait.
   * @throws Whatever the store throws (the caller answers 503).
   */
  async attempt(
    account: string,
    address: string,
    device?: string | null,
  ): Promise<ThrottleDecision> {
    // A trusted browser within its own failure limit skips every rule
    // below; past the limit its token is dropped and it is judged as any.
    const trusted = await this.#devices?.find(account, device) ?? null;
    if (trusted !== null && await this.#devices!.failed(trusted)) {
      return { allowed: true, trustedDevice: true };
    }
    const keys = await loginKeys(this.#prefix, account, address);
    const nowMs = this.#now();
    const w = this.#perAddress.windowSeconds;
    const index = Math.floor(nowMs / 1000 / w);
    const [a, aLast, aReset, p, pLast, cur, prev] = await this.#store.getMany([
      keys.account,
      keys.accountLast,
      keys.accountReset,
      keys.pair,
      keys.pairLast,
      `${keys.address}:${index}`,
      `${keys.address}:${index - 1}`,
    ]);
    const counts = countsOf(a, aLast, aReset, p, pLast);
    const elapsed = nowMs / 1000 - index * w;
    const estimate = int(cur) + int(prev) * (1 - elapsed / w);
    if (estimate >= this.#perAddress.max) {
      return refuse(Math.max(1, w - elapsed), "address");
    }
    const before = this.#decide(counts, nowMs);
    if (before !== null) return before;

    // Reserve: count this attempt as a failure now. The counts the store
    // answers include concurrent attempts, so a burst is judged in order.
    const ttl = this.#memory;
    const [account2, pair2, address2] = await Promise.all([
      bump(this.#store, keys.account, ttl),
      bump(this.#store, keys.pair, ttl),
      bump(this.#store, `${keys.address}:${index}`, 2 * w + 1),
      this.#store.put(keys.accountLast, String(nowMs), { ttlSeconds: ttl }),
      this.#store.put(keys.pairLast, String(nowMs), { ttlSeconds: ttl }),
    ]);
    // Attempts that raced in since the read count as failures made now.
    if (address2 - int(cur) > 1) {
      // Others from this address raced in since the read.
      const raced = address2 - 1 + int(prev) * (1 - elapsed / w);
      if (raced >= this.#perAddress.max) {
        return refuse(Math.max(1, w - elapsed), "address");
      }
    }
    const aNow = account2 - 1;
    const pNow = pair2 - 1 - (int(p) - counts.pair);
    const raced = this.#decide({
      account: aNow,
      accountLast: aNow > counts.account ? nowMs : counts.accountLast,
      pair: pNow,
      pairLast: pNow > counts.pair ? nowMs : counts.pairLast,
    }, nowMs);
    return raced ?? { allowed: true };
  }

  /**
   * Whether the account trusts a device token now (signed for it, not
   * revoked, not forgotten): a read that counts nothing, for a caller that
   * must choose before {@linkcode LoginThrottle.attempt} how to queue the
   * request (an app's bound on hashing, trusted browsers first). `attempt`
   * decides again, and judges a token past its failure limit as none.
   *
   * @param account The account, as given to {@linkcode LoginThrottle.attempt}.
   * @param device The device token the browser presented, if any.
   * @returns `false` without a token, for one the account does not trust,
   * and when the throttle was made without `devices`.
   * @throws Whatever the store throws.
   */
  async trustsDevice(
    account: string,
    device?: string | null,
  ): Promise<boolean> {
    return (await this.#devices?.find(account, device) ?? null) !== null;
  }

  /**
   * Reports a right password. From a trusted browser (a valid device
   * token): clears that device's failure count, and nothing else, so the
   * owner signing in does not hand strangers a fresh count. Otherwise:
   * clears the account's and the pair's failure counts. Best effort is
   * fine: a count left behind only delays.
   *
   * @param account The account.
   * @param address The client's address.
   * @param device The device token the attempt presented, if any.
   */
  async succeeded(
    account: string,
    address: string,
    device?: string | null,
  ): Promise<void> {
    const trusted = await this.#devices?.find(account, device) ?? null;
    if (trusted !== null) return await this.#devices!.clear(trusted);
    const keys = await loginKeys(this.#prefix, account, address);
    await Promise.all([
      this.#store.delete(keys.account),
      this.#store.delete(keys.accountLast),
      this.#store.delete(keys.pair),
      this.#store.delete(keys.pairLast),
    ]);
  }

  /**
   * Mints the device token for a browser that has just given the right
   * password (call it after {@linkcode LoginThrottle.succeeded}), for a
   * long-lived cookie: `HttpOnly`, `Secure`, `SameSite=Lax`, `Max-Age` the
   * answer's `maxAgeSeconds`. A browser that presented a valid, still
   * trusted token keeps its device id (and renews the expiry); any other
   * gets a new one.
   *
   * @param account The account signed in to (as given to `attempt`).
   * @param device The device token the browser presented, if any.
   * @returns The token and its lifetime.
   * @throws {TypeError} When the throttle was made without `devices`.
   * @throws Whatever the store throws.
   */
  async trustDevice(
    account: string,
    device?: string | null,
  ): Promise<DeviceToken> {
    if (this.#devices === null) {
      throw new TypeError(
        "LoginThrottle has no device signer: pass devices: { signer } to trust devices",
      );
    }
    return await this.#devices.mint(account, device);
  }

  /**
   * Trusts none of the account's device tokens minted so far: call it when
   * whoever held the account before may not be its owner (its address
   * proven for the first time, a password reset, the account deleted), so
   * that tokens a pre-hijacker collected stop exempting it from the
   * account's lockout. A token minted in the same second is forgotten too.
   * Without `devices`, nothing to do.
   *
   * @param account The account, as given to {@linkcode LoginThrottle.attempt}.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the store fails.
   */
  async forgetDevices(account: string): Promise<void> {
    await this.#devices?.forget(account);
  }

  /**
   * Clears the account-wide failure count (its hard stop and the delays it
   * adds) and nothing else: for an account just created, whose address
   * strangers may have typed before it existed, so their failures were no
   * guesses at its password. Each address's own count stays, and failures
   * from now on count as usual (unlike {@linkcode LoginThrottle.reset},
   * which also sets aside every count older than the call).
   *
   * @param account The account, as given to {@linkcode LoginThrottle.attempt}.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the store fails.
   */
  async clearAccount(account: string): Promise<void> {
    const keys = await loginKeys(this.#prefix, account, "");
    await Promise.all([
      this.#store.delete(keys.account),
      this.#store.delete(keys.accountLast),
    ]);
  }

  /**
   * Lifts an account's hard stop and delays (call it after a password reset
   * by email, or when an administrator unlocks the account). Failures
   * recorded before the reset no longer count for any address.
   *
   * @param account The account.
   */
  async reset(account: string): Promise<void> {
    const keys = await loginKeys(this.#prefix, account, "");
    await Promise.all([
      this.#store.delete(keys.account),
      this.#store.delete(keys.accountLast),
      this.#store.put(keys.accountReset, String(this.#now()), {
        ttlSeconds: this.#memory,
      }),
    ]);
  }

  /** The delay after `failures` consecutive failures, in seconds. */
  delayAfter(failures: number): number {
    if (failures < this.#free) return 0;
    const exponent = Math.min(failures - this.#free, 30);
    return Math.min(this.#maxDelay, this.#base * 2 ** exponent);
  }

  #decide(c: Counts, nowMs: number): ThrottleDecision | null {
    if (c.account >= this.#hardStop) {
      return refuse(this.#memory, "hardStop");
    }
    let wait = this.#waitFor(c.pair, c.pairLast, nowMs);
    if (c.pair > 0) {
      wait = Math.max(wait, this.#waitFor(c.account, c.accountLast, nowMs));
    }
    return wait > 0 ? refuse(wait, "delay") : null;
  }

  #waitFor(failures: number, lastMs: number, nowMs: number): number {
    const delay = this.delayAfter(failures);
    if (delay === 0 || lastMs === 0) return 0;
    return Math.max(0, (lastMs + delay * 1000 - nowMs) / 1000);
  }
}

// The counters (private): their keys, and what they read as.
/** The store keys of one attempt's counters. */
interface Keys {
  account: string;
  accountLast: string;
  accountReset: string;
  pair: string;
  pairLast: string;
  address: string;
}

/** The failure counts an attempt is judged by. */
interface Counts {
  account: number;
  accountLast: number;
  pair: number;
  pairLast: number;
}

/** The keys of the counters of (account, address); hashed, no email in them. */
async function loginKeys(
  prefix: string,
  account: string,
  address: string,
): Promise<Keys> {
  const [acct, pair, addr] = await Promise.all([
    counterKey(prefix, "login-account", account),
    counterKey(prefix, "login-pair", account, address),
    counterKey(prefix, "login-address", address),
  ]);
  return {
    account: acct,
    accountLast: `${acct}:last`,
    accountReset: `${acct}:reset`,
    pair,
    pairLast: `${pair}:last`,
    address: addr,
  };
}

/** The counts as read; a pair whose last failure came before the account's reset is clean. */
function countsOf(
  a: string | null,
  aLast: string | null,
  aReset: string | null,
  p: string | null,
  pLast: string | null,
): Counts {
  const resetAt = int(aReset);
  const pairLast = int(pLast);
  const stale = resetAt > 0 && pairLast <= resetAt;
  return {
    account: int(a),
    accountLast: int(aLast),
    pair: stale ? 0 : int(p),
    pairLast: stale ? 0 : pairLast,
  };
}

/** A refusal, waiting at least a second. */
function refuse(
  seconds: number,
  reason: "address" | "delay" | "hardStop",
): ThrottleDecision {
  return {
    allowed: false,
    retryAfterSeconds: Math.max(1, Math.ceil(seconds)),
    reason,
  };
}
