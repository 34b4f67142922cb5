/**
 * Passkeys' part in the account's lifecycle.
 *
 * @module
 */
import {
  type AccountLifecyclePart,
  isFirstProof,
} from "@portcullis/auth/passwords";
import type { PasskeyStore } from "./passkey_store.ts";

/**
 * The part of passkeys in the account's lifecycle (`accountLifecycle` of
 * `@portcullis/auth/passwords`): on the first proof of the address every
 * passkey of the account goes (a party that had not proven the address
 * registered it); on deletion every passkey goes, so none signs in again.
 *
 * @param store The passkey store.
 * @returns The part (`method: "passkeys"`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryPasskeyStore, passkeyLifecyclePart } from "@portcullis/passkeys";
 * const store = new MemoryPasskeyStore();
 * await store.add({ credentialId: "c1", subject: "u1", publicKey: "pk", counter: 0, transports: [], name: "Key", createdAt: 0, lastUsedAt: 0 });
 * assert.equal(await passkeyLifecyclePart(store).accountDeleted("u1"), 1);
 * assert.equal(await store.find("c1"), null);
 * ```
 */
export function passkeyLifecyclePart(
  store: PasskeyStore,
): AccountLifecyclePart {
  async function removeAll(subject: string): Promise<number> {
    let removed = 0;
    for (const key of await store.listFor(subject)) {
      if (await store.remove(subject, key.credentialId)) removed++;
    }
    return removed;
  }
  return {
    method: "passkeys",
    addressProven: (event) =>
      isFirstProof(event) ? removeAll(event.subject) : Promise.resolve(0),
    accountDeleted: removeAll,
    // Any passkey is a second factor beside a password.
    hasSecondFactor: async (subject) =>
      (await store.listFor(subject)).length > 0,
  };
}
