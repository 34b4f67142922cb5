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
 * | `RUNTIME_UNSUPPORTED` | `selfTestFailed`, `selfTestTooSlow`, `webCryptoRefusesCost` (PBKDF2 above Cloudflare Workers' 100000 iterations without `@portcullis/hashers/pbkdf2-wasm`) |
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
  RUNTIME_UNSUPPORTED:
    | "selfTestFailed"
    | "selfTestTooSlow"
    | "webCryptoRefusesCost";
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
 * An {@linkcode AuthError} of one code: its `code` is that literal and its
 * `reason` one of that code's {@linkcode AuthErrorReasons}.
 */
export interface AuthErrorOf<C extends AuthErrorCode> extends Error {
  /** Always `"AuthError"`. */
  readonly name: "AuthError";
  /** The machine-readable kind of failure. */
  readonly code: C;
  /** Which of the code's reasons applies, when the code has several. */
  readonly reason: AuthErrorReasons[C] | undefined;
}

/**
 * An error portcullis throws for a failure the caller must handle: the
 * union of {@linkcode AuthErrorOf} over every {@linkcode AuthErrorCode}, so
 * after `err instanceof AuthError`, `switch (err.code)` narrows `err.reason`
 * to that code's reasons (and `err.code` is never `any`).
 */
export type AuthError = {
  [C in AuthErrorCode]: AuthErrorOf<C>;
}[AuthErrorCode];

/** The constructor of {@linkcode AuthError}, with `instanceof` narrowing to the union. */
export interface AuthErrorConstructor {
  /**
   * Makes an error with a code.
   *
   * @param code The machine-readable kind of failure.
   * @param message A sentence for people, with no secret in it.
   * @param options `cause` keeps the underlying error for logs; `reason`
   * narrows the code, and must be one of that code's reasons.
   * @returns The error.
   */
  new <C extends AuthErrorCode>(
    code: C,
    message: string,
    options?: AuthErrorOptions<C>,
  ): AuthErrorOf<C>;
  /** What `instanceof` narrows to: the union over every code. */
  readonly prototype: AuthError;
}

/**
 * An error with a literal {@linkcode AuthErrorCode} and, where the code has
 * several, a reason. Messages never contain a secret, a token, a password or
 * a password hash.
 *
 * `err instanceof AuthError` narrows `err` to the union of one type per
 * code, so a `switch (err.code)` narrows `err.reason` too.
 *
 * @example Usage
 * ```ts
 * import { AuthError } from "@portcullis/auth";
 * import assert from "node:assert/strict";
 *
 * const err: unknown = new AuthError("INVALID_PASSWORD", "Password is too short", {
 *   reason: "passwordTooShort",
 * });
 * assert.ok(err instanceof AuthError && err instanceof Error);
 * switch (err.code) {
 *   case "INVALID_PASSWORD":
 *     // err.reason: "passwordTooShort" | "passwordTooLong" | … | undefined
 *     assert.equal(err.reason, "passwordTooShort");
 *     break;
 *   default:
 *     assert.fail(err.code);
 * }
 * ```
 */
export const AuthError: AuthErrorConstructor = class AuthError extends Error {
  readonly code: AuthErrorCode;
  readonly reason: AuthErrorReason | undefined;

  constructor(
    code: AuthErrorCode,
    message: string,
    options?: AuthErrorOptions,
  ) {
    super(message, options);
    this.name = "AuthError";
    this.code = code;
    this.reason = options?.reason;
  }
} as AuthErrorConstructor;
