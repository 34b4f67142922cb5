/**
 * The one error class portcullis throws for failures a caller must handle.
 *
 * Expected outcomes (a wrong password, a tampered or revoked token) are
 * values, never errors. Programmer mistakes are `TypeError` or `RangeError`
 * at construction time. `AuthError` is for the rest: a store that cannot be
 * reached, a runtime that refuses an operation, input that was rejected.
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
 * An error with a literal {@linkcode AuthErrorCode}. Messages never contain a
 * secret, a token, a password or a password hash.
 *
 * @example Usage
 * ```ts
 * import { AuthError } from "@portcullis/auth";
 * try {
 *   throw new AuthError("STORE_UNAVAILABLE", "Session store did not answer");
 * } catch (err) {
 *   if (err instanceof AuthError && err.code === "STORE_UNAVAILABLE") {
 *     // answer 503
 *   }
 * }
 * ```
 */
export class AuthError extends Error {
  /** The machine-readable reason. */
  readonly code: AuthErrorCode;
  /**
   * Where one code covers several causes, which one, for callers to switch
   * on instead of reading the message: `INVALID_PASSWORD` carries
   * `passwordTooShort`, `passwordTooLong`, `passwordMalformed` or
   * `passwordCommon`.
   */
  readonly reason: string | undefined;

  /**
   * Makes an error with a code.
   *
   * @param code The machine-readable reason.
   * @param message A sentence for people, with no secret in it.
   * @param options `cause` keeps the underlying error for logs; `reason`
   * names the cause within the code.
   */
  constructor(
    code: AuthErrorCode,
    message: string,
    options?: ErrorOptions & { reason?: string },
  ) {
    super(message, options);
    this.name = "AuthError";
    this.code = code;
    this.reason = options?.reason;
  }
}
