/**
 * Email and password registration, login and password change over a
 * {@linkcode CredentialStore} and a {@linkcode PasswordHasher}.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import type { CredentialStore } from "./credential_store.ts";
import type { PasswordHasher } from "./password_hasher.ts";
import { Pbkdf2Hasher } from "./pbkdf2_hasher.ts";
import { normalizeEmail } from "./normalize_email.ts";
import { PasswordPolicy } from "./password_policy.ts";
import { encodeBase64Url } from "../_common/base64url.ts";
import { subjectProblem } from "../_common/subject.ts";
import { cryptoRandomBytes } from "./_bytes.ts";

/** Options of {@linkcode PasswordAuthenticator}. */
export interface PasswordAuthenticatorOptions {
  /** Where users live. */
  credentials: CredentialStore;
  /** Default `new Pbkdf2Hasher()` (600000 iterations). */
  hasher?: PasswordHasher;
  /**
   * Fewest code points of a new password, 1–64. Default 8 (ASVS 6.2.1);
   * NIST SP 800-63B-4 asks for 15 where the password is the only factor.
   */
  minPasswordLength?: number;
  /** Hard cap on any presented password, in UTF-8 bytes (≥ 256). Default 1024. */
  maxPasswordBytes?: number;
  /**
   * Refuses new passwords found on a breached or common-password list
   * (NIST SP 800-63B, OWASP ASVS 6.2.4): answer `true` to refuse. Default: no check.
   */
  isCompromised?: (password: string) => boolean | Promise<boolean>;
  /** Clock in unix milliseconds. Default `Date.now`. */
  now?: () => number;
  /**
   * Makes subject ids. Default: 128 random bits as base64url (22
   * characters). Ids must be non-empty, at most 255 bytes, without `|` or
   * control characters.
   */
  newId?: () => string;
}

/** The outcome of {@linkcode PasswordAuthenticator.register}. */
export type RegisterResult =
  | { kind: "created"; subject: string }
  | { kind: "emailTaken" };

/** What {@linkcode PasswordAuthenticator.changePasswordWithCurrent} needs. */
export interface ChangePasswordInput {
  /** The password the user has now, checked first (ASVS 6.2.3). */
  currentPassword: string;
  /** The new password, checked against the policy. */
  newPassword: string;
}

function randomSubject(): string {
  return encodeBase64Url(cryptoRandomBytes(16));
}

/**
 * Registers and authenticates users by email and password.
 *
 * - Emails go through {@linkcode normalizeEmail}; passwords are hashed
 *   exactly as received (no trim), after the length policy and the
 *   optional breached-password check.
 * - `authenticate` answers the same `null` for an unknown email, a wrong
 *   password and oversize input. An unknown email still runs exactly one
 *   `verify` against a dummy hash minted once, when the authenticator is
 *   made, with the hasher's current parameters, so timing does not tell
 *   which emails exist (OWASP ASVS 6.3.8), from the first login on.
 * - A hash that `needsRehash` is replaced on the next successful login
 *   through a compare-and-set, so a concurrent password change wins.
 * - Plaintext passwords are never logged, stored or returned.
 *
 * This class knows nothing of sessions: after a password change, revoke
 * the user's other sessions (`sessions.revokeAll(subject)`).
 *
 * @example Usage
 * ```ts
 * import { MemoryCredentialStore, PasswordAuthenticator, Pbkdf2Hasher } from "@portcullis/auth";
 * const auth = new PasswordAuthenticator({
 *   credentials: new MemoryCredentialStore(),
 *   hasher: new Pbkdf2Hasher({ iterations: 1000 }), // 600000 by default
 * });
 * const result = await auth.register("a@example.com", "correct horse");
 * const subject = await auth.authenticate("A@example.com", "correct horse");
 * // subject === (result.kind === "created" ? result.subject : null)
 * ```
 */
export class PasswordAuthenticator {
  #credentials: CredentialStore;
  #hasher: PasswordHasher;
  #policy: PasswordPolicy;
  #isCompromised: (password: string) => boolean | Promise<boolean>;
  #now: () => number;
  #newId: () => string;
  #dummy: Promise<string> | undefined;

  /**
   * Wires a credential store, a hasher and the password policy.
   *
   * @param options See {@linkcode PasswordAuthenticatorOptions}.
   * @throws {TypeError} When `credentials` is missing.
   * @throws {RangeError} When the password bounds are out of range.
   */
  constructor(options: PasswordAuthenticatorOptions) {
    if (options?.credentials === undefined) {
      throw new TypeError(
        "PasswordAuthenticator needs credentials: a CredentialStore",
      );
    }
    this.#credentials = options.credentials;
    this.#hasher = options.hasher ?? new Pbkdf2Hasher();
    this.#policy = new PasswordPolicy({
      minLength: options.minPasswordLength,
      maxBytes: options.maxPasswordBytes,
    });
    this.#isCompromised = options.isCompromised ?? (() => false);
    this.#now = options.now ?? Date.now;
    this.#newId = options.newId ?? randomSubject;
    // Mint the dummy now, so that the first unknown-email login does not
    // also pay for minting it (a timing difference on every cold start).
    this.#dummyHash().catch(() => {});
  }

  /**
   * Creates a user.
   *
   * @param email The address as typed; normalised before anything else.
   * @param password The password exactly as typed.
   * @returns `created` with the new subject id, or `emailTaken`.
   * @throws {AuthError} `INVALID_EMAIL` or `INVALID_PASSWORD` (nothing is
   * stored), `INVALID_SUBJECT` when `newId` returns a bad id, or whatever
   * the store throws.
   */
  async register(email: string, password: string): Promise<RegisterResult> {
    const normalized = normalizeEmail(email);
    await this.#checkNew(password);
    const passwordHash = await this.#hasher.hash(password);
    const id = this.#newId();
    if (subjectProblem(id) !== null) {
      throw new AuthError(
        "INVALID_SUBJECT",
        "newId must return 1 to 255 bytes without | or control characters",
      );
    }
    const result = await this.#credentials.create({
      id,
      email: normalized,
      passwordHash,
      createdAt: this.#now(),
    });
    return result.kind === "created"
      ? { kind: "created", subject: id }
      : { kind: "emailTaken" };
  }

  /**
   * Checks an email and password.
   *
   * @param email The address as typed.
   * @param password The password exactly as typed.
   * @returns The subject id, or `null` for every kind of failure (malformed
   * email, oversize password, unknown email, wrong password).
   * @throws {AuthError} Only what the store throws (`STORE_UNAVAILABLE`).
   */
  async authenticate(email: string, password: string): Promise<string | null> {
    let normalized: string;
    try {
      normalized = normalizeEmail(email);
    } catch {
      return null;
    }
    if (!this.#policy.fits(password)) return null;
    const user = await this.#credentials.findByEmail(normalized);
    if (user === null) {
      await this.#hasher.verify(password, await this.#dummyHash());
      return null;
    }
    if (!(await this.#hasher.verify(password, user.passwordHash))) return null;
    if (this.#hasher.needsRehash(user.passwordHash)) {
      try {
        const fresh = await this.#hasher.hash(password);
        await this.#credentials.updatePasswordHash(
          user.id,
          fresh,
          user.passwordHash,
        );
      } catch {
        // The login itself succeeded; the upgrade is retried next time.
      }
    }
    return user.id;
  }

  /**
   * Changes a password after checking the current one (ASVS 6.2.3,
   * 7.4.3). Revoke the user's other sessions afterwards.
   *
   * @param subject The signed-in subject id.
   * @param input The current and the new password.
   * @returns `true` when the password changed; `false` for an unknown
   * subject, a wrong current password, or a concurrent change.
   * @throws {AuthError} `INVALID_PASSWORD` for a new password the policy
   * refuses (checked only after the current password verified), or what
   * the store throws.
   */
  async changePasswordWithCurrent(
    subject: string,
    input: ChangePasswordInput,
  ): Promise<boolean> {
    if (!this.#policy.fits(input.currentPassword)) return false;
    const user = await this.#credentials.findById(subject);
    if (user === null) return false;
    if (
      !(await this.#hasher.verify(input.currentPassword, user.passwordHash))
    ) {
      return false;
    }
    await this.#checkNew(input.newPassword);
    const fresh = await this.#hasher.hash(input.newPassword);
    return await this.#credentials.updatePasswordHash(
      user.id,
      fresh,
      user.passwordHash,
    );
  }

  /**
   * Sets a new password without the current one, for flows that proved the
   * user otherwise (a password-reset token, an administrator). A signed-in
   * user changing their own password should go through
   * {@linkcode PasswordAuthenticator.changePasswordWithCurrent} instead.
   * Revoke the user's sessions afterwards.
   *
   * @param subject The subject id.
   * @param newPassword The new password.
   * @returns `true` when a user's password changed, `false` for an unknown
   * subject.
   * @throws {AuthError} `INVALID_PASSWORD` for a password the policy
   * refuses, or what the store throws.
   */
  async changePassword(subject: string, newPassword: string): Promise<boolean> {
    await this.#checkNew(newPassword);
    const passwordHash = await this.#hasher.hash(newPassword);
    return await this.#credentials.updatePasswordHash(subject, passwordHash);
  }

  async #checkNew(password: string): Promise<void> {
    this.#policy.check(password);
    if (await this.#isCompromised(password)) {
      throw new AuthError(
        "INVALID_PASSWORD",
        "Password appears in a list of breached or common passwords: choose another",
        { reason: "common" },
      );
    }
  }

  #dummyHash(): Promise<string> {
    this.#dummy ??= this.#hasher.hash(
      encodeBase64Url(cryptoRandomBytes(24)),
    ).catch((err) => {
      this.#dummy = undefined;
      throw err;
    });
    return this.#dummy;
  }
}
