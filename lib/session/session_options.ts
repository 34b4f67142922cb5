/**
 * The options of {@linkcode SessionManager}, checked once at construction.
 *
 * @module
 */
import type { SecretProvider } from "../secrets/secret_provider.ts";
import type { SessionStore } from "./session_store.ts";
import { StaleSessionStore } from "./stale_session_store.ts";

/** Options of sliding renewal; see {@linkcode SessionManagerOptions.sliding}. */
export interface SlidingOptions {
  /** The least time between two renewals, in seconds; default 3600. */
  renewAfterSeconds?: number;
  /**
   * The absolute lifetime of a session, however active, in seconds. Required:
   * a sliding session without a cap never ends.
   */
  absoluteLifetimeSeconds: number;
}

/** Options of `SessionManager`. */
export interface SessionManagerOptions {
  /** The keys. */
  secret: SecretProvider;
  /**
   * Where revocations live. `null` is the explicit stateless choice: tokens
   * then cannot be revoked before they expire, and `revoke` throws.
   */
  store: SessionStore | null;
  /** Lifetime of a token, in seconds; default 7 days. */
  lifetimeSeconds?: number;
  /** Opt-in sliding renewal of cookie sessions; off by default. */
  sliding?: SlidingOptions;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /** The random source; default `crypto.getRandomValues`. */
  randomBytes?: (length: number) => Uint8Array;
  /**
   * How many verified tokens to remember, so a token seen before skips the
   * MAC; default 10000, 0 turns it off. The cache holds only what the MAC
   * proved; expiry and revocation are checked on every request regardless.
   */
  cacheSize?: number;
  /**
   * The deadline of each store call, in milliseconds; default 2000. A store
   * that has not answered by then counts as unavailable (`STORE_UNAVAILABLE`
   * with reason `timeout`, and the gates answer 503), so a hanging store
   * never holds requests forever.
   */
  storeTimeoutMs?: number;
  /**
   * How far in the future a token's issue time may lie, in seconds, before
   * the token is refused; default 60. A token "issued" later than the clock
   * would otherwise survive `revokeAll`.
   */
  clockSkewSeconds?: number;
  /**
   * Opt-in bounded staleness, in seconds: reuse the store's revocation
   * answers for at most this long (see `StaleSessionStore` and
   * docs/revocation.md). Revocations made through this manager apply here
   * at once; revocations made elsewhere within the bound. Default: exact,
   * one store round trip per request.
   */
  revocationStaleness?: number;
}

/** The default token lifetime: 7 days, in seconds. */
export const DEFAULT_LIFETIME_SECONDS = 7 * 24 * 3600;

/** The options after checking, with every default filled in. */
export interface CheckedOptions {
  secret: SecretProvider;
  store: SessionStore | null;
  lifetime: number;
  sliding: Required<SlidingOptions> | null;
  now: () => number;
  random: (length: number) => Uint8Array;
  cacheSize: number;
  storeTimeoutMs: number;
  skewMs: number;
}

/**
 * Checks the options and fills in defaults; misuse throws here, not per
 * request.
 */
export function checkOptions(options: SessionManagerOptions): CheckedOptions {
  if (!options?.secret || typeof options.secret.keys !== "function") {
    throw new TypeError(
      "SessionManager needs a secret: pass secret: SecretProvider.fromEnv()",
    );
  }
  if (options.store === undefined) {
    throw new TypeError(
      "SessionManager needs a store: pass a SessionStore, or store: null to choose stateless tokens that cannot be revoked",
    );
  }
  const lifetime = positiveInt(
    options.lifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS,
    "lifetimeSeconds",
  );
  let sliding: Required<SlidingOptions> | null = null;
  if (options.sliding) {
    const absolute = positiveInt(
      options.sliding.absoluteLifetimeSeconds,
      "sliding.absoluteLifetimeSeconds",
    );
    if (absolute < lifetime) {
      throw new RangeError(
        `sliding.absoluteLifetimeSeconds must be at least lifetimeSeconds: received ${absolute}`,
      );
    }
    sliding = {
      absoluteLifetimeSeconds: absolute,
      renewAfterSeconds: positiveInt(
        options.sliding.renewAfterSeconds ?? 3600,
        "sliding.renewAfterSeconds",
      ),
    };
  }
  const now = options.now ?? Date.now;
  const stale = options.revocationStaleness;
  return {
    secret: options.secret,
    // The opt-in staleness wraps the store; the deadline wraps both.
    store: options.store !== null && stale !== undefined
      ? new StaleSessionStore(options.store, {
        maxStalenessSeconds: stale,
        now,
      })
      : options.store,
    lifetime,
    sliding,
    now,
    random: options.randomBytes ??
      ((n) => crypto.getRandomValues(new Uint8Array(n))),
    cacheSize: options.cacheSize ?? 10_000,
    storeTimeoutMs: options.storeTimeoutMs ?? 2000,
    skewMs: 1000 *
      nonNegative(options.clockSkewSeconds ?? 60, "clockSkewSeconds"),
  };
}

function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(
      `${name} must be a positive whole number of seconds: received ${value}`,
    );
  }
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(
      `${name} must be 0 or more seconds: received ${value}`,
    );
  }
  return value;
}

/**
 * Whether a verified token's times are acceptable now. A session cannot
 * begin later than now (beyond the clock skew): one "issued" in the future
 * would outlive every revokeAll cut-off taken before that time. And a token
 * may not outlive what the manager allows now, so shortening the lifetime
 * takes effect for tokens already out.
 */
export function withinTimes(
  identity: { issuedAt: number; expiresAt: number },
  o: CheckedOptions,
): boolean {
  if (identity.issuedAt > o.now() + o.skewMs) return false;
  return identity.expiresAt - identity.issuedAt / 1000 <=
    longestLifetime(o) + 1;
}

/** The longest a session may live, in seconds. */
export function longestLifetime(o: CheckedOptions): number {
  return o.sliding?.absoluteLifetimeSeconds ?? o.lifetime;
}

/**
 * Until when (unix seconds) a session's jti must stay denied once revoked:
 * its token's expiry, or, for a session that outlives its token (sliding
 * renewal, a device-bound session's short cookie renewed by proof), as
 * long as any session begun when it began may live.
 */
export function revocationEnd(
  identity: { issuedAt: number; expiresAt: number; binding?: string },
  o: CheckedOptions,
): number {
  return o.sliding !== null || identity.binding === "device"
    ? Math.floor(identity.issuedAt / 1000) + longestLifetime(o)
    : identity.expiresAt;
}

/**
 * The expiry of a sliding renewal, or `null` when none is due: sliding is
 * off, the token is younger than `renewAfterSeconds`, or the absolute
 * lifetime allows no later expiry.
 */
export function renewedExpiry(
  identity: { issuedAt: number; expiresAt: number },
  o: CheckedOptions,
): number | null {
  const s = o.sliding;
  if (s === null) return null;
  // A session re-minted in place of another ends with it (see
  // `SessionManager.issueSession`): its expiry lies before its start plus
  // the lifetime, which no token sliding renewal made does. It is never
  // renewed, so a re-mint cannot restart the absolute lifetime.
  if (identity.expiresAt < Math.floor(identity.issuedAt / 1000) + o.lifetime) {
    return null;
  }
  const nowS = Math.floor(o.now() / 1000);
  const tokenIssued = identity.expiresAt - o.lifetime;
  const cap = Math.floor(identity.issuedAt / 1000) + s.absoluteLifetimeSeconds;
  const expiresAt = Math.min(nowS + o.lifetime, cap);
  return nowS - tokenIssued < s.renewAfterSeconds ||
      expiresAt <= identity.expiresAt
    ? null
    : expiresAt;
}
