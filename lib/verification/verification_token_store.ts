/**
 * The protocol single-use tokens (email verification, magic links) are kept in.
 *
 * @module
 */

/** One single-use token as stored: only its SHA-256 hash, never the token. */
export interface VerificationTokenRecord {
  /** Lower-case hex SHA-256 of the token. */
  tokenHash: string;
  /** What the token is for, for example `"verify-email"` or `"magic-link"`. */
  purpose: string;
  /** The subject the token was issued to. */
  subject: string;
  /** The normalised email the token was sent to. */
  email: string;
  /** Unix milliseconds after which the token is refused. */
  expiresAt: number;
  /** Unix milliseconds of issue. */
  createdAt: number;
}

/**
 * Keeps single-use tokens. `consume` is atomic: of two concurrent calls with
 * one hash, exactly one gets the record. Cloudflare KV cannot give that; use
 * a SQL store (or D1).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryVerificationTokenStore } from "@portcullis/auth/verification";
 * const store = new MemoryVerificationTokenStore();
 * await store.put({ tokenHash: "ab", purpose: "verify-email", subject: "u1", email: "a@example.com", expiresAt: 1, createdAt: 0 });
 * await store.consume("ab", "verify-email"); // the record, once
 * assert.equal(await store.consume("ab", "verify-email"), null);
 * ```
 */
export interface VerificationTokenStore {
  /**
   * Stores a token and removes every earlier token of the same subject and
   * purpose, so that only the newest link works.
   *
   * @param record The token's record.
   */
  put(record: VerificationTokenRecord): Promise<void>;
  /**
   * Removes and returns the record of a token, atomically.
   *
   * @param tokenHash The hex SHA-256 of the presented token.
   * @param purpose The purpose the caller expects.
   * @returns The record, or `null` when unknown, used or of another purpose.
   * Expiry is checked by the caller.
   */
  consume(
    tokenHash: string,
    purpose: string,
  ): Promise<VerificationTokenRecord | null>;
  /**
   * Reads the record of a token without consuming it, for a page that only
   * shows a form (a `GET` must never use a token up).
   *
   * @param tokenHash The hex SHA-256 of the presented token.
   * @param purpose The purpose the caller expects.
   * @returns The record, or `null` when unknown, used or of another purpose.
   * Expiry is checked by the caller.
   */
  find(
    tokenHash: string,
    purpose: string,
  ): Promise<VerificationTokenRecord | null>;
  /**
   * Removes every token of a subject and purpose.
   *
   * @param subject The subject.
   * @param purpose The purpose.
   */
  deleteFor(subject: string, purpose: string): Promise<void>;
}
