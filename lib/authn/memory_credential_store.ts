/**
 * An in-memory {@linkcode CredentialStore} for tests, demos and examples.
 *
 * @module
 */
import type {
  CreateUserResult,
  CredentialStore,
  NewUserRecord,
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
 * import { MemoryCredentialStore } from "@portcullis/auth";
 * const store = new MemoryCredentialStore();
 * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
 * await store.create({ id: "u2", email: "a@example.com", passwordHash: "$y", createdAt: 0 }); // { kind: "emailTaken" }
 * (await store.findByEmail("a@example.com"))?.id; // "u1"
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
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * await new MemoryCredentialStore().findByEmail("a@example.com"); // null
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
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * await new MemoryCredentialStore().findById("u1"); // null
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
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * const store = new MemoryCredentialStore();
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 }); // { kind: "created" }
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
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * const store = new MemoryCredentialStore();
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$old", createdAt: 0 });
   * await store.updatePasswordHash("u1", "$new", "$old"); // true
   * await store.updatePasswordHash("u1", "$newer", "$old"); // false
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
   * import { MemoryCredentialStore } from "@portcullis/auth";
   * const store = new MemoryCredentialStore();
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
   * await store.markVerified("u1", "a@example.com", Date.now()); // true
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
}
