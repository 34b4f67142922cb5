/**
 * TOTP's part in the account's lifecycle (`@portcullis/totp/lifecycle`).
 *
 * @module
 */
import {
  type AccountLifecyclePart,
  isFirstProof,
} from "@portcullis/auth/passwords";
import type { TotpStore } from "./totp_store.ts";

export type {
  AccountLifecyclePart,
  AddressProofKind,
  AddressProven,
} from "@portcullis/auth/passwords";
export type { TotpStore };

/**
 * The part of TOTP in the account's lifecycle (`accountLifecycle` of
 * `@portcullis/auth/passwords`): on the first proof of the address the
 * TOTP secret (enabled or pending) and every recovery code go (a party
 * that had not proven the address set them up, and would otherwise hold
 * the owner's second factor); on deletion they go too, so a pending second
 * step can never finish.
 *
 * @param store The TOTP store.
 * @returns The part (`method: "totp"`); it counts the secret and each
 * recovery code as one credential.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryTotpStore } from "@portcullis/totp";
 * import { totpLifecyclePart } from "@portcullis/totp/lifecycle";
 * const store = new MemoryTotpStore();
 * await store.savePending({ subject: "u1", secret: "sealed", enabledAt: 0, lastStep: 0, createdAt: 0 });
 * await store.replaceRecoveryCodes("u1", ["h1", "h2"]);
 * assert.equal(await totpLifecyclePart(store).accountDeleted("u1"), 3);
 * assert.equal(await store.find("u1"), null);
 * ```
 */
export function totpLifecyclePart(store: TotpStore): AccountLifecyclePart {
  async function removeAll(subject: string): Promise<number> {
    const secret = await store.find(subject);
    const codes = await store.countRecoveryCodes(subject);
    // Always: recovery codes may outlive a secret removed by an older version.
    await store.remove(subject);
    return (secret === null ? 0 : 1) + codes;
  }
  return {
    method: "totp",
    addressProven: (event) =>
      isFirstProof(event) ? removeAll(event.subject) : Promise.resolve(0),
    accountDeleted: removeAll,
    // A second factor once enrolment is confirmed; a pending one is not.
    hasSecondFactor: async (subject) =>
      ((await store.find(subject))?.enabledAt ?? 0) > 0,
  };
}
