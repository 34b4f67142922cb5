import assert from "node:assert/strict";
import { MemoryCredentialStore } from "../../lib/authn/memory_credential_store.ts";
import { MemoryVerificationTokenStore } from "../../lib/verification/memory_verification_token_store.ts";
import {
  testCredentialStore,
  testVerificationTokenStore,
} from "./_conformance.ts";

testCredentialStore("MemoryCredentialStore", () => new MemoryCredentialStore());
testVerificationTokenStore(
  "MemoryVerificationTokenStore",
  () => new MemoryVerificationTokenStore(),
);

Deno.test("MemoryCredentialStore.create() refuses a repeated id", async () => {
  const store = new MemoryCredentialStore();
  await store.create({
    id: "u1",
    email: "a@example.com",
    passwordHash: "$a",
    createdAt: 0,
  });
  await assert.rejects(
    store.create({
      id: "u1",
      email: "b@example.com",
      passwordHash: "$b",
      createdAt: 0,
    }),
    RangeError,
  );
  assert.equal(await store.findByEmail("b@example.com"), null);
});

Deno.test("MemoryCredentialStore.markVerified() refuses a time that is not positive", async () => {
  const store = new MemoryCredentialStore();
  await store.create({
    id: "u1",
    email: "a@example.com",
    passwordHash: "$a",
    createdAt: 0,
  });
  for (const at of [0, -1, 1.5, Number.NaN]) {
    await assert.rejects(
      store.markVerified("u1", "a@example.com", at),
      RangeError,
    );
  }
  assert.equal((await store.findById("u1"))!.verifiedAt, 0);
});

Deno.test("MemoryVerificationTokenStore keeps a copy of what was put", async () => {
  const store = new MemoryVerificationTokenStore();
  const r = {
    tokenHash: "ab",
    purpose: "p",
    subject: "u1",
    email: "a@example.com",
    expiresAt: 2,
    createdAt: 1,
  };
  await store.put(r);
  r.subject = "u2";
  assert.equal((await store.consume("ab", "p"))!.subject, "u1");
});
