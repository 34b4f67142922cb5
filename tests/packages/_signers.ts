/**
 * Purpose signers for the sign-in packages' tests, built exactly as the
 * reference app builds them: `signToken`/`verifyToken` over a key derived
 * for one purpose from the application secret.
 *
 * @module
 */
import { SecretProvider } from "../../mod.ts";
import { signToken, verifyToken } from "../../lib/tokens/tokens.ts";

/** The secret the package tests use. */
export const TEST_SECRET = SecretProvider.fromValue(
  "451XorMq7opuYCEKtTaVX+OenH1S9tIpBHjNl/jA5Ew=",
);

/** A signer over `secret.keys(purpose)`. */
export function purposeSigner(
  purpose: string,
  secret: SecretProvider = TEST_SECRET,
): {
  sign(payload: Uint8Array): Promise<string>;
  verify(value: string): Promise<Uint8Array | null>;
} {
  const keys = secret.keys(purpose);
  return {
    sign: async (payload) => signToken((await keys).current, purpose, payload),
    verify: async (value) => verifyToken(await keys, purpose, value),
  };
}
