/**
 * Values `PasswordAuthenticator.register` hands out: the reason a policy
 * refusal carries, and the default random subject id.
 *
 * @module
 */
import { encodeBase64Url } from "../_common/base64url.ts";
import { cryptoRandomBytes } from "./_bytes.ts";

/** The `rejected` reason for each password-policy problem. */
export const REJECTED = {
  tooShort: "passwordTooShort",
  tooLong: "passwordTooLong",
  malformed: "passwordMalformed",
} as const;

/** A random subject id: 16 random bytes, base64url. */
export function randomSubject(): string {
  return encodeBase64Url(cryptoRandomBytes(16));
}
