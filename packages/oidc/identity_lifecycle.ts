/**
 * Provider identities' part in the account's lifecycle.
 *
 * @module
 */
import {
  type AccountLifecyclePart,
  isFirstProof,
} from "@portcullis/auth/passwords";
import type { IdentityStore } from "./identity_store.ts";

/**
 * The part of provider identities (`(provider, sub) → user` links) in the
 * account's lifecycle (`accountLifecycle` of `@portcullis/auth/passwords`):
 * on the first proof of the address every link of the account goes (a
 * party that had not proven the address made it); on deletion every link
 * goes, so the provider's user signs in to nothing and can later be linked
 * to a new account of the same address.
 *
 * @param store The identity store.
 * @returns The part (`method: "oidc"`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { identityLifecyclePart, MemoryIdentityStore } from "@portcullis/oidc";
 * const store = new MemoryIdentityStore();
 * await store.link({ provider: "op", providerSubject: "s1", subject: "u1", email: "a@example.com", createdAt: 0 });
 * assert.equal(await identityLifecyclePart(store).accountDeleted("u1"), 1);
 * assert.equal(await store.find("op", "s1"), null);
 * ```
 */
export function identityLifecyclePart(
  store: IdentityStore,
): AccountLifecyclePart {
  async function removeAll(subject: string): Promise<number> {
    let removed = 0;
    for (const link of await store.listFor(subject)) {
      if (await store.unlink(subject, link.provider, link.providerSubject)) {
        removed++;
      }
    }
    return removed;
  }
  return {
    method: "oidc",
    addressProven: (event) =>
      isFirstProof(event) ? removeAll(event.subject) : Promise.resolve(0),
    accountDeleted: removeAll,
  };
}
