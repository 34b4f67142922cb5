/**
 * The rule at the removal of a second factor (NIST SP 800-63B-4
 * §3.1.1.2): once an account's last second factor (TOTP, its last passkey)
 * is gone, its password is its only factor, which needs at least 15
 * characters. A module that removes a second factor asks
 * {@linkcode soleFactorRefusal} first: the removal is refused, with a
 * message that says what to do, while the password is shorter.
 *
 * @module
 */
import type { ModuleContext } from "./context.ts";
import { hasPassword } from "./reauth.ts";

/** What {@linkcode soleFactorRefusal} needs. */
export interface SoleFactorInput {
  /** The account. */
  subject: string;
  /** The lifecycle method whose second factor goes (`"totp"`, `"passkeys"`). */
  method: string;
  /**
   * The account's password as the request typed it, already checked by
   * the re-check; `undefined` when the user re-authenticated another way.
   */
  password: string | undefined;
  /**
   * Whether the method keeps a second factor after the removal (a passkey
   * removed while others remain); default `false`.
   */
  methodKeepsOne?: boolean;
}

/**
 * Whether removing a second factor must be refused: the account has a
 * password, no other second factor would remain, and the password typed
 * is shorter than the minimum for a password that is the only factor
 * (or was not typed, so its length is not known). An account without a
 * password has nothing to refuse here.
 *
 * @param ctx The app.
 * @param input The account, the method and the password typed.
 * @returns The message to answer (with 409 `password_too_short`), or
 * `null` when the removal may go on.
 */
export async function soleFactorRefusal(
  ctx: ModuleContext,
  input: SoleFactorInput,
): Promise<string | null> {
  if (input.methodKeepsOne === true) return null;
  const user = await ctx.credentials.findById(input.subject);
  if (user === null || !hasPassword(user)) return null;
  const others = await ctx.lifecycle.hasSecondFactor(input.subject, {
    except: input.method,
  });
  if (others) return null;
  const min = ctx.passwords.minPasswordLength({ secondFactor: false });
  if (input.password !== undefined && [...input.password].length >= min) {
    return null;
  }
  return input.password === undefined
    ? `Without a second factor your password is your only one, and it must then have at least ${min} characters: enter your password to go on`
    : `Without a second factor your password is your only one, and it must then have at least ${min} characters: change your password to a longer one first`;
}
