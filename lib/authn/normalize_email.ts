/**
 * Email normalisation and validation for registration, login and lookup.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";

/** The longest address accepted, in UTF-16 code units (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;

// Characters that make an address a list, a quoted string, a comment, a
// display name or a header injection: never part of a single mailbox here.
const FORBIDDEN = /[\s,;:"'<>()[\]\\`]|[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}]/u;
const DOMAIN_LABEL =
  /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]{0,61}[\p{L}\p{M}\p{N}])?$/u;

/**
 * Normalises an email address and checks that it names one mailbox.
 *
 * Order matters (Auth.js GHSA-7rqj-j65f-68wh): the
 * input is first NFKC-normalised, then trimmed and lower-cased, and only
 * then validated, so a fullwidth `＠` (U+FF20), which NFKC turns into `@`,
 * is counted as the second `@` it becomes. The result has exactly one
 * ASCII `@`, a non-empty local part without leading, trailing or doubled
 * dots, a dotted domain of letter/digit/hyphen labels, no whitespace,
 * commas, semicolons, colons, quotes, angle or round or square brackets,
 * backslashes, control or format characters, and at most 254 characters
 * (64 before the `@`). Store, look up and send mail to the returned string.
 *
 * @param input The address as typed.
 * @returns The normalised address.
 * @throws {AuthError} `INVALID_EMAIL` with a message naming the problem
 * (the address itself is not repeated).
 *
 * @example Usage
 * ```ts
 * import { normalizeEmail } from "@portcullis/auth";
 * normalizeEmail("  Alice@Example.COM "); // "alice@example.com"
 * ```
 */
export function normalizeEmail(input: string): string {
  if (typeof input !== "string") {
    throw new AuthError("INVALID_EMAIL", "Email must be a string", {
      reason: "emailMalformed",
    });
  }
  if (input.length > 4 * MAX_EMAIL_LENGTH) {
    throw new AuthError("INVALID_EMAIL", "Email is too long", {
      reason: "emailTooLong",
    });
  }
  if (!input.isWellFormed()) {
    throw new AuthError(
      "INVALID_EMAIL",
      "Email contains an unpaired surrogate",
      { reason: "emailMalformed" },
    );
  }
  const email = input.normalize("NFKC").trim().toLowerCase();
  if (email.length === 0) {
    throw new AuthError("INVALID_EMAIL", "Email is empty", {
      reason: "emailEmpty",
    });
  }
  if (email.length > MAX_EMAIL_LENGTH) {
    throw new AuthError(
      "INVALID_EMAIL",
      `Email is too long: ${email.length} characters, at most ${MAX_EMAIL_LENGTH}`,
      { reason: "emailTooLong" },
    );
  }
  if (FORBIDDEN.test(email)) {
    throw new AuthError(
      "INVALID_EMAIL",
      "Email contains a space, comma, quote, bracket or control character: only one plain address is accepted",
      { reason: "emailMalformed" },
    );
  }
  const at = email.indexOf("@");
  if (at < 0 || email.indexOf("@", at + 1) >= 0) {
    throw new AuthError(
      "INVALID_EMAIL",
      "Email must contain exactly one @ after normalisation",
      { reason: "emailMalformed" },
    );
  }
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (
    local.length === 0 || local.length > 64 || local.startsWith(".") ||
    local.endsWith(".") || local.includes("..")
  ) {
    throw new AuthError(
      "INVALID_EMAIL",
      "Email needs 1 to 64 characters before the @, without leading, trailing or doubled dots",
      { reason: "emailMalformed" },
    );
  }
  const labels = domain.split(".");
  if (labels.length < 2 || !labels.every((l) => DOMAIN_LABEL.test(l))) {
    throw new AuthError(
      "INVALID_EMAIL",
      "Email needs a domain of dot-separated labels after the @, such as example.com",
      { reason: "emailMalformed" },
    );
  }
  return email;
}
