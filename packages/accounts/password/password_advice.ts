/**
 * What to tell a user whose new password was refused.
 *
 * @module
 */

/**
 * The advice for a refused new password, from the `AuthError`'s `reason`.
 *
 * @param reason The refusal's reason (`passwordTooShort`, `passwordCommon`,
 * …), or `undefined`.
 * @param minLength The account's minimum (15 for a password that is the
 * only factor, 8 with a second factor).
 * @returns One sentence for the form.
 */
export function passwordAdvice(
  reason: string | undefined,
  minLength: number,
): string {
  switch (reason) {
    case "passwordCommon":
      return "That password is too common: choose another";
    case "passwordTooLong":
      return "That password is too long";
    case "passwordMalformed":
      return "That password holds characters that cannot be stored";
    default:
      return `Passwords need at least ${minLength} characters`;
  }
}
