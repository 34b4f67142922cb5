/**
 * The protocol the authentication layer keeps users and password hashes in.
 *
 * @module
 */

/** A user as the credential store holds it. */
export interface UserRecord {
  /** The subject id: random, stable, never the email. */
  id: string;
  /** The normalised email (NFKC, trimmed, lower-cased). */
  email: string;
  /** The self-describing password hash. */
  passwordHash: string;
  /** Unix milliseconds of email verification; `0` means not verified. */
  verifiedAt: number;
  /** Unix milliseconds of registration. */
  createdAt: number;
}

/** What {@linkcode CredentialStore.create} needs to add a user. */
export interface NewUserRecord {
  /** The subject id. */
  id: string;
  /** The normalised email. */
  email: string;
  /** The self-describing password hash. */
  passwordHash: string;
  /** Unix milliseconds of registration. */
  createdAt: number;
}

/** The outcome of {@linkcode CredentialStore.create}. */
export type CreateUserResult = { kind: "created" } | { kind: "emailTaken" };

/** Options of {@linkcode CredentialStore.updateEmail}. */
export interface UpdateEmailOptions {
  /**
   * The new address's verification time in unix milliseconds; `0` (the
   * default) leaves it unverified. An email-change link proves the new
   * address, so its confirmation passes the time of redemption.
   */
  verifiedAt?: number;
  /**
   * When given, the change happens only while the stored email is still
   * this one (a compare-and-set against a change made meanwhile).
   */
  expectedEmail?: string;
}

/**
 * The outcome of {@linkcode CredentialStore.updateEmail}: `updated`;
 * `emailTaken` when another user holds the address (the unique index
 * refused it); `notFound` when no user has that id (or, with
 * `expectedEmail`, the stored email is no longer the expected one).
 */
export type UpdateEmailResult =
  | { kind: "updated" }
  | { kind: "emailTaken" }
  | { kind: "notFound" };

/**
 * A small domain store for users. "Not found" is `null`, never an error; a
 * backend that cannot be reached throws. Emails arrive already normalised.
 * One unique index on `email` makes concurrent creations of one email end in
 * exactly one `created`.
 *
 * Every implementation passes `testCredentialStore` in
 * `tests/stores/_conformance.ts`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryCredentialStore } from "@portcullis/auth";
 * const store = new MemoryCredentialStore();
 * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
 * assert.equal((await store.findByEmail("a@example.com"))?.id, "u1");
 * ```
 */
export interface CredentialStore {
  /**
   * Finds a user by email.
   *
   * @param email A normalised email.
   * @returns The user, or `null`.
   */
  findByEmail(email: string): Promise<UserRecord | null>;
  /**
   * Finds a user by subject id.
   *
   * @param id A subject id.
   * @returns The user, or `null`.
   */
  findById(id: string): Promise<UserRecord | null>;
  /**
   * Adds a user unless the email is taken.
   *
   * @param user The new user.
   * @returns `created`, or `emailTaken` when the unique index refused it.
   */
  create(user: NewUserRecord): Promise<CreateUserResult>;
  /**
   * Replaces a user's password hash.
   *
   * @param id The subject id.
   * @param passwordHash The new hash.
   * @param expected When given, the write happens only if the stored hash is
   * still this one (a compare-and-set, used by rehash-on-login).
   * @returns `true` when a row changed.
   */
  updatePasswordHash(
    id: string,
    passwordHash: string,
    expected?: string,
  ): Promise<boolean>;
  /**
   * Stamps `verifiedAt` for a user whose stored email is still `email`.
   *
   * @param id The subject id.
   * @param email The email the verification was sent to.
   * @param at Unix milliseconds, greater than 0.
   * @returns `true` when a row changed.
   */
  markVerified(id: string, email: string, at: number): Promise<boolean>;
  /**
   * Moves a user to a new (normalised) address. The unique index on
   * `email` decides races: of concurrent moves (or registrations) to one
   * address exactly one succeeds, the others answer `emailTaken`.
   *
   * @param id The subject id.
   * @param email The new, normalised email.
   * @param options The new address's verification time, and the expected
   * current address.
   * @returns `updated`, `emailTaken` or `notFound`.
   */
  updateEmail(
    id: string,
    email: string,
    options?: UpdateEmailOptions,
  ): Promise<UpdateEmailResult>;
  /**
   * Removes a user. The address can be registered again afterwards.
   *
   * @param id The subject id.
   * @returns `true` when a user was removed, `false` for an unknown id.
   */
  deleteUser(id: string): Promise<boolean>;
}
