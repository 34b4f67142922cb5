/**
 * Email verification: the link mailed at registration proves the address;
 * until then the account creates no notes and gains no sign-in method.
 * Leaving this file out (the scaffold's `--no-verification`) means an app
 * that never asks for the proof.
 *
 * @module
 */
import { type AccountsModule, verification } from "@portcullis/accounts";

/**
 * The verification module.
 *
 * @param _env The environment (it has no settings).
 * @returns The module.
 */
export function verificationModule(
  _env: Record<string, string | undefined>,
): AccountsModule[] {
  return [verification()];
}
