/**
 * Passkeys' part in the account's lifecycle.
 *
 * @module
 */
import {
  type AccountLifecyclePart,
  type AddressProven,
  isFirstProof,
} from "@portcullis/auth/passwords";
import type { PasskeyStore } from "./passkey_store.ts";

/**
 * The part of passkeys in the account's lifecycle (`accountLifecycle` of
 * `@portcullis/auth/passwords`): on the first proof of the address every
 * passkey of the account goes (a party that had not proven the address
 * registered it), except for an account signed up with a passkey
 * (`signedUpWithPasskey` answers `true`: it has no password) whose proof
 * is a verification by the party that set it up (`kind: "verification"`,
 * `keepPassword: true`: its own signed-in browser): then the passkey it
 * signed up with stays, as a password does (an unverified account gains
 * no other one). On deletion every passkey goes, so none signs in again.
 *
 * @param store The passkey store.
 * @param signedUpWithPasskey Whether an account was signed up with a
 * passkey (it has no password); default: none was.
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
  signedUpWithPasskey: (subject: string) => Promise<boolean> = () =>
    Promise.resolve(false),
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
    addressProven: async (event) => {
      if (!isFirstProof(event)) return 0;
      if (keptBySignUp(event) && await signedUpWithPasskey(event.subject)) {
        return 0;
      }
      return await removeAll(event.subject);
    },
    accountDeleted: removeAll,
    // Any passkey is a second factor beside a password.
    hasSecondFactor: async (subject) =>
      (await store.listFor(subject)).length > 0,
  };
}

/**
 * Whether a first proof may keep a passkey-only account's passkey: a
 * verification whose prover showed they set the account up (the passkey
 * it signed up with plays the password's part). A disowning proof, a
 * password reset or an email change never does.
 */
function keptBySignUp(event: AddressProven): boolean {
  return event.kind === "verification" && event.keepPassword;
}
