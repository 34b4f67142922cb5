/**
 * The account's lifecycle (issue 16): the composition of the sign-in
 * methods' parts and each part over its in-memory store (the SQL stores
 * are the same protocols, exercised by tests/app/account_integrity_test.ts).
 */
import assert from "node:assert/strict";
import { AuthError, MemoryCredentialStore } from "../../mod.ts";
import {
  accountLifecycle,
  type AccountLifecyclePart,
  type AddressProven,
  passwordLifecyclePart,
} from "../../lib/authn/mod.ts";
import {
  identityLifecyclePart,
  MemoryIdentityStore,
} from "../../packages/oidc/mod.ts";
import {
  MemoryPasskeyStore,
  passkeyLifecyclePart,
} from "../../packages/passkeys/mod.ts";
import { MemoryTotpStore } from "../../packages/totp/mod.ts";
import { totpLifecyclePart } from "../../packages/totp/totp_lifecycle.ts";

async function account() {
  const credentials = new MemoryCredentialStore();
  await credentials.create({
    id: "u1",
    email: "a@example.com",
    passwordHash: "$pbkdf2-sha256$i=1$c2FsdA$aGFzaA",
    createdAt: 0,
  });
  const identities = new MemoryIdentityStore();
  await identities.link({
    provider: "op",
    providerSubject: "s1",
    subject: "u1",
    email: "a@example.com",
    createdAt: 1,
  });
  await identities.link({
    provider: "op",
    providerSubject: "s2",
    subject: "u2",
    email: "b@example.com",
    createdAt: 1,
  });
  const passkeys = new MemoryPasskeyStore();
  for (const [id, subject] of [["k1", "u1"], ["k2", "u1"], ["k3", "u2"]]) {
    await passkeys.add({
      credentialId: id,
      subject,
      publicKey: "pk",
      counter: 0,
      transports: [],
      name: "Key",
      createdAt: 1,
      lastUsedAt: 0,
    });
  }
  const totp = new MemoryTotpStore();
  await totp.savePending({
    subject: "u1",
    secret: "sealed",
    enabledAt: 0,
    lastStep: 0,
    createdAt: 1,
  });
  await totp.enable("u1", "sealed", 1, 2);
  await totp.replaceRecoveryCodes("u1", ["h1", "h2", "h3"]);
  return { credentials, identities, passkeys, totp };
}

function parts(a: Awaited<ReturnType<typeof account>>): AccountLifecyclePart[] {
  return [
    passwordLifecyclePart(a.credentials),
    identityLifecyclePart(a.identities),
    passkeyLifecyclePart(a.passkeys),
    totpLifecyclePart(a.totp),
  ];
}

function proof(over: Partial<AddressProven> = {}): AddressProven {
  return {
    subject: "u1",
    kind: "verification",
    at: 10,
    verifiedBefore: 0,
    keepPassword: true,
    ...over,
  };
}

Deno.test("accountLifecycle().accountDeleted() removes every method's credentials of the user, then the account, and no one else's", async () => {
  const a = await account();
  const lifecycle = accountLifecycle(parts(a));
  assert.deepEqual(lifecycle.methods, ["oidc", "passkeys", "totp", "password"]);
  const out = await lifecycle.accountDeleted("u1");
  assert.deepEqual(out.removed, {
    oidc: 1,
    passkeys: 2,
    totp: 4,
    password: 1,
  });
  assert.equal(out.total, 8);
  assert.equal(await a.credentials.findById("u1"), null);
  assert.deepEqual(await a.identities.listFor("u1"), []);
  assert.deepEqual(await a.passkeys.listFor("u1"), []);
  assert.equal(await a.totp.find("u1"), null);
  assert.equal(await a.totp.countRecoveryCodes("u1"), 0);
  // Another user's are untouched.
  assert.equal((await a.identities.listFor("u2")).length, 1);
  assert.equal((await a.passkeys.listFor("u2")).length, 1);
  // Idempotent: a retry removes nothing more and does not throw.
  assert.equal((await lifecycle.accountDeleted("u1")).total, 0);
});

Deno.test("accountLifecycle(): a part whose store fails fails the event (STORE_UNAVAILABLE), the other parts still run, and the account is kept for the retry", async () => {
  const a = await account();
  const down: AccountLifecyclePart = {
    method: "down",
    addressProven: () => Promise.reject(new Error("connection refused")),
    accountDeleted: () => Promise.reject(new Error("connection refused")),
  };
  const lifecycle = accountLifecycle([...parts(a), down]);
  await assert.rejects(
    lifecycle.accountDeleted("u1"),
    (e: unknown) =>
      e instanceof AuthError && e.code === "STORE_UNAVAILABLE" &&
      e.reason === "failed" && /down/.test(e.message) &&
      !/connection refused/.test(e.message),
  );
  assert.notEqual(await a.credentials.findById("u1"), null, "account kept");
  assert.deepEqual(await a.passkeys.listFor("u1"), [], "others ran");
  assert.deepEqual(await a.identities.listFor("u1"), []);
  assert.equal(await a.totp.find("u1"), null);
  // A disowning proof with a part down keeps the password (not recorded).
  const b = await account();
  await assert.rejects(
    accountLifecycle([...parts(b), down]).addressProven(
      proof({ kind: "disowned", keepPassword: false }),
    ),
    (e: unknown) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
  );
  assert.ok(
    (await b.credentials.findById("u1"))!.passwordHash.startsWith("$"),
  );
});

Deno.test("accountLifecycle() takes exactly one part holding the account and each method once (TypeError otherwise)", async () => {
  const a = await account();
  const [password, oidc] = parts(a);
  assert.throws(() => accountLifecycle([oidc]), TypeError);
  assert.throws(() => accountLifecycle([password, password]), TypeError);
  assert.throws(() => accountLifecycle([password, oidc, oidc]), TypeError);
  assert.throws(
    () => passwordLifecyclePart(a.credentials, { noPassword: "plain" }),
    TypeError,
  );
});

Deno.test("addressProven(): the first proof removes every method's credentials; 'disowned' also turns the password into 'no password'; an account proven before keeps everything", async () => {
  const a = await account();
  const lifecycle = accountLifecycle(parts(a));
  const kept = await lifecycle.addressProven(
    proof({ kind: "passwordReset", verifiedBefore: 5 }),
  );
  assert.equal(kept.total, 0);
  assert.equal((await a.passkeys.listFor("u1")).length, 2);

  const first = await lifecycle.addressProven(proof());
  assert.deepEqual(first.removed, {
    oidc: 1,
    passkeys: 2,
    totp: 4,
    password: 0,
  });
  const user = (await a.credentials.findById("u1"))!;
  assert.ok(user.passwordHash.startsWith("$"), "the same party keeps it");

  const disowned = await lifecycle.addressProven(
    proof({ kind: "disowned", keepPassword: false }),
  );
  assert.deepEqual(disowned.removed, {
    oidc: 0,
    passkeys: 0,
    totp: 0,
    password: 1,
  });
  assert.equal(
    (await a.credentials.findById("u1"))!.passwordHash,
    "!no-password",
  );
  assert.equal((await a.passkeys.listFor("u2")).length, 1);
});

Deno.test("hasSecondFactor(): TOTP once confirmed and any passkey answer yes, a provider identity no; except leaves a method out; a part that throws counts as no", async () => {
  const credentials = new MemoryCredentialStore();
  const totp = new MemoryTotpStore();
  const passkeys = new MemoryPasskeyStore();
  const identities = new MemoryIdentityStore();
  const parts = [
    totpLifecyclePart(totp),
    passkeyLifecyclePart(passkeys),
    identityLifecyclePart(identities),
    passwordLifecyclePart(credentials),
  ];
  const lifecycle = accountLifecycle(parts);
  await identities.link({
    provider: "op",
    providerSubject: "s1",
    subject: "u1",
    email: "a@example.com",
    createdAt: 1,
  });
  assert.equal(await lifecycle.hasSecondFactor("u1"), false, "a provider");
  await totp.savePending({
    subject: "u1",
    secret: "sealed",
    enabledAt: 0,
    lastStep: 0,
    createdAt: 0,
  });
  assert.equal(await lifecycle.hasSecondFactor("u1"), false, "pending TOTP");
  await totp.enable("u1", "sealed", 1, 2);
  assert.equal(await lifecycle.hasSecondFactor("u1"), true, "TOTP on");
  assert.equal(
    await lifecycle.hasSecondFactor("u1", { except: "totp" }),
    false,
    "nothing besides TOTP",
  );
  await passkeys.add({
    credentialId: "c1",
    subject: "u1",
    publicKey: "pk",
    counter: 0,
    transports: [],
    name: "key",
    createdAt: 1,
    lastUsedAt: 0,
  });
  assert.equal(
    await lifecycle.hasSecondFactor("u1", { except: "totp" }),
    true,
    "a passkey besides TOTP",
  );
  assert.equal(await lifecycle.hasSecondFactor("u2"), false, "another user");
  const failing: AccountLifecyclePart = {
    method: "broken",
    addressProven: () => Promise.resolve(0),
    accountDeleted: () => Promise.resolve(0),
    hasSecondFactor: () => Promise.reject(new Error("store down")),
  };
  const strict = accountLifecycle([
    failing,
    passwordLifecyclePart(credentials),
  ]);
  assert.equal(await strict.hasSecondFactor("u1"), false, "fails closed");
});
