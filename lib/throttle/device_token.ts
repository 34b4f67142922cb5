/**
 * Device tokens (OWASP "device cookies"): a signed value a browser gets
 * when it signs in to an account, which later tells the login throttle
 * that this browser has signed in to this account before.
 *
 * @module
 */

/**
 * Signs and verifies device tokens: an HMAC over the payload with a key of
 * its own purpose, so a device token never passes as a session, a flash or
 * a verification link, and no other token passes as one. With
 * `@portcullis/auth`, build it from the application secret:
 * `signToken((await secret.keys("login-device")).current, "login-device", payload)`
 * and `verifyToken(await secret.keys("login-device"), "login-device", token)`
 * of `@portcullis/auth/tokens`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { SecretProvider } from "@portcullis/auth";
 * import { signToken, verifyToken } from "@portcullis/auth/tokens";
 * import type { DeviceTokenSigner } from "@portcullis/auth/throttle";
 * const secret = SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32)));
 * const keys = secret.keys("login-device");
 * const signer: DeviceTokenSigner = {
 *   sign: async (payload) => signToken((await keys).current, "login-device", payload),
 *   verify: async (token) => verifyToken(await keys, "login-device", token),
 * };
 * const token = await signer.sign(new TextEncoder().encode("x"));
 * assert.deepEqual(await signer.verify(token), new TextEncoder().encode("x"));
 * ```
 */
export interface DeviceTokenSigner {
  /**
   * Signs a payload.
   *
   * @param payload The bytes to carry (readable by whoever holds the token).
   * @returns The token: cookie-safe characters only.
   */
  sign(payload: Uint8Array): Promise<string>;
  /**
   * Verifies a token in constant time.
   *
   * @param token The presented token.
   * @returns The payload, or `null` for any bad token.
   */
  verify(token: string): Promise<Uint8Array | null>;
}

/**
 * How the login throttle trusts browsers that signed in before (OWASP
 * "device cookies"). After a right password, `LoginThrottle.trustDevice`
 * mints a signed token, `d1|<account tag>|<device id>|<expiry>` (HMAC of
 * its own purpose, no email and no secret in it), for the browser to keep
 * in a long-lived cookie (`HttpOnly`, `Secure`, `SameSite=Lax`). An attempt
 * that presents a valid token for the same account is **trusted**: the
 * per-address limit, the account's delays and its hard stop do not apply,
 * only the device's own limit of `maxFailures` wrong passwords in a row,
 * past which that token is trusted no more. Untrusted attempts alone count
 * towards the hard stop, and a trusted success leaves their count alone
 * (an untrusted success or `LoginThrottle.reset` clears it), so a
 * stranger's flood from any number of addresses holds every browser but
 * the owner's.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryKV, SecretProvider } from "@portcullis/auth";
 * import { signToken, verifyToken } from "@portcullis/auth/tokens";
 * import { LoginThrottle } from "@portcullis/auth/throttle";
 * const keys = SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))).keys("login-device");
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
export interface DeviceTrustOptions {
  /** Signs the device tokens (a key of its own purpose). */
  signer: DeviceTokenSigner;
  /**
   * How long a device token stays valid, in seconds; each sign-in renews
   * it. Default 180 days.
   */
  lifetimeSeconds?: number;
  /**
   * Wrong passwords a trusted browser may send in a row: past it, its token
   * is trusted no more (the browser then counts as any other, under the
   * account's lockout) until it signs in again. Default 10.
   */
  maxFailures?: number;
}

/** A device token to hand to the browser (a long-lived cookie). */
export interface DeviceToken {
  /** The token: cookie-safe characters only. */
  readonly token: string;
  /** Its lifetime, for the cookie's `Max-Age`. */
  readonly maxAgeSeconds: number;
}

/** A device token as read back: its device id and its expiry. */
export interface DeviceTokenClaims {
  /** The device id: 128 random bits, base64url. */
  readonly id: string;
  /** When the token expires, in unix seconds. */
  readonly expiresAt: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const VERSION = "d1";
const ID = /^[A-Za-z0-9_-]{22}$/;
const EXPIRY = /^[1-9][0-9]{0,15}$/;
/** Longer tokens are refused before any crypto. */
const MAX_DEVICE_TOKEN_LENGTH = 512;

/**
 * The account's tag inside a token: 128 bits of SHA-256 of the account
 * name, so the token holds no email address, and a token of one account
 * never matches another.
 */
async function accountTag(account: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      encoder.encode(`portcullis login device\n${account}`),
    ),
  );
  let hex = "";
  for (const b of digest.subarray(0, 16)) {
    hex += b.toString(16).padStart(2, "0");
  }
  return hex;
}

/** A fresh device id: 128 random bits, base64url without padding. */
export function newDeviceId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-")
    .replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * Mints a device token: `d1|<account tag>|<device id>|<expiry>`, signed.
 * Nothing secret is in it.
 *
 * @param signer The signer.
 * @param account The account as the throttle names it (a normalised email).
 * @param claims The device id and the expiry (unix seconds).
 * @returns The token.
 */
export async function mintDeviceToken(
  signer: DeviceTokenSigner,
  account: string,
  claims: DeviceTokenClaims,
): Promise<string> {
  const payload = `${VERSION}|${await accountTag(
    account,
  )}|${claims.id}|${claims.expiresAt}`;
  return await signer.sign(encoder.encode(payload));
}

/**
 * Reads a device token presented for an account: its length and MAC, then
 * that it names this account and has not expired.
 *
 * @param signer The signer.
 * @param account The account the attempt is for.
 * @param token The presented token, if any.
 * @param nowSeconds The time, in unix seconds.
 * @returns The claims, or `null` for a missing, bad, foreign or expired
 * token.
 */
export async function readDeviceToken(
  signer: DeviceTokenSigner,
  account: string,
  token: string | null | undefined,
  nowSeconds: number,
): Promise<DeviceTokenClaims | null> {
  if (
    typeof token !== "string" || token === "" ||
    token.length > MAX_DEVICE_TOKEN_LENGTH
  ) return null;
  let payload: Uint8Array | null;
  try {
    payload = await signer.verify(token);
  } catch {
    return null;
  }
  if (payload === null) return null;
  const parts = decoder.decode(payload).split("|");
  if (parts.length !== 4 || parts[0] !== VERSION) return null;
  const [, tag, id, expiry] = parts;
  if (!ID.test(id) || !EXPIRY.test(expiry)) return null;
  const expiresAt = Number(expiry);
  if (!(expiresAt > nowSeconds)) return null;
  if (tag !== await accountTag(account)) return null;
  return { id, expiresAt };
}
