/**
 * Throttling password guesses: per client address, per (account, address)
 * and per account, with delays that grow with consecutive failures and a
 * hard stop that only a reset lifts; browsers that signed in to the
 * account before (device tokens) are exempt from the account's lockout.
 *
 * @module
 */
import { bump, counterKey, int, whole } from "./_counter.ts";
import type { ThrottleStore } from "./throttle_store.ts";
import {
  type DeviceTokenClaims,
  type DeviceTokenSigner,
  type DeviceTrustOptions,
  mintDeviceToken,
  newDeviceId,
  readDeviceToken,
} from "./device_token.ts";

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

/** A device token to hand to the browser (a long-lived cookie). */
export interface DeviceToken {
  /** The token: cookie-safe characters only. */
  readonly token: string;
  /** Its lifetime, for the cookie's `Max-Age`. */
  readonly maxAgeSeconds: number;
}

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
 * **Device tokens** (OWASP "device cookies", with `devices`): after a
 * right password, {@linkcode LoginThrottle.trustDevice} mints a signed
 * token (`account tag|device id|expiry`, HMAC of its own purpose, nothing
 * secret in it) for the browser to keep in a long-lived cookie. An attempt
 * that presents a valid token for the same account is **trusted**: the
 * per-address limit, the account's delays and its hard stop do not apply,
 * only the device's own limit of `maxFailures` wrong passwords in a row,
 * past which that token is trusted no more. Untrusted attempts alone count
 * towards the account's hard stop, and a trusted success leaves their count
 * alone (only an untrusted success or {@linkcode LoginThrottle.reset} clears
 * it). So a stranger's flood from any number of addresses holds every
 * browser but the owner's.
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
 *
 * @example Device tokens
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryKV, SecretProvider } from "@portcullis/auth";
 * import { signToken, verifyToken } from "@portcullis/auth/tokens";
 * import { LoginThrottle } from "@portcullis/auth/throttle";
 * const keys = SecretProvider.fromValue("0YXV2G8SDiuQrIbDvu3wVQSUMC7dd0KMkfthgxfQhNk=").keys("login-device");
 * const throttle = new LoginThrottle({
 *   store: new MemoryKV(),
 *   hardStop: 3,
 *   devices: {
 *     signer: {
 *       sign: async (p) => signToken((await keys).current, "login-device", p),
 *       verify: async (t) => verifyToken(await keys, "login-device", t),
 *     },
 *   },
 * });
 * // The owner signs in once: the browser keeps the token in a cookie.
 * assert.equal((await throttle.attempt("a@example.com", "198.51.100.7")).allowed, true);
 * await throttle.succeeded("a@example.com", "198.51.100.7");
 * const { token } = await throttle.trustDevice("a@example.com");
 * // A stranger's guesses stop the account for every other browser...
 * for (let i = 0; i < 3; i++) await throttle.attempt("a@example.com", `203.0.113.${i}`);
 * assert.equal((await throttle.attempt("a@example.com", "192.0.2.1")).allowed, false);
 * // ...but not for the owner's.
 * const owner = await throttle.attempt("a@example.com", "192.0.2.1", token);
 * assert.equal(owner.allowed && owner.trustedDevice, true);
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
  #devices:
    | { signer: DeviceTokenSigner; lifetime: number; maxFailures: number }
    | null;

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
    const devices = options.devices;
    if (
      devices !== undefined && typeof devices?.signer?.verify !== "function"
    ) {
      throw new TypeError(
        "LoginThrottle devices needs a signer with sign() and verify(): see DeviceTokenSigner",
      );
    }
    this.#devices = devices === undefined ? null : {
      signer: devices.signer,
      lifetime: whole(
        devices.lifetimeSeconds ?? 180 * 86400,
        "devices.lifetimeSeconds",
        60,
      ),
      maxFailures: whole(devices.maxFailures ?? 10, "devices.maxFailures", 1),
    };
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
    const trusted = await this.#trustedDevice(account, device);
    if (trusted !== null) {
      const n = await bump(this.#store, trusted.failures, trusted.ttl);
      if (n <= this.#devices!.maxFailures) {
        return { allowed: true, trustedDevice: true };
      }
      // Too many wrong passwords from this browser: its token is trusted
      // no more, and this attempt is judged like any other.
      await this.#store.put(trusted.revoked, "1", { ttlSeconds: trusted.ttl });
    }
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
    const trusted = await this.#trustedDevice(account, device);
    if (trusted !== null) {
      await this.#store.delete(trusted.failures);
      return;
    }
    const keys = await this.#keys(account, address);
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
    const kept = await this.#trustedDevice(account, device);
    const lifetime = this.#devices.lifetime;
    const claims: DeviceTokenClaims = {
      id: kept?.id ?? newDeviceId(),
      expiresAt: Math.floor(this.#now() / 1000) + lifetime,
    };
    return {
      token: await mintDeviceToken(this.#devices.signer, account, claims),
      maxAgeSeconds: lifetime,
    };
  }

  /**
   * The device a token names, when it is valid for this account and still
   * trusted (not revoked for too many failures); `null` otherwise.
   */
  async #trustedDevice(
    account: string,
    device: string | null | undefined,
  ): Promise<
    { id: string; failures: string; revoked: string; ttl: number } | null
  > {
    if (this.#devices === null || device === null || device === undefined) {
      return null;
    }
    const nowSeconds = this.#now() / 1000;
    const claims = await readDeviceToken(
      this.#devices.signer,
      account,
      device,
      nowSeconds,
    );
    if (claims === null) return null;
    const key = await counterKey(this.#prefix, "login-device", claims.id);
    const revoked = `${key}:revoked`;
    const [gone] = await this.#store.getMany([revoked]);
    if (gone !== null) return null;
    return {
      id: claims.id,
      failures: key,
      revoked,
      ttl: Math.max(60, Math.ceil(claims.expiresAt - nowSeconds)),
    };
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
