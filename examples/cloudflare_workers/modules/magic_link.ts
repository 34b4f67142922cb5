/**
 * Sign-in by a link mailed to the account's address. `MAGIC_LINK=off` (or
 * `SIGN_IN_METHODS=off`) turns it off.
 *
 * @module
 */
import { type AccountsModule, magicLink, methodOn } from "@portcullis/accounts";

/**
 * The magic-link module, unless its switch is off.
 *
 * @param env The environment.
 * @returns The module, or none.
 * @throws {TypeError} For a switch that is neither yes nor no.
 */
export function magicLinkModule(
  env: Record<string, string | undefined>,
): AccountsModule[] {
  return methodOn(env, "MAGIC_LINK") ? [magicLink()] : [];
}
