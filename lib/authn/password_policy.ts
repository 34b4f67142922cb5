/**
 * What a new password must satisfy, and nothing more (NIST SP 800-63B-4).
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";

/** Options of {@linkcode PasswordPolicy}. */
export interface PasswordPolicyOptions {
  /**
   * Fewest code points, 1–64. Default 8 (ASVS 6.2.1). NIST SP 800-63B-4
   * asks for 15 where the password is the only factor.
   */
  minLength?: number;
  /**
   * Hard cap in UTF-8 bytes, at least 256 (so 64 code points of any kind
   * always fit). Default 1024. Longer input is refused before any hashing
   * (OWASP Authentication Cheat Sheet, "maximum input length").
   */
  maxBytes?: number;
}

/** The default minimum length in code points. */
export const DEFAULT_MIN_PASSWORD_LENGTH = 8;
/** The default hard cap in UTF-8 bytes. */
export const DEFAULT_MAX_PASSWORD_BYTES = 1024;

const encoder = new TextEncoder();
/** The `AuthError` reason of each policy problem (also a register outcome). */
export const POLICY_REASONS = {
  tooShort: "passwordTooShort",
  tooLong: "passwordTooLong",
  malformed: "passwordMalformed",
} as const;

/**
 * A checked password policy: length bounds only, no composition rules;
 * spaces, emoji and any script are welcome. The password is never trimmed,
 * case-folded or normalised: it is hashed exactly as received.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { PasswordPolicy } from "@portcullis/auth/passwords";
 * const policy = new PasswordPolicy({ minLength: 12 });
 * policy.check("correct horse battery"); // passes
 * assert.equal(policy.fits("x".repeat(5000)), false);
 * ```
 */
export class PasswordPolicy {
  #minLength: number;
  #maxBytes: number;

  /**
   * Checks the bounds once.
   *
   * @param options See {@linkcode PasswordPolicyOptions}.
   * @throws {RangeError} When `minLength` is outside 1–64 or `maxBytes`
   * below 256.
   */
  constructor(options: PasswordPolicyOptions = {}) {
    const min = options.minLength ?? DEFAULT_MIN_PASSWORD_LENGTH;
    const max = options.maxBytes ?? DEFAULT_MAX_PASSWORD_BYTES;
    if (!Number.isInteger(min) || min < 1 || min > 64) {
      throw new RangeError(
        `Password minLength must be an integer from 1 to 64: received ${min}`,
      );
    }
    if (!Number.isInteger(max) || max < 256) {
      throw new RangeError(
        `Password maxBytes must be an integer of at least 256: received ${max}`,
      );
    }
    this.#minLength = min;
    this.#maxBytes = max;
  }

  /** The fewest code points a new password may have. */
  get minLength(): number {
    return this.#minLength;
  }

  /** The hard cap in UTF-8 bytes. */
  get maxBytes(): number {
    return this.#maxBytes;
  }

  /**
   * Tells whether a presented password may be hashed at all: a string,
   * well-formed UTF-16, within the byte cap. Login uses this to answer a
   * plain failure, without hashing, for anything else.
   *
   * @param password The presented password.
   * @returns `true` when it may go to the hasher.
   */
  fits(password: string): boolean {
    return typeof password === "string" && password.isWellFormed() &&
      password.length <= this.#maxBytes &&
      encoder.encode(password).length <= this.#maxBytes;
  }

  /**
   * Checks a new password.
   *
   * @param password The new password exactly as received.
   * @throws {AuthError} `INVALID_PASSWORD` when it is not a string, holds
   * an unpaired surrogate, is shorter than `minLength` code points or
   * longer than `maxBytes` UTF-8 bytes.
   */
  check(password: string): void {
    const problem = this.problem(password);
    if (problem === null) return;
    throw new AuthError("INVALID_PASSWORD", this.#describe(password, problem), {
      reason: POLICY_REASONS[problem],
    });
  }

  /**
   * What is wrong with a new password, as a value.
   *
   * @param password The new password exactly as received.
   * @returns `null` when it fits the policy, else the reason:
   * `"malformed"` (not a string, or an unpaired surrogate), `"tooLong"`
   * (over `maxBytes` UTF-8 bytes) or `"tooShort"` (under `minLength` code
   * points).
   */
  problem(password: string): "malformed" | "tooLong" | "tooShort" | null {
    if (typeof password !== "string" || !password.isWellFormed()) {
      return "malformed";
    }
    if (encoder.encode(password).length > this.#maxBytes) return "tooLong";
    let points = 0;
    for (const _ of password) points++;
    return points < this.#minLength ? "tooShort" : null;
  }

  #describe(
    password: string,
    problem: "malformed" | "tooLong" | "tooShort",
  ): string {
    if (typeof password !== "string") return "Password must be a string";
    if (problem === "malformed") {
      return "Password contains an unpaired surrogate, which has no UTF-8 form";
    }
    if (problem === "tooLong") {
      return `Password is too long: ${
        encoder.encode(password).length
      } bytes, at most ${this.#maxBytes}`;
    }
    let points = 0;
    for (const _ of password) points++;
    return `Password is too short: ${points} characters, at least ${this.#minLength}`;
  }
}
