/**
 * What to tell a user whose new password was refused.
 *
 * @module
 */

/**
 * The advice for a refused new password.
 *
 * @param reason The `AuthError` message.
 * @returns One sentence for the form.
 */
export function passwordAdvice(reason: string): string {
  return /common|breached/.test(reason)
    ? "That password is too common: choose another"
    : "Passwords need at least 8 characters";
}
