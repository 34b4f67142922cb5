/**
 * Passkeys: added on `/account`, used from `/login`. `PASSKEYS=off` (or
 * `SIGN_IN_METHODS=off`) turns them off; `PASSKEYS_RP_ID` and
 * `PASSKEYS_RP_NAME` name the relying party (default the origin's host and
 * `Portcullis`).
 *
 * @module
 */
import { type AccountsModule, methodOn } from "@portcullis/accounts";
import { passkeys } from "@portcullis/passkeys/accounts";
import { defaultPasskeyViews } from "../views/auth/passkeys.ts";

/**
 * The passkeys module, unless its switch is off.
 *
 * @param env The environment.
 * @returns The module, or none.
 * @throws {TypeError} For a switch that is neither yes nor no.
 */
export function passkeysModule(
  env: Record<string, string | undefined>,
): AccountsModule[] {
  return methodOn(env, "PASSKEYS")
    ? [
      passkeys({
        rpId: env.PASSKEYS_RP_ID,
        rpName: env.PASSKEYS_RP_NAME,
        views: defaultPasskeyViews,
      }),
    ]
    : [];
}
