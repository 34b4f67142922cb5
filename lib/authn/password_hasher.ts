/**
 * The protocol every password hasher implements.
 *
 * @module
 */

/**
 * Hashes and verifies passwords as self-describing strings (PHC format:
 * `$pbkdf2-sha256$i=600000$<salt>$<hash>`, `$2b$…`, `$argon2id$…`), so that
 * the parameters travel with the hash and can be raised later.
 *
 * `verify` never throws for a malformed or foreign stored string: it answers
 * `false` (fail closed). Comparisons are constant time.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { Pbkdf2Hasher } from "@portcullis/auth";
 * const hasher = new Pbkdf2Hasher({ iterations: 1000 }); // tests only
 * const stored = await hasher.hash("correct horse battery");
 * assert.equal(await hasher.verify("correct horse battery", stored), true);
 * assert.equal(hasher.needsRehash(stored), false);
 * ```
 */
export interface PasswordHasher {
  /**
   * Hashes a password with a fresh random salt.
   *
   * @param password The password exactly as the user typed it.
   * @returns The self-describing stored form.
   */
  hash(password: string): Promise<string>;
  /**
   * Checks a password against a stored hash.
   *
   * @param password The password exactly as the user typed it.
   * @param stored A string produced by `hash` (this or another hasher).
   * @returns `true` only when the password matches.
   */
  verify(password: string, stored: string): Promise<boolean>;
  /**
   * Tells whether a stored hash falls below this hasher's current policy
   * (another algorithm, a lower cost) and should be re-minted after the next
   * successful verification.
   *
   * @param stored A stored hash.
   * @returns `true` when the hash should be replaced.
   */
  needsRehash(stored: string): boolean;
}
