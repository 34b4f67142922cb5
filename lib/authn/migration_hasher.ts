/**
 * A hasher that accepts legacy hashes and mints only the current format,
 * so every successful login moves a user off the legacy algorithm.
 *
 * @module
 */
import type { PasswordHasher } from "./password_hasher.ts";
import { Pbkdf2Hasher } from "./pbkdf2_hasher.ts";

/** Options of {@linkcode MigrationHasher}. */
export interface MigrationHasherOptions {
  /** Mints every new hash. Default `new Pbkdf2Hasher()`. */
  current?: PasswordHasher;
  /**
   * Hashers whose hashes are still accepted, tried in order after
   * `current` (for example `[new BcryptHasher()]`). Each must answer
   * `false` quickly for a format it does not know, as portcullis's do.
   */
  legacy: readonly PasswordHasher[];
}

/**
 * Verifies hashes of the current hasher and of legacy hashers, mints only
 * with the current one, and reports every legacy hash as `needsRehash`, so
 * `PasswordAuthenticator` replaces it (compare-and-set) on the next
 * successful login with a hash of the exact submitted password
 * (OWASP Password Storage Cheat Sheet, "Upgrading Legacy Hashes"). A failed
 * verification never writes anything.
 *
 * Only the current hasher's format is checked against its own policy; a
 * foreign format always needs a rehash.
 *
 * @example Usage
 * ```ts
 * import { Pbkdf2Hasher } from "@portcullis/auth";
 * import { MigrationHasher } from "@portcullis/auth/passwords";
 * import { BcryptHasher } from "@portcullis/hashers/bcrypt";
 * const hasher = new MigrationHasher({
 *   current: new Pbkdf2Hasher(),
 *   legacy: [new BcryptHasher()],
 * });
 * hasher.needsRehash("$2b$10$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui"); // true
 * ```
 */
export class MigrationHasher implements PasswordHasher {
  #current: PasswordHasher;
  #legacy: readonly PasswordHasher[];

  /**
   * Combines a current hasher with the legacy ones still accepted.
   *
   * @param options See {@linkcode MigrationHasherOptions}.
   * @throws {TypeError} When `legacy` is not an array.
   */
  constructor(options: MigrationHasherOptions) {
    if (!Array.isArray(options?.legacy)) {
      throw new TypeError(
        "MigrationHasher needs legacy: a list of hashers, for example [new BcryptHasher()]",
      );
    }
    this.#current = options.current ?? new Pbkdf2Hasher();
    this.#legacy = [...options.legacy];
  }

  /**
   * Hashes with the current hasher.
   *
   * @param password The password exactly as received.
   * @returns The current hasher's stored form.
   * @throws {Error} Whatever the current hasher throws.
   */
  hash(password: string): Promise<string> {
    return this.#current.hash(password);
  }

  /**
   * Verifies with the current hasher, then with each legacy hasher.
   *
   * @param password The password exactly as received.
   * @param stored A stored hash of any known format.
   * @returns `true` when one of the hashers accepts it.
   * @throws {Error} Whatever a hasher throws for well-formed input.
   */
  async verify(password: string, stored: string): Promise<boolean> {
    for (const hasher of [this.#current, ...this.#legacy]) {
      if (await hasher.verify(password, stored)) return true;
    }
    return false;
  }

  /**
   * Asks the current hasher: a legacy format always needs a rehash.
   *
   * @param stored A stored hash.
   * @returns `true` when the hash should be re-minted.
   */
  needsRehash(stored: string): boolean {
    return this.#current.needsRehash(stored);
  }
}
