/**
 * Throttling in the key-value store, shared by every instance of an app:
 * {@linkcode LoginThrottle} for password guesses (delays that grow with
 * consecutive failures, a hard stop at 100 or fewer, per address, per
 * account and per pair, and device tokens that exempt a browser which
 * signed in before from the account's lockout) and
 * {@linkcode SlidingWindowLimiter} for plain limits (registrations per
 * address, mails per account).
 *
 * This folder imports nothing from the session, authn or authz layers:
 * `PasswordAuthenticator` takes a `LoginThrottle` through its own small
 * interface.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryCredentialStore, MemoryKV, PasswordAuthenticator, Pbkdf2Hasher } from "@portcullis/auth";
 * import { LoginThrottle } from "@portcullis/auth/throttle";
 * const auth = new PasswordAuthenticator({
 *   credentials: new MemoryCredentialStore(),
 *   hasher: new Pbkdf2Hasher({ iterations: 1000 }),
 *   throttle: new LoginThrottle({ store: new MemoryKV(), hardStop: 2 }),
 * });
 * await auth.register("a@example.com", "correct horse battery");
 * await auth.login("a@example.com", "wrong 1", { address: "198.51.100.7" });
 * await auth.login("a@example.com", "wrong 2", { address: "198.51.100.7" });
 * const stopped = await auth.login("a@example.com", "correct horse battery", { address: "203.0.113.1" });
 * assert.equal(stopped.kind, "throttled");
 * ```
 *
 * @module
 */
export {
  LoginThrottle,
  type LoginThrottleOptions,
  type ThrottleDecision,
} from "./login_throttle.ts";
export type {
  DeviceToken,
  DeviceTokenClaims,
  DeviceTokenSigner,
  DeviceTrustOptions,
} from "./device_token.ts";
export {
  type Limit,
  SlidingWindowLimiter,
  type SlidingWindowLimiterOptions,
} from "./sliding_window_limiter.ts";
export type { ThrottleStore } from "./throttle_store.ts";
