/**
 * Single-use tokens for links sent by mail (email verification, sign-in
 * links): random, stored only as a SHA-256 hash, bound to a user, an
 * address and a purpose, and consumed atomically.
 *
 * @example Usage
 * ```ts
 * import { MemoryVerificationTokenStore, OneTimeTokens } from "@portcullis/auth/verification";
 * import assert from "node:assert/strict";
 *
 * const tokens = new OneTimeTokens({ store: new MemoryVerificationTokenStore() });
 * const token = await tokens.issue({ subject: "user_1", email: "a@example.com", purpose: "verify-email" });
 * assert.equal((await tokens.redeem(token, "verify-email"))?.subject, "user_1");
 * assert.equal(await tokens.redeem(token, "verify-email"), null); // used
 * ```
 *
 * @module
 */
export type {
  VerificationTokenRecord,
  VerificationTokenStore,
} from "./verification_token_store.ts";
export { MemoryVerificationTokenStore } from "./memory_verification_token_store.ts";
export {
  hashOneTimeToken,
  type IssueTokenInput,
  ONE_TIME_TOKEN_TTL_MS,
  OneTimeTokens,
  type OneTimeTokensOptions,
  type RedeemedToken,
  type RedeemOptions,
} from "./one_time_tokens.ts";
export {
  EMAIL_CHANGE_PURPOSE,
  EMAIL_VERIFICATION_PURPOSE,
  PASSWORD_RESET_PURPOSE,
  PURPOSE_TTL_MS,
} from "./token_purposes.ts";
