/**
 * An in-memory {@linkcode VerificationTokenStore} for tests, demos and
 * examples.
 *
 * @module
 */
import type {
  VerificationTokenRecord,
  VerificationTokenStore,
} from "./verification_token_store.ts";

/**
 * Keeps single-use token records (hashes only) in a map inside this isolate.
 * `consume` removes and returns in one synchronous step, so of two concurrent
 * redemptions exactly one gets the record. Expired records are returned like
 * any other (the caller compares `expiresAt` with its clock) and are dropped
 * when consumed or replaced.
 *
 * Nothing survives a restart or is shared between isolates: use
 * `SQLVerificationTokenStore` (`@portcullis/sql`) for an
 * application.
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
export class MemoryVerificationTokenStore implements VerificationTokenStore {
  #byHash = new Map<string, VerificationTokenRecord>();

  /**
   * Stores a token record and removes every earlier token of the same
   * subject and purpose.
   *
   * @param record The token's record.
   *
   * @example Usage
   * ```ts
   * import { MemoryVerificationTokenStore } from "@portcullis/auth/verification";
   * const store = new MemoryVerificationTokenStore();
   * await store.put({ tokenHash: "ab", purpose: "verify-email", subject: "u1", email: "a@example.com", expiresAt: 1, createdAt: 0 });
   * ```
   */
  put(record: VerificationTokenRecord): Promise<void> {
    this.#deleteWhere(record.subject, record.purpose);
    this.#byHash.set(record.tokenHash, { ...record });
    return Promise.resolve();
  }

  /**
   * Removes and returns the record of a token of the given purpose.
   *
   * @param tokenHash The hex SHA-256 of the presented token.
   * @param purpose The purpose the caller expects.
   * @returns The record, or `null` when unknown, used or of another purpose
   * (a token of another purpose stays stored).
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryVerificationTokenStore } from "@portcullis/auth/verification";
   * assert.equal(await new MemoryVerificationTokenStore().consume("ab", "verify-email"), null);
   * ```
   */
  consume(
    tokenHash: string,
    purpose: string,
  ): Promise<VerificationTokenRecord | null> {
    const record = this.#byHash.get(tokenHash);
    if (!record || record.purpose !== purpose) return Promise.resolve(null);
    this.#byHash.delete(tokenHash);
    return Promise.resolve(record);
  }

  /**
   * Reads the record of a token of the given purpose without consuming it.
   *
   * @param tokenHash The hex SHA-256 of the presented token.
   * @param purpose The purpose the caller expects.
   * @returns A copy of the record, or `null` when unknown, used or of
   * another purpose.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryVerificationTokenStore } from "@portcullis/auth/verification";
   * assert.equal(await new MemoryVerificationTokenStore().find("ab", "verify-email"), null);
   * ```
   */
  find(
    tokenHash: string,
    purpose: string,
  ): Promise<VerificationTokenRecord | null> {
    const record = this.#byHash.get(tokenHash);
    if (!record || record.purpose !== purpose) return Promise.resolve(null);
    return Promise.resolve({ ...record });
  }

  /**
   * Removes every token of a subject and purpose.
   *
   * @param subject The subject.
   * @param purpose The purpose.
   *
   * @example Usage
   * ```ts
   * import { MemoryVerificationTokenStore } from "@portcullis/auth/verification";
   * await new MemoryVerificationTokenStore().deleteFor("u1", "verify-email");
   * ```
   */
  deleteFor(subject: string, purpose: string): Promise<void> {
    this.#deleteWhere(subject, purpose);
    return Promise.resolve();
  }

  #deleteWhere(subject: string, purpose: string): void {
    for (const [hash, record] of this.#byHash) {
      if (record.subject === subject && record.purpose === purpose) {
        this.#byHash.delete(hash);
      }
    }
  }
}
