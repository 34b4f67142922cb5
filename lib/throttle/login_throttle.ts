/**
 * Throttling password guesses: per client address, per (account, address)
 * and per account, with delays that grow with consecutive failures and a
 * hard stop that only a reset lifts.
 *
 * @module
 */
import { bump, counterKey, int, whole } from "./_counter.ts";
import type { ThrottleStore } from "./throttle_store.ts";
import type {
  LoginThrottleOptions,
  ThrottleDecision,
} from "./login_throttle_types.ts";

export type * from "./login_throttle_types.ts";

interface Keys {
  account: string;
  accountLast: string;
  accountReset: string;
  pair: string;
  pairLast: string;
  address: string;
}

interface Counts {
  account: number;
  accountLast: number;
  pair: number;
  pairLast: number;
}

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
 * are not counted (they reach no hasher), so a flood of refused requests
 * cannot push an account to its hard stop.
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
    this.#store = options.store;
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
  }

  /**
   * Decides whether a password check for `account` from `address` may run,
   * and counts it as a failure in advance when it may.
   *
   * @param account The account as looked up (a normalised email), whether
   * or not it exists: unknown accounts are throttled alike.
   * @param address The client's address.
   * @returns `allowed`, or the reason and the seconds to wait.
   * @throws Whatever the store throws (the caller answers 503).
   */
  async attempt(account: string, address: string): Promise<ThrottleDecision> {
    const keys = await this.#keys(account, address);
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
    const counts = this.#counts(a, aLast, aReset, p, pLast);
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
   * Reports a right password: clears the account's and the pair's failure
   * counts. Best effort is fine: a count left behind only delays.
   *
   * @param account The account.
   * @param address The client's address.
   */
  async succeeded(account: string, address: string): Promise<void> {
    const keys = await this.#keys(account, address);
    await Promise.all([
      this.#store.delete(keys.account),
      this.#store.delete(keys.accountLast),
      this.#store.delete(keys.pair),
      this.#store.delete(keys.pairLast),
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
    const keys = await this.#keys(account, "");
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

  #counts(
    a: string | null,
    aLast: string | null,
    aReset: string | null,
    p: string | null,
    pLast: string | null,
  ): Counts {
    const resetAt = int(aReset);
    const pairLast = int(pLast);
    // A pair whose last failure came before the account's reset is clean.
    const stale = resetAt > 0 && pairLast <= resetAt;
    return {
      account: int(a),
      accountLast: int(aLast),
      pair: stale ? 0 : int(p),
      pairLast: stale ? 0 : pairLast,
    };
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

  async #keys(account: string, address: string): Promise<Keys> {
    const [acct, pair, addr] = await Promise.all([
      counterKey(this.#prefix, "login-account", account),
      counterKey(this.#prefix, "login-pair", account, address),
      counterKey(this.#prefix, "login-address", address),
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
}

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
