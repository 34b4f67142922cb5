/**
 * Email and password registration, login and password change over a
 * {@linkcode CredentialStore} and a {@linkcode PasswordHasher}:
 * `PasswordAuthenticator`, its options, and its outcomes as values.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import type { CredentialStore } from "./credential_store.ts";
import type { PasswordHasher } from "./password_hasher.ts";
import { Pbkdf2Hasher } from "./pbkdf2_hasher.ts";
import { normalizeEmail } from "./normalize_email.ts";
import {
  type PasswordContext,
  PasswordPolicy,
  POLICY_REASONS,
} from "./password_policy.ts";
import { encodeBase64Url } from "../_common/base64url.ts";
import { subjectProblem } from "../_common/subject.ts";
import { cryptoRandomBytes } from "./_bytes.ts";

/** Options of `PasswordAuthenticator`. */
export interface PasswordAuthenticatorOptions {
  /** Where users live. */
  credentials: CredentialStore;
  /** Default `new Pbkdf2Hasher()` (600000 iterations). */
  hasher?: PasswordHasher;
  /**
   * Fewest code points of a new password that is the account's only
   * factor, 1–64. Default 15 (NIST SP 800-63B-4 §3.1.1.2). Registration
   * always uses it: a new account has no second factor yet.
   */
  minPasswordLength?: number;
  /**
   * Fewest code points of a new password on an account with a second
   * factor (the caller says so: `secondFactor: true`), 1 to
   * `minPasswordLength`. Default 8 (NIST SP 800-63B-4 §3.1.1.2).
   */
  minPasswordLengthWithSecondFactor?: number;
  /** Hard cap on any presented password, in UTF-8 bytes (≥ 256). Default 1024. */
  maxPasswordBytes?: number;
  /**
   * Refuses new passwords found on a breached or common-password list
   * (NIST SP 800-63B, OWASP ASVS 6.2.4): answer `true` to refuse. Default:
   * no check.
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
  /**
   * Throttles password guesses at {@linkcode PasswordAuthenticator.login}
   * (`LoginThrottle` from `@portcullis/auth/throttle`). Default: none.
   */
  throttle?: PasswordThrottle;
  /**
   * Signs a subject out everywhere (`(s) => sessions.revokeAll(s)`). When
   * given, every password write (change, reset) revokes **before** it
   * writes, so a failed revocation changes nothing, and again after, so a
   * login that read the old hash meanwhile cannot keep its session.
   * Without it, revoke after each change yourself.
   */
  revokeSessions?: (subject: string) => Promise<void>;
}

/** What `PasswordAuthenticator.changePasswordWithCurrent` needs. */
export interface ChangePasswordInput {
  /** The password the user has now, checked first (ASVS 6.2.3). */
  currentPassword: string;
  /** The new password, checked against the policy. */
  newPassword: string;
  /**
   * Whether the account has a second factor (TOTP, a passkey), which
   * lowers the minimum to `minPasswordLengthWithSecondFactor`. Default
   * `false`.
   */
  secondFactor?: boolean;
}

/** Why a registration was refused; `switch (result.reason)` narrows. */
export type RegisterRejectionReason =
  | "emailInvalid"
  | "passwordTooShort"
  | "passwordTooLong"
  | "passwordMalformed"
  | "passwordCommon";

/**
 * The outcome of `PasswordAuthenticator.register`: every expected outcome
 * is a value; only misuse (`newId` returning a bad id) and outages throw.
 */
export type RegisterResult =
  | { readonly kind: "created"; readonly subject: string }
  | { readonly kind: "emailTaken" }
  | { readonly kind: "rejected"; readonly reason: RegisterRejectionReason };

/**
 * A password that was right, with a way to ask whether it still is. Pass
 * it to `signIn`, which checks it again after the session's issue time is
 * fixed: a password change that overlapped the login then cannot leave a
 * session alive.
 */
export interface VerifiedPassword {
  /** The password was right. */
  readonly kind: "ok";
  /** The subject id. */
  readonly subject: string;
  /**
   * Whether the stored password hash is still the one this login checked.
   *
   * @returns `false` when the password changed (or the user went) since.
   */
  stillCurrent(): Promise<boolean>;
}

/**
 * The outcome of `PasswordAuthenticator.login`. `invalid` covers an
 * unknown email, a wrong password, malformed or oversize input alike.
 * `throttled` comes only from the throttle, for known and unknown emails
 * alike.
 */
export type LoginResult =
  | VerifiedPassword
  | { readonly kind: "invalid" }
  | { readonly kind: "throttled"; readonly retryAfterSeconds: number };

/** Options of `PasswordAuthenticator.login` and `authenticate`. */
export interface LoginOptions {
  /**
   * The client's address, for the throttle's per-address and
   * per-(account, address) counters. Default `"unknown"`: one shared
   * bucket.
   */
  address?: string;
}

/**
 * What `PasswordAuthenticator` needs of a throttle: `LoginThrottle` from
 * `@portcullis/auth/throttle` fits. Declared structurally (as is the session
 * revoker among the options), so that authn imports neither the throttle nor
 * the session layer.
 */
export interface PasswordThrottle {
  /**
   * Decides whether a password check may run, counting it in advance.
   *
   * @param account The normalised email.
   * @param address The client's address.
   * @returns Whether it may, and if not, for how long to wait.
   */
  attempt(
    account: string,
    address: string,
  ): Promise<{ allowed: boolean; retryAfterSeconds?: number }>;
  /**
   * Reports a right password (clears the failure counts).
   *
   * @param account The normalised email.
   * @param address The client's address.
   */
  succeeded(account: string, address: string): Promise<void>;
}

const INVALID = Object.freeze({ kind: "invalid" as const });
// No normalised email contains a space: input that is not an address
// shares this one counter.
const INVALID_ACCOUNT = "(not an address)";

/**
 * Whether a stored hash stands for a password. An empty one, or one that
 * starts with `!` or `*` (as a locked entry in /etc/shadow), marks an
 * account without a password: no hasher accepts it, and no login reaches a
 * hasher with it.
 */
function holdsPassword(stored: string): boolean {
  return typeof stored === "string" && stored !== "" &&
    stored[0] !== "!" && stored[0] !== "*";
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
 * const created = await auth.register("a@example.com", "correct horse battery");
 * assert.equal(created.kind, "created");
 * const login = await auth.login("A@example.com", "correct horse battery");
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
  #throttle: PasswordThrottle | undefined;
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
      minLengthWithSecondFactor: options.minPasswordLengthWithSecondFactor,
      maxBytes: options.maxPasswordBytes,
    });
    this.#isCompromised = options.isCompromised ?? (() => false);
    this.#now = options.now ?? Date.now;
    this.#newId = options.newId ??
      (() => encodeBase64Url(cryptoRandomBytes(16)));
    this.#throttle = options.throttle;
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
    let normalized: string | null;
    try {
      normalized = normalizeEmail(email);
    } catch {
      normalized = null; // throttled under one shared name, then refused
    }
    const address = options.address ?? "unknown";
    if (this.#throttle !== undefined) {
      const decision = await this.#throttle.attempt(
        normalized ?? INVALID_ACCOUNT,
        address,
      );
      if (!decision.allowed) {
        return {
          kind: "throttled",
          retryAfterSeconds: Math.max(1, decision.retryAfterSeconds ?? 1),
        };
      }
    }
    if (normalized === null) return INVALID;
    if (!this.#policy.fits(password)) return INVALID;
    const user = await this.#credentials.findByEmail(normalized);
    // An account without a password (made by a provider sign-in) spends the
    // same one hash as an unknown email: its marker would fail at once, and
    // the time saved would tell that the address has an account.
    if (user === null || !holdsPassword(user.passwordHash)) {
      await this.#hasher.verify(password, await this.#dummyHash());
      return INVALID;
    }
    if (!(await this.#hasher.verify(password, user.passwordHash))) {
      return INVALID;
    }
    let current = user.passwordHash;
    if (this.#hasher.needsRehash(user.passwordHash)) {
      try {
        const fresh = await this.#hasher.hash(password);
        if (
          await this.#credentials.updatePasswordHash(
            user.id,
            fresh,
            user.passwordHash,
          )
        ) current = fresh;
      } catch {
        // The login itself succeeded; the upgrade is retried next time.
      }
    }
    if (this.#throttle !== undefined) {
      await this.#throttle.succeeded(normalized, address).catch(() => {});
    }
    const credentials = this.#credentials;
    return {
      kind: "ok",
      subject: user.id,
      stillCurrent: async () =>
        (await credentials.findById(user.id))?.passwordHash === current,
    };
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
    await this.#checkNew(input.newPassword, input.secondFactor === true);
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
   * @param context Whether the account has a second factor (a shorter
   * minimum); default not.
   * @returns `true` when a user's password changed, `false` for an unknown
   * subject.
   * @throws {AuthError} `INVALID_PASSWORD` for a password the policy
   * refuses, or what the store throws.
   */
  async changePassword(
    subject: string,
    newPassword: string,
    context: PasswordContext = {},
  ): Promise<boolean> {
    await this.#checkNew(newPassword, context.secondFactor === true);
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
   * @param context Whether the account has a second factor (a shorter
   * minimum); default not.
   * @throws {AuthError} `INVALID_PASSWORD` when it is refused.
   */
  async checkNewPassword(
    password: string,
    context: PasswordContext = {},
  ): Promise<void> {
    await this.#checkNew(password, context.secondFactor === true);
  }

  /**
   * The fewest characters a new password may have on an account.
   *
   * @param context Whether the account has a second factor.
   * @returns The minimum in code points.
   */
  minPasswordLength(context: PasswordContext = {}): number {
    return this.#policy.minLengthFor(context);
  }

  async #checkNew(password: string, secondFactor: boolean): Promise<void> {
    this.#policy.check(password, { secondFactor });
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
