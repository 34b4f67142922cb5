/**
 * Passwords beyond the main entry: the length policy, migration from
 * another hash, the startup self-test, the PBKDF2 options, the credential
 * store's records, the account's lifecycle every sign-in method takes part
 * in (`accountLifecycle`: the address is proven, the account is deleted), and the byte helpers a custom {@linkcode PasswordHasher}
 * needs (strict PHC base64, a constant-time comparison).
 *
 * @example Usage
 * ```ts
 * import { PasswordPolicy } from "@portcullis/auth/passwords";
 * import { AuthError } from "@portcullis/auth";
 * import assert from "node:assert/strict";
 *
 * const policy = new PasswordPolicy(); // 15, or 8 with a second factor
 * assert.throws(
 *   () => policy.check("too short"),
 *   (e) => e instanceof AuthError && e.reason === "passwordTooShort",
 * );
 * policy.check("a long enough passphrase"); // no error
 * policy.check("2FA is on", { secondFactor: true }); // no error
 * ```
 *
 * @module
 */
import type { PasswordHasher } from "./password_hasher.ts";

export type { PasswordHasher };
export {
  DEFAULT_MAX_PASSWORD_BYTES,
  DEFAULT_MIN_PASSWORD_LENGTH,
  DEFAULT_MIN_PASSWORD_LENGTH_WITH_SECOND_FACTOR,
  type PasswordContext,
  PasswordPolicy,
  type PasswordPolicyOptions,
} from "./password_policy.ts";
export {
  MigrationHasher,
  type MigrationHasherOptions,
} from "./migration_hasher.ts";
export {
  selfTestHasher,
  type SelfTestOptions,
  type SelfTestReport,
} from "./hasher_self_test.ts";
export type { Pbkdf2HasherOptions, Pbkdf2Sha256 } from "./pbkdf2_hasher.ts";
export { MAX_EMAIL_LENGTH } from "./normalize_email.ts";
export type {
  CreateUserResult,
  NewUserRecord,
  UpdateEmailOptions,
  UpdateEmailResult,
  UserRecord,
} from "./credential_store.ts";
export type {
  ChangePasswordInput,
  LoginOptions,
  LoginResult,
  PasswordAuthenticatorOptions,
  PasswordThrottle,
  RegisterRejectionReason,
  VerifiedPassword,
} from "./password_authenticator.ts";
export {
  type AccountLifecycle,
  accountLifecycle,
  type AccountLifecyclePart,
  type AddressProofKind,
  type AddressProven,
  isFirstProof,
  type LifecycleOutcome,
  passwordLifecyclePart,
  type PasswordLifecyclePartOptions,
} from "./account_lifecycle.ts";
