/**
 * TOTP as a second factor after the password. `TOTP=off` (or
 * `SIGN_IN_METHODS=off`) turns it off; `TOTP_ISSUER` is the name
 * authenticator apps show (default `Portcullis`).
 *
 * @module
 */
import { type AccountsModule, methodOn } from "@portcullis/accounts";
import { totp } from "@portcullis/totp/accounts";
import { defaultTotpViews } from "../views/auth/totp.ts";

/**
 * The TOTP module, unless its switch is off.
 *
 * @param env The environment.
 * @returns The module, or none.
 * @throws {TypeError} For a switch that is neither yes nor no.
 */
export function totpModule(
  env: Record<string, string | undefined>,
): AccountsModule[] {
  return methodOn(env, "TOTP")
    ? [totp({ issuer: env.TOTP_ISSUER, views: defaultTotpViews })]
    : [];
}
