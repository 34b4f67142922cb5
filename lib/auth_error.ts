/**
 * The one error class portcullis throws for failures a caller must handle.
 *
 * Expected outcomes (a wrong password, a tampered or revoked token, an email
 * already taken) are values, never errors. Programmer mistakes are
 * `TypeError` or `RangeError` at construction time. `AuthError` is for the
 * rest: a store that cannot be reached, a runtime that refuses an
 * operation, input that was rejected. Each carries a `code`, and where
 * several reasons share a code, a `reason`.
 *
 * @module
 */

/** Every code an {@linkcode AuthError} can carry; `switch (err.code)` narrows. */
export type AuthErrorCode =
  | "STORE_UNAVAILABLE"
  | "INVALID_EMAIL"
  | "INVALID_PASSWORD"
  | "INVALID_SUBJECT"
  | "RUNTIME_UNSUPPORTED"
  | "MISCONFIGURED";

/**
 * The reasons each code can carry.
 *
 * | code | reasons |
 * |---|---|
 * | `STORE_UNAVAILABLE` | `timeout` (the store missed its deadline), `failed` |
 * | `INVALID_EMAIL` | `emailEmpty`, `emailTooLong`, `emailMalformed` (not a string, characters, `@` count, local part or domain) |
 * | `INVALID_PASSWORD` | `passwordTooShort`, `passwordTooLong`, `passwordMalformed` (not a string, unpaired surrogate, NUL for bcrypt), `passwordCommon` |
 * | `INVALID_SUBJECT` | `subjectEmpty`, `subjectForbiddenCharacter`, `subjectTooLong` |
 * | `RUNTIME_UNSUPPORTED` | `selfTestFailed`, `selfTestTooSlow` |
 * | `MISCONFIGURED` | (none) |
 *
 * The password reasons are the ones `PasswordAuthenticator.register`
 * answers as values (`{ kind: "rejected", reason }`).
 */
export interface AuthErrorReasons {
  /** Reasons of `STORE_UNAVAILABLE`. */
  STORE_UNAVAILABLE: "timeout" | "failed";
  /** Reasons of `INVALID_EMAIL`. */
  INVALID_EMAIL: "emailEmpty" | "emailTooLong" | "emailMalformed";
  /** Reasons of `INVALID_PASSWORD`. */
  INVALID_PASSWORD:
    | "passwordTooShort"
    | "passwordTooLong"
    | "passwordMalformed"
    | "passwordCommon";
  /** Reasons of `INVALID_SUBJECT`. */
  INVALID_SUBJECT:
    | "subjectEmpty"
    | "subjectForbiddenCharacter"
    | "subjectTooLong";
  /** Reasons of `RUNTIME_UNSUPPORTED`. */
  RUNTIME_UNSUPPORTED: "selfTestFailed" | "selfTestTooSlow";
  /** `MISCONFIGURED` has no reasons. */
  MISCONFIGURED: never;
}

/** Any reason of any code. */
export type AuthErrorReason = AuthErrorReasons[AuthErrorCode];

/** Options of {@linkcode AuthError}: a `cause` for logs and a `reason`. */
export interface AuthErrorOptions<C extends AuthErrorCode = AuthErrorCode>
  extends ErrorOptions {
  /** Which of the code's reasons applies. */
  reason?: AuthErrorReasons[C];
}

/**
 * An error with a literal {@linkcode AuthErrorCode} and, where the code has
 * several, a reason. Messages never contain a secret, a token, a password or
 * a password hash.
 *
 * @example Usage
 * ```ts
 * import { AuthError } from "@portcullis/auth";
 * import assert from "node:assert/strict";
 *
 * const err = new AuthError("INVALID_PASSWORD", "Password is too short", {
 *   reason: "passwordTooShort",
 * });
 * assert.equal(err.code, "INVALID_PASSWORD");
 * assert.equal(err.reason, "passwordTooShort");
 * assert.ok(err instanceof Error);
 * ```
 */
export class AuthError<C extends AuthErrorCode = AuthErrorCode> extends Error {
  /** The machine-readable kind of failure. */
  readonly code: C;
  /** Which of the code's reasons applies, when the code has several. */
  readonly reason: AuthErrorReasons[C] | undefined;

  /**
   * Makes an error with a code.
   *
   * @param code The machine-readable kind of failure.
   * @param message A sentence for people, with no secret in it.
   * @param options `cause` keeps the underlying error for logs; `reason`
   * narrows the code.
   */
  constructor(code: C, message: string, options?: AuthErrorOptions<C>) {
    super(message, options);
    this.name = "AuthError";
    this.code = code;
    this.reason = options?.reason;
  }
}
