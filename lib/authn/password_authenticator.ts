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
import { PasswordPolicy, POLICY_REASONS } from "./password_policy.ts";
import { encodeBase64Url } from "../_common/base64url.ts";
import { subjectProblem } from "../_common/subject.ts";
import { cryptoRandomBytes } from "./_bytes.ts";
import { type LoginParts, passwordLogin } from "./_password_login.ts";
import type {
  ChangePasswordInput,
  LoginOptions,
  LoginResult,
  PasswordAuthenticatorOptions,
  RegisterResult,
} from "./password_authenticator_types.ts";

export type * from "./password_authenticator_types.ts";

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
 *   which emails exist (OWASP ASVS 6.3.8), from the first login on. So
 *   does an account without a password (made by a provider sign-in): its
 *   stored hash is empty or starts with `!` or `*`, and a password login on
 *   it spends the same one dummy verification and fails, so it looks like
 *   an unknown email.
 * - A hash that `needsRehash` is replaced on the next successful login
 *   through a compare-and-set, so a concurrent password change wins.
 * - Plaintext passwords are never logged, stored or returned.
 *
 * It knows nothing of sessions: pass `revokeSessions` so that each
 * password write signs the user out everywhere (before and after it).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryCredentialStore, PasswordAuthenticator, Pbkdf2Hasher } from "@portcullis/auth";
 * const auth = new PasswordAuthenticator({
 *   credentials: new MemoryCredentialStore(),
 *   hasher: new Pbkdf2Hasher({ iterations: 1000 }), // 600000 by default
 * });
 * const created = await auth.register("a@example.com", "correct horse");
 * assert.equal(created.kind, "created");
 * const login = await auth.login("A@example.com", "correct horse");
 * assert.equal(login.kind === "ok" && login.subject, created.kind === "created" && created.subject);
 * assert.deepEqual(await auth.register("a@example.com", "short"), { kind: "rejected", reason: "passwordTooShort" });
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
  #login: LoginParts;
  #revoke: ((subject: string) => Promise<void>) | undefined;

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
    this.#newId = options.newId ??
      (() => encodeBase64Url(cryptoRandomBytes(16)));
    this.#login = {
      credentials: this.#credentials,
      hasher: this.#hasher,
      policy: this.#policy,
      throttle: options.throttle,
      dummyHash: () => this.#dummyHash(),
    };
    this.#revoke = options.revokeSessions;
    // Mint the dummy now, so that the first unknown-email login does not
    // also pay for minting it (a timing difference on every cold start).
    this.#dummyHash().catch(() => {});
  }

  /**
   * Creates a user.
   *
   * @param email The address as typed; normalised before anything else.
   * @param password The password exactly as typed.
   * @returns `created` with the new subject id, `emailTaken`, or `rejected`
   * with the reason (`emailInvalid`, `passwordTooShort`, `passwordTooLong`,
   * `passwordMalformed`, `passwordCommon`); nothing is stored unless
   * `created`.
   * @throws {AuthError} `INVALID_SUBJECT` when `newId` returns a bad id
   * (misuse), or whatever the store throws (an outage).
   */
  async register(email: string, password: string): Promise<RegisterResult> {
    let normalized: string;
    try {
      normalized = normalizeEmail(email);
    } catch (error) {
      if (error instanceof AuthError && error.code === "INVALID_EMAIL") {
        return { kind: "rejected", reason: "emailInvalid" };
      }
      throw error;
    }
    const problem = this.#policy.problem(password);
    if (problem !== null) {
      return { kind: "rejected", reason: POLICY_REASONS[problem] };
    }
    if (await this.#isCompromised(password)) {
      return { kind: "rejected", reason: "passwordCommon" };
    }
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
   * Checks an email and password, through the throttle when one is set.
   *
   * @param email The address as typed.
   * @param password The password exactly as typed.
   * @param options The client's address, for the throttle.
   * @returns `ok` with the subject (pass the result to `signIn`, which
   * re-checks that the password did not change meanwhile), `invalid` for
   * every kind of failure (malformed email, oversize password, unknown
   * email, wrong password), or `throttled`.
   * @throws {AuthError} Only what the store or throttle throws.
   */
  async login(
    email: string,
    password: string,
    options: LoginOptions = {},
  ): Promise<LoginResult> {
    return await passwordLogin(this.#login, email, password, options);
  }

  /**
   * {@linkcode PasswordAuthenticator.login} answering only the subject.
   *
   * @param email The address as typed.
   * @param password The password exactly as typed.
   * @param options The client's address, for the throttle.
   * @returns The subject id, or `null` for every kind of failure, a
   * throttled attempt included.
   * @throws {AuthError} Only what the store throws (`STORE_UNAVAILABLE`).
   */
  async authenticate(
    email: string,
    password: string,
    options: LoginOptions = {},
  ): Promise<string | null> {
    const result = await this.login(email, password, options);
    return result.kind === "ok" ? result.subject : null;
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
    return await this.#write(user.id, fresh, user.passwordHash);
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
    return await this.#write(subject, passwordHash);
  }

  /**
   * Revoke, write, revoke: the first revocation makes a failed one change
   * nothing; the second catches a login that read the old hash between
   * the first and the write (its session began before the second cut-off,
   * or its `stillCurrent` check sees the new hash).
   */
  async #write(
    subject: string,
    passwordHash: string,
    expected?: string,
  ): Promise<boolean> {
    if (this.#revoke !== undefined) await this.#revoke(subject);
    const changed = await this.#credentials.updatePasswordHash(
      subject,
      passwordHash,
      expected,
    );
    if (changed && this.#revoke !== undefined) await this.#revoke(subject);
    return changed;
  }

  /**
   * Checks a new password against the policy and the compromised-password
   * check without storing anything: a flow that spends a single-use token
   * (a password reset) checks first, so a refused password leaves the
   * token usable.
   *
   * @param password The new password.
   * @throws {AuthError} `INVALID_PASSWORD` when it is refused.
   */
  async checkNewPassword(password: string): Promise<void> {
    await this.#checkNew(password);
  }

  async #checkNew(password: string): Promise<void> {
    this.#policy.check(password);
    if (await this.#isCompromised(password)) {
      throw new AuthError(
        "INVALID_PASSWORD",
        "Password appears in a list of breached or common passwords: choose another",
        { reason: "passwordCommon" },
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
