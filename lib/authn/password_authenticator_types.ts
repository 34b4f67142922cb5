/**
 * The options and outcomes of `PasswordAuthenticator` (outcomes as values), and the
 * small interfaces it takes as options (a throttle, a session revoker),
 * declared structurally so that authn imports neither the throttle nor the
 * session layer.
 *
 * @module
 */
import type { CredentialStore } from "./credential_store.ts";
import type { PasswordHasher } from "./password_hasher.ts";

/** Options of `PasswordAuthenticator`. */
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
 * `@portcullis/auth/throttle` fits.
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
