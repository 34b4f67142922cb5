/**
 * An in-memory {@linkcode CredentialStore} for tests, demos and examples.
 *
 * @module
 */
import type {
  CreateUserResult,
  CredentialStore,
  NewUserRecord,
  UpdateEmailOptions,
  UpdateEmailResult,
  UserRecord,
} from "./credential_store.ts";

/**
 * Keeps users in two maps inside this isolate: by id, and a unique index by
 * email. Every method finishes its check and its write in one synchronous
 * step, so concurrent calls behave like a database with a unique index: of 50
 * concurrent creations of one email exactly one is `created`. Records are
 * copied in and out, so changing a returned object changes nothing stored.
 *
 * Nothing survives a restart and nothing is shared between isolates or
 * processes: use `SQLCredentialStore` (`@portcullis/sql`) for an
 * application.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryCredentialStore } from "@portcullis/auth";
 * const store = new MemoryCredentialStore();
 * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
 * assert.deepEqual(await store.create({ id: "u2", email: "a@example.com", passwordHash: "$y", createdAt: 0 }), { kind: "emailTaken" });
 * assert.equal((await store.findByEmail("a@example.com"))?.id, "u1");
 * ```
 */
export class MemoryCredentialStore implements CredentialStore {
  #byId = new Map<string, UserRecord>();
  #idByEmail = new Map<string, string>();

  /**
   * Finds a user by exact (already normalised) email.
   *
   * @param email A normalised email.
   * @returns A copy of the user, or `null`.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * assert.equal(await new MemoryCredentialStore().findByEmail("a@example.com"), null);
   * ```
   */
  findByEmail(email: string): Promise<UserRecord | null> {
    const id = this.#idByEmail.get(email);
    return this.findById(id ?? "");
  }

  /**
   * Finds a user by subject id.
   *
   * @param id A subject id.
   * @returns A copy of the user, or `null`.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * assert.equal(await new MemoryCredentialStore().findById("u1"), null);
   * ```
   */
  findById(id: string): Promise<UserRecord | null> {
    const user = this.#byId.get(id);
    return Promise.resolve(user ? { ...user } : null);
  }

  /**
   * Adds a user unless the email is taken. A repeated id is a programmer
   * error and throws, as a primary key would.
   *
   * @param user The new user.
   * @returns `created`, or `emailTaken`.
   * @throws {RangeError} When the id is already in use.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * const store = new MemoryCredentialStore();
   * assert.deepEqual(await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 }), { kind: "created" });
   * ```
   */
  create(user: NewUserRecord): Promise<CreateUserResult> {
    if (this.#idByEmail.has(user.email)) {
      return Promise.resolve({ kind: "emailTaken" });
    }
    if (this.#byId.has(user.id)) {
      return Promise.reject(
        new RangeError(`User id is already in use: "${user.id}"`),
      );
    }
    this.#byId.set(user.id, {
      id: user.id,
      email: user.email,
      passwordHash: user.passwordHash,
      verifiedAt: 0,
      createdAt: user.createdAt,
    });
    this.#idByEmail.set(user.email, user.id);
    return Promise.resolve({ kind: "created" });
  }

  /**
   * Replaces a password hash, optionally only if the stored one is still
   * `expected` (compare-and-set).
   *
   * @param id The subject id.
   * @param passwordHash The new hash.
   * @param expected The hash the caller read, for a compare-and-set.
   * @returns `true` when the user exists and the compare-and-set held.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * const store = new MemoryCredentialStore();
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$old", createdAt: 0 });
   * assert.equal(await store.updatePasswordHash("u1", "$new", "$old"), true);
   * assert.equal(await store.updatePasswordHash("u1", "$newer", "$old"), false);
   * ```
   */
  updatePasswordHash(
    id: string,
    passwordHash: string,
    expected?: string,
  ): Promise<boolean> {
    const user = this.#byId.get(id);
    if (!user || (expected !== undefined && user.passwordHash !== expected)) {
      return Promise.resolve(false);
    }
    user.passwordHash = passwordHash;
    return Promise.resolve(true);
  }

  /**
   * Stamps `verifiedAt` when the stored email is still `email`.
   *
   * @param id The subject id.
   * @param email The email the verification was sent to.
   * @param at Unix milliseconds, greater than 0.
   * @returns `true` when the user exists with that email.
   * @throws {RangeError} When `at` is not a positive safe integer.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * const store = new MemoryCredentialStore();
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
   * assert.equal(await store.markVerified("u1", "a@example.com", Date.now()), true);
   * ```
   */
  markVerified(id: string, email: string, at: number): Promise<boolean> {
    if (!Number.isSafeInteger(at) || at <= 0) {
      return Promise.reject(
        new RangeError(
          `Verification time must be a positive integer of milliseconds: received ${at}`,
        ),
      );
    }
    const user = this.#byId.get(id);
    if (!user || user.email !== email) return Promise.resolve(false);
    user.verifiedAt = at;
    return Promise.resolve(true);
  }

  /**
   * Moves a user to a new address unless another user holds it; check and
   * write happen in one synchronous step, so of concurrent moves to one
   * address exactly one succeeds.
   *
   * @param id The subject id.
   * @param email The new, normalised email.
   * @param options The verification time of the new address (default 0)
   * and the expected current address.
   * @returns `updated`, `emailTaken` or `notFound`.
   * @throws {RangeError} When `verifiedAt` is not a whole number ≥ 0.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * const store = new MemoryCredentialStore();
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
   * assert.deepEqual(await store.updateEmail("u1", "b@example.com"), { kind: "updated" });
   * ```
   */
  updateEmail(
    id: string,
    email: string,
    options: UpdateEmailOptions = {},
  ): Promise<UpdateEmailResult> {
    const verifiedAt = options.verifiedAt ?? 0;
    if (!Number.isSafeInteger(verifiedAt) || verifiedAt < 0) {
      return Promise.reject(
        new RangeError(
          `verifiedAt must be a whole number of milliseconds, 0 or more: received ${verifiedAt}`,
        ),
      );
    }
    const user = this.#byId.get(id);
    if (
      !user ||
      (options.expectedEmail !== undefined &&
        user.email !== options.expectedEmail)
    ) {
      return Promise.resolve({ kind: "notFound" });
    }
    const holder = this.#idByEmail.get(email);
    if (holder !== undefined && holder !== id) {
      return Promise.resolve({ kind: "emailTaken" });
    }
    this.#idByEmail.delete(user.email);
    user.email = email;
    user.verifiedAt = verifiedAt;
    this.#idByEmail.set(email, id);
    return Promise.resolve({ kind: "updated" });
  }

  /**
   * Removes a user; its address can be registered again.
   *
   * @param id The subject id.
   * @returns `true` when a user was removed.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * assert.equal(await new MemoryCredentialStore().deleteUser("u1"), false);
   * ```
   */
  deleteUser(id: string): Promise<boolean> {
    const user = this.#byId.get(id);
    if (!user) return Promise.resolve(false);
    this.#byId.delete(id);
    this.#idByEmail.delete(user.email);
    return Promise.resolve(true);
  }
}
