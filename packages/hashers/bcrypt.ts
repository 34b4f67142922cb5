/**
 * bcrypt, for verifying hashes carried over from other systems and for
 * applications that must keep minting it. Built on `bcryptjs` (pure
 * JavaScript, no WASM, no native code), so it runs on every runtime.
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that the reference app's first start does not download it (deno task installs every import-map dependency)
import { encodeBase64, hash as bcryptHash } from "npm:bcryptjs@^3.0.3";
import { AuthError, type PasswordHasher } from "@portcullis/auth";
import { timingSafeEqual } from "@portcullis/bytes";

/** Options of {@linkcode BcryptHasher}. */
export interface BcryptHasherOptions {
  /**
   * Cost (log2 of the rounds) of new hashes, 10–31. Default 10, OWASP's
   * minimum: bcryptjs is pure JavaScript and takes about 60 ms at cost 10
   * on a build machine (a native library takes about as long at cost 11),
   * and each step up doubles the time the event loop spends per login.
   * An attacker's cost depends only on the cost factor, not on our speed.
   */
  cost?: number;
  /** Stored hashes with a lower cost never verify. Default 4 (bcrypt's floor). */
  minCost?: number;
  /** Stored hashes with a higher cost never verify. Default 31. */
  maxCost?: number;
  /** Source of salt bytes. Default `crypto.getRandomValues`. */
  randomBytes?: (length: number) => Uint8Array;
}

/** bcrypt hashes only the first 72 bytes of its input. */
export const BCRYPT_MAX_PASSWORD_BYTES = 72;

const STORED = /^\$2([aby])\$([0-9]{2})\$([./A-Za-z0-9]{53})$/;
const encoder = new TextEncoder();

/**
 * bcrypt password hashing.
 *
 * Verifies `$2a$`, `$2b$` and `$2y$` hashes (identical for the UTF-8 bytes
 * a JavaScript string produces) and rejects the buggy `$2x$`, the ancient
 * `$2$`, costs outside `[minCost, maxCost]` (4–31 by default) and any
 * other shape with `false`. Mints `$2b$`.
 *
 * bcrypt ignores everything after 72 bytes. This hasher never truncates:
 * `hash` throws `AuthError("INVALID_PASSWORD")` for a password longer than
 * 72 UTF-8 bytes, and `verify` answers `false` for one, so a long password
 * never matches the hash of its first 72 bytes (the lesson of Okta's
 * AD/LDAP delegated-authentication advisory of 2024-10-30). A user whose legacy hash was made from a truncated long
 * password has to reset it. `hash` also refuses a NUL character, which C
 * bcrypt implementations would cut the password at.
 *
 * Because `bcryptjs` takes strings, passwords are always UTF-8: hashes of
 * raw non-UTF-8 byte strings (the openwall `\xa3` vectors) can neither be
 * produced nor verified through this class.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { BcryptHasher } from "@portcullis/hashers/bcrypt";
 * const hasher = new BcryptHasher({ cost: 10 });
 * const stored = await hasher.hash("correct horse battery");
 * assert.equal(await hasher.verify("correct horse battery", stored), true);
 * ```
 */
export class BcryptHasher implements PasswordHasher {
  #cost: number;
  #minCost: number;
  #maxCost: number;
  #randomBytes: (length: number) => Uint8Array;

  /**
   * Checks the options once; a misconfiguration fails here, not at login.
   *
   * @param options See {@linkcode BcryptHasherOptions}.
   * @throws {RangeError} When `cost` is outside 10–31 or the bounds are not
   * integers in 4–31 around it.
   */
  constructor(options: BcryptHasherOptions = {}) {
    const cost = options.cost ?? 10;
    const minCost = options.minCost ?? 4;
    const maxCost = options.maxCost ?? 31;
    if (!Number.isInteger(cost) || cost < 10 || cost > 31) {
      throw new RangeError(
        `BcryptHasher cost must be an integer from 10 to 31: received ${cost}`,
      );
    }
    if (
      !Number.isInteger(minCost) || !Number.isInteger(maxCost) ||
      minCost < 4 || maxCost > 31 || minCost > cost || maxCost < cost
    ) {
      throw new RangeError(
        `BcryptHasher needs 4 <= minCost <= cost <= maxCost <= 31: received ${minCost}, ${cost}, ${maxCost}`,
      );
    }
    this.#cost = cost;
    this.#minCost = minCost;
    this.#maxCost = maxCost;
    this.#randomBytes = options.randomBytes ??
      ((n) => crypto.getRandomValues(new Uint8Array(n)));
  }

  /**
   * Hashes a password as `$2b$<cost>$<salt><hash>`.
   *
   * @param password The password exactly as received, at most 72 UTF-8
   * bytes and without NUL.
   * @returns The bcrypt string.
   * @throws {AuthError} `INVALID_PASSWORD` when the password is longer than
   * 72 UTF-8 bytes or contains NUL.
   */
  async hash(password: string): Promise<string> {
    const length = encoder.encode(password).length;
    if (length > BCRYPT_MAX_PASSWORD_BYTES) {
      throw new AuthError(
        "INVALID_PASSWORD",
        `Password is too long for bcrypt, which would ignore everything after 72 bytes: received ${length} bytes`,
        { reason: "passwordTooLong" },
      );
    }
    if (password.includes("\0")) {
      throw new AuthError(
        "INVALID_PASSWORD",
        "Password contains a NUL character, which bcrypt cannot hash",
        { reason: "passwordMalformed" },
      );
    }
    const salt = this.#randomBytes(16);
    if (!(salt instanceof Uint8Array) || salt.length !== 16) {
      throw new Error("BcryptHasher randomBytes must return 16 bytes");
    }
    const cost = String(this.#cost).padStart(2, "0");
    return await bcryptHash(
      password,
      `$2b$${cost}$${encodeBase64(Array.from(salt), 16)}`,
    );
  }

  /**
   * Checks a password against a bcrypt hash in constant time.
   *
   * @param password The password exactly as received.
   * @param stored A stored hash of any format.
   * @returns `true` only for a well-formed `$2a$`/`$2b$`/`$2y$` hash of
   * this password (at most 72 bytes); `false` for anything else.
   */
  async verify(password: string, stored: string): Promise<boolean> {
    if (typeof password !== "string" || this.#costOf(stored) === null) {
      return false;
    }
    if (encoder.encode(password).length > BCRYPT_MAX_PASSWORD_BYTES) {
      return false;
    }
    try {
      const again = await bcryptHash(password, stored.slice(0, 29));
      return timingSafeEqual(encoder.encode(again), encoder.encode(stored));
    } catch {
      return false;
    }
  }

  /**
   * A bcrypt hash needs a rehash when its cost is below this hasher's; any
   * other string (another algorithm, malformed) does too.
   *
   * @param stored A stored hash.
   * @returns `true` when the hash is below policy.
   */
  needsRehash(stored: string): boolean {
    const cost = this.#costOf(stored);
    return cost === null || cost < this.#cost;
  }

  #costOf(stored: string): number | null {
    if (typeof stored !== "string") return null;
    const m = STORED.exec(stored);
    if (m === null) return null;
    const cost = Number(m[2]);
    if (cost < this.#minCost || cost > this.#maxCost) return null;
    return cost;
  }
}

/** The hasher interface these classes implement (from `@portcullis/auth`). */
export type { PasswordHasher } from "@portcullis/auth";
