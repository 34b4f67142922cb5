/**
 * Single-use tokens sent by email: verification links, magic links.
 *
 * @module
 */
import { PURPOSE_TTL_MS } from "./token_purposes.ts";
import { checkPurpose, toBase64Url } from "./_token_text.ts";
import type { VerificationTokenStore } from "./verification_token_store.ts";

/** The default life of a single-use token: 24 hours, in milliseconds. */
export const ONE_TIME_TOKEN_TTL_MS: number = 24 * 60 * 60 * 1000;

/** Options of {@linkcode OneTimeTokens}. */
export interface OneTimeTokensOptions {
  /** Where the token hashes live; needs an atomic `consume`. */
  store: VerificationTokenStore;
  /**
   * How long a token of a purpose without its own life works, in
   * milliseconds; default 24 hours.
   */
  ttlMs?: number;
  /**
   * How long tokens of a given purpose work, in milliseconds; merged over
   * `PURPOSE_TTL_MS` (`password-reset` 1 hour, `email-change` and
   * `verify-email` 24 hours).
   */
  purposeTtlMs?: Record<string, number>;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /** The random source; default `crypto.getRandomValues`. */
  randomBytes?: (length: number) => Uint8Array;
}

/** What {@linkcode OneTimeTokens.issue} needs. */
export interface IssueTokenInput {
  /** The subject the token is for. */
  subject: string;
  /** The normalised email the link is sent to. */
  email: string;
  /** What the token is for, for example `"verify-email"` or `"magic-link"`. */
  purpose: string;
}

/** A token that was redeemed: who it was issued to, and where it was sent. */
export interface RedeemedToken {
  /** The subject the token was issued to. */
  subject: string;
  /** The email the token was sent to. */
  email: string;
}

/** Options of {@linkcode OneTimeTokens.redeem}. */
export interface RedeemOptions {
  /**
   * The subject's email now, or `null` when the subject is gone. When given,
   * a token whose email differs (the address changed since the link was
   * sent) is refused.
   */
  currentEmail?: (subject: string) => Promise<string | null>;
}

const TOKEN_BYTES = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Issues and redeems single-use tokens (OWASP ASVS 6.5.1; docs/security.md):
 * - a token is 256 bits from the CSPRNG, base64url (43 characters);
 * - only its SHA-256 (lower-case hex) is stored, with the subject, the
 *   email it was sent to and its purpose;
 * - it expires after its purpose's life (`PURPOSE_TTL_MS`: 1 hour for
 *   `password-reset`, otherwise 24 hours);
 * - issuing a token removes the subject's older tokens of that purpose, so
 *   only the newest link works;
 * - redeeming consumes it atomically (of two concurrent redemptions exactly
 *   one succeeds), then checks expiry and, when asked, that the subject's
 *   email is still the one the token was sent to. An unknown, malformed,
 *   used, expired or mismatched token answers `null`.
 *
 * Redemption consumes the record before the expiry and email checks, so a
 * refused token is gone as well: it can never be retried.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryVerificationTokenStore } from "./memory_verification_token_store.ts";
 * import { OneTimeTokens } from "./one_time_tokens.ts";
 * const tokens = new OneTimeTokens({ store: new MemoryVerificationTokenStore() });
 * const token = await tokens.issue({ subject: "u1", email: "a@example.com", purpose: "verify-email" });
 * assert.equal((await tokens.redeem(token, "verify-email"))?.subject, "u1");
 * assert.equal(await tokens.redeem(token, "verify-email"), null); // used
 * ```
 */
export class OneTimeTokens {
  #store: VerificationTokenStore;
  #ttl: number;
  #purposeTtl: Record<string, number>;
  #now: () => number;
  #random: (length: number) => Uint8Array;

  /**
   * Creates the issuer over a store.
   *
   * @param options See {@linkcode OneTimeTokensOptions}.
   * @throws {TypeError} When `store` is missing.
   * @throws {RangeError} When `ttlMs` is not a positive whole number.
   */
  constructor(options: OneTimeTokensOptions) {
    if (
      !options?.store || typeof options.store.consume !== "function" ||
      typeof options.store.put !== "function" ||
      typeof options.store.find !== "function"
    ) {
      throw new TypeError(
        "OneTimeTokens needs a store: pass a VerificationTokenStore with an atomic consume",
      );
    }
    const ttl = options.ttlMs ?? ONE_TIME_TOKEN_TTL_MS;
    if (!Number.isSafeInteger(ttl) || ttl <= 0) {
      throw new RangeError(
        `ttlMs must be a positive whole number of milliseconds: received ${ttl}`,
      );
    }
    this.#store = options.store;
    this.#ttl = ttl;
    this.#purposeTtl = { ...PURPOSE_TTL_MS };
    for (const [purpose, ms] of Object.entries(options.purposeTtlMs ?? {})) {
      checkPurpose(purpose);
      if (!Number.isSafeInteger(ms) || ms <= 0) {
        throw new RangeError(
          `purposeTtlMs["${purpose}"] must be a positive whole number of milliseconds: received ${ms}`,
        );
      }
      this.#purposeTtl[purpose] = ms;
    }
    this.#now = options.now ?? Date.now;
    this.#random = options.randomBytes ??
      ((n) => crypto.getRandomValues(new Uint8Array(n)));
  }

  /**
   * Mints a token, stores its hash and removes the subject's older tokens of
   * the same purpose.
   *
   * @param input The subject, the email the link goes to, and the purpose.
   * @returns The token, to put in the link; it is not stored anywhere.
   * @throws {TypeError} For an empty subject or email, or a purpose that is
   * not lower-case letters, digits and `-`.
   * @throws {RangeError} When the random source does not give 32 bytes.
   */
  async issue(input: IssueTokenInput): Promise<string> {
    checkPurpose(input?.purpose);
    if (typeof input.subject !== "string" || input.subject === "") {
      throw new TypeError("A one-time token needs a non-empty subject");
    }
    if (typeof input.email !== "string" || input.email === "") {
      throw new TypeError("A one-time token needs the email it is sent to");
    }
    const bytes = this.#random(TOKEN_BYTES);
    if (!(bytes instanceof Uint8Array) || bytes.length !== TOKEN_BYTES) {
      throw new RangeError(
        `randomBytes must return ${TOKEN_BYTES} bytes: received ${
          (bytes as Uint8Array | undefined)?.length
        }`,
      );
    }
    const token = toBase64Url(bytes);
    const createdAt = this.#now();
    await this.#store.put({
      tokenHash: await hashOneTimeToken(token),
      purpose: input.purpose,
      subject: input.subject,
      email: input.email,
      createdAt,
      expiresAt: createdAt + (this.#purposeTtl[input.purpose] ?? this.#ttl),
    });
    return token;
  }

  /**
   * Consumes a token of one purpose.
   *
   * @param token The token from the link (untrusted input).
   * @param purpose The purpose the caller expects.
   * @param options The current-email check.
   * @returns The subject and email, or `null` when the token is malformed,
   * unknown, already used, of another purpose, expired, or sent to an email
   * the subject no longer has.
   * @throws Whatever the store throws when it cannot be reached.
   */
  async redeem(
    token: string,
    purpose: string,
    options: RedeemOptions = {},
  ): Promise<RedeemedToken | null> {
    return await this.#read(token, purpose, options, "consume");
  }

  /**
   * Tells what a token would redeem to, without consuming it: for a page
   * that only shows a form (a `GET` of a mailed link must not use it up,
   * since mail scanners fetch links) or a check made before the work a
   * token guards (a new password is validated before the reset token is
   * spent). The same checks as {@linkcode OneTimeTokens.redeem}; the
   * token stays usable.
   *
   * @param token The token from the link (untrusted input).
   * @param purpose The purpose the caller expects.
   * @param options The current-email check.
   * @returns The subject and email, or `null` when `redeem` would refuse.
   * @throws Whatever the store throws when it cannot be reached.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryVerificationTokenStore } from "./memory_verification_token_store.ts";
   * import { OneTimeTokens } from "./one_time_tokens.ts";
   * const tokens = new OneTimeTokens({ store: new MemoryVerificationTokenStore() });
   * const token = await tokens.issue({ subject: "u1", email: "a@example.com", purpose: "password-reset" });
   * assert.equal((await tokens.peek(token, "password-reset"))?.subject, "u1");
   * assert.equal((await tokens.redeem(token, "password-reset"))?.subject, "u1");
   * ```
   */
  async peek(
    token: string,
    purpose: string,
    options: RedeemOptions = {},
  ): Promise<RedeemedToken | null> {
    return await this.#read(token, purpose, options, "find");
  }

  /** What `redeem` (`consume`) and `peek` (`find`) share. */
  async #read(
    token: string,
    purpose: string,
    options: RedeemOptions,
    read: "consume" | "find",
  ): Promise<RedeemedToken | null> {
    checkPurpose(purpose);
    if (typeof token !== "string" || !TOKEN_SHAPE.test(token)) return null;
    const record = await this.#store[read](
      await hashOneTimeToken(token),
      purpose,
    );
    // The store filters by purpose; checking again here keeps a store that
    // forgot to from turning one kind of token into another.
    if (record === null || record.purpose !== purpose) return null;
    if (this.#now() >= record.expiresAt) return null;
    if (options.currentEmail !== undefined) {
      const email = await options.currentEmail(record.subject);
      if (email === null || email !== record.email) return null;
    }
    return { subject: record.subject, email: record.email };
  }

  /**
   * Removes every outstanding token of a subject and purpose (for example
   * after the email changed).
   *
   * @param subject The subject.
   * @param purpose The purpose.
   */
  async revokeFor(subject: string, purpose: string): Promise<void> {
    checkPurpose(purpose);
    await this.#store.deleteFor(subject, purpose);
  }
}

/**
 * The stored form of a single-use token: lower-case hex SHA-256 of its
 * UTF-8 bytes.
 *
 * @param token The token.
 * @returns 64 hex characters.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { hashOneTimeToken } from "./one_time_tokens.ts";
 * assert.equal((await hashOneTimeToken("abc")).length, 64);
 * ```
 */
export async function hashOneTimeToken(token: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(token),
  );
  let hex = "";
  for (const b of new Uint8Array(digest)) {
    hex += b.toString(16).padStart(2, "0");
  }
  return hex;
}
