/**
 * The purposes single-use tokens are minted for, and how long each works.
 *
 * @module
 */

/** Email verification links: 24 hours. */
export const EMAIL_VERIFICATION_PURPOSE = "verify-email";
/** Password-reset links: 1 hour (OWASP Forgot Password cheat sheet). */
export const PASSWORD_RESET_PURPOSE = "password-reset";
/** Links that confirm a new email address: 24 hours. */
export const EMAIL_CHANGE_PURPOSE = "email-change";

/**
 * The default life of a token of each known purpose, in milliseconds. A
 * purpose not listed here lives `OneTimeTokensOptions.ttlMs` (24 hours by
 * default).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { PASSWORD_RESET_PURPOSE, PURPOSE_TTL_MS } from "./token_purposes.ts";
 * assert.equal(PURPOSE_TTL_MS[PASSWORD_RESET_PURPOSE], 3_600_000);
 * ```
 */
export const PURPOSE_TTL_MS: Readonly<Record<string, number>> = Object.freeze({
  [EMAIL_VERIFICATION_PURPOSE]: 24 * 60 * 60 * 1000,
  [PASSWORD_RESET_PURPOSE]: 60 * 60 * 1000,
  [EMAIL_CHANGE_PURPOSE]: 24 * 60 * 60 * 1000,
});
