/**
 * What a new password must satisfy, and nothing more (NIST SP 800-63B-4
 * §3.1.1.2): at least 15 characters when the password is the account's
 * only factor, 8 when the account has a second factor, no composition
 * rules.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";

/** Options of {@linkcode PasswordPolicy}. */
export interface PasswordPolicyOptions {
  /**
   * Fewest code points of a password that is the account's only factor,
   * 1–64. Default 15 (NIST SP 800-63B-4 §3.1.1.2).
   */
  minLength?: number;
  /**
   * Fewest code points of a password on an account that also has a second
   * factor (TOTP, a passkey), from 1 to `minLength`. Default 8 (NIST SP
   * 800-63B-4 §3.1.1.2; ASVS 6.2.1), or `minLength` when that is smaller.
   */
  minLengthWithSecondFactor?: number;
  /**
   * Hard cap in UTF-8 bytes, at least 256 (so 64 code points of any kind
   * always fit). Default 1024. Longer input is refused before any hashing
   * (OWASP Authentication Cheat Sheet, "maximum input length").
   */
  maxBytes?: number;
}

/**
 * The default minimum length in code points of a password that is the
 * account's only factor (NIST SP 800-63B-4 §3.1.1.2).
 */
export const DEFAULT_MIN_PASSWORD_LENGTH = 15;
/**
 * The default minimum length in code points of a password on an account
 * with a second factor (NIST SP 800-63B-4 §3.1.1.2).
 */
export const DEFAULT_MIN_PASSWORD_LENGTH_WITH_SECOND_FACTOR = 8;
/** What the policy needs to know of the account a password is for. */
export interface PasswordContext {
  /**
   * Whether the account has a second factor (TOTP, a passkey): its
   * password may then be as short as `minLengthWithSecondFactor`. Default
   * `false`: the password is the only factor.
   */
  secondFactor?: boolean;
}

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
 * spaces, emoji and any script are welcome. The minimum depends on the
 * account: `minLength` (15) when the password is its only factor,
 * `minLengthWithSecondFactor` (8) when it has a second one. The password is never trimmed,
 * case-folded or normalised: it is hashed exactly as received.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { PasswordPolicy } from "@portcullis/auth/passwords";
 * const policy = new PasswordPolicy();
 * policy.check("correct horse battery"); // passes
 * assert.equal(policy.problem("correct horse"), "tooShort"); // 13 < 15
 * assert.equal(policy.problem("correct horse", { secondFactor: true }), null);
 * assert.equal(policy.fits("x".repeat(5000)), false);
 * ```
 */
export class PasswordPolicy {
  #minLength: number;
  #minWithSecond: number;
  #maxBytes: number;

  /**
   * Checks the bounds once.
   *
   * @param options See {@linkcode PasswordPolicyOptions}.
   * @throws {RangeError} When `minLength` is outside 1–64,
   * `minLengthWithSecondFactor` outside 1–`minLength`, or `maxBytes` below
   * 256.
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
    const second = options.minLengthWithSecondFactor ??
      Math.min(DEFAULT_MIN_PASSWORD_LENGTH_WITH_SECOND_FACTOR, min);
    if (!Number.isInteger(second) || second < 1 || second > min) {
      throw new RangeError(
        `Password minLengthWithSecondFactor must be an integer from 1 to minLength (${min}): received ${second}`,
      );
    }
    this.#minLength = min;
    this.#minWithSecond = second;
    this.#maxBytes = max;
  }

  /** The fewest code points of a password that is the account's only factor. */
  get minLength(): number {
    return this.#minLength;
  }

  /** The fewest code points of a password on an account with a second factor. */
  get minLengthWithSecondFactor(): number {
    return this.#minWithSecond;
  }

  /**
   * The fewest code points a new password may have on an account.
   *
   * @param context Whether the account has a second factor.
   * @returns `minLengthWithSecondFactor` with one, else `minLength`.
   */
  minLengthFor(context: PasswordContext = {}): number {
    return context.secondFactor === true
      ? this.#minWithSecond
      : this.#minLength;
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
   * @param context Whether the account has a second factor; default not
   * (the stricter minimum).
   * @throws {AuthError} `INVALID_PASSWORD` when it is not a string, holds
   * an unpaired surrogate, is shorter than the account's minimum or longer
   * than `maxBytes` UTF-8 bytes.
   */
  check(password: string, context: PasswordContext = {}): void {
    const problem = this.problem(password, context);
    if (problem === null) return;
    throw new AuthError(
      "INVALID_PASSWORD",
      this.#describe(password, problem, context),
      { reason: POLICY_REASONS[problem] },
    );
  }

  /**
   * What is wrong with a new password, as a value.
   *
   * @param password The new password exactly as received.
   * @param context Whether the account has a second factor; default not
   * (the stricter minimum).
   * @returns `null` when it fits the policy, else the reason:
   * `"malformed"` (not a string, or an unpaired surrogate), `"tooLong"`
   * (over `maxBytes` UTF-8 bytes) or `"tooShort"` (under the account's
   * minimum in code points).
   */
  problem(
    password: string,
    context: PasswordContext = {},
  ): "malformed" | "tooLong" | "tooShort" | null {
    if (typeof password !== "string" || !password.isWellFormed()) {
      return "malformed";
    }
    if (encoder.encode(password).length > this.#maxBytes) return "tooLong";
    let points = 0;
    for (const _ of password) points++;
    return points < this.minLengthFor(context) ? "tooShort" : null;
  }

  #describe(
    password: string,
    problem: "malformed" | "tooLong" | "tooShort",
    context: PasswordContext,
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
    return `Password is too short: ${points} characters, at least ${
      this.minLengthFor(context)
    }`;
  }
}
