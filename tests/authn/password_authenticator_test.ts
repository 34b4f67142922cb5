import assert from "node:assert/strict";
import { PasswordAuthenticator } from "../../lib/authn/password_authenticator.ts";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import { BcryptHasher } from "../../packages/hashers/bcrypt.ts";
import { MigrationHasher } from "../../lib/authn/migration_hasher.ts";
import { MemoryCredentialStore } from "../../lib/authn/memory_credential_store.ts";
import type { PasswordHasher } from "../../lib/authn/password_hasher.ts";
import { AuthError } from "../../lib/auth_error.ts";
import type { CredentialStore } from "../../lib/authn/credential_store.ts";
import { MemoryKV } from "../../lib/kv/memory_kv.ts";
import { LoginThrottle } from "../../lib/throttle/mod.ts";

const fast = (): Pbkdf2Hasher => new Pbkdf2Hasher({ iterations: 1000 });

/** Wraps a hasher and counts calls. */
function spy(inner: PasswordHasher) {
  const calls = { hash: 0, verify: 0, verified: [] as string[] };
  const hasher: PasswordHasher = {
    hash: (p) => {
      calls.hash++;
      return inner.hash(p);
    },
    verify: (p, s) => {
      calls.verify++;
      calls.verified.push(s);
      return inner.verify(p, s);
    },
    needsRehash: (s) => inner.needsRehash(s),
  };
  return { hasher, calls };
}

Deno.test("register creates a user with a normalised email and a random subject; login works with any case of the email", async () => {
  const credentials = new MemoryCredentialStore();
  const auth = new PasswordAuthenticator({
    credentials,
    hasher: fast(),
    now: () => 42,
  });
  const r = await auth.register("  Alice@Example.com ", "correct horse");
  assert.equal(r.kind, "created");
  const subject = (r as { subject: string }).subject;
  assert.match(subject, /^[A-Za-z0-9_-]{22}$/); // 128 bits, base64url
  const user = await credentials.findByEmail("alice@example.com");
  assert.equal(user?.id, subject);
  assert.equal(user?.createdAt, 42);
  assert.ok(!user?.passwordHash.includes("correct horse"));
  assert.equal(
    await auth.authenticate("ALICE@example.com", "correct horse"),
    subject,
  );
  assert.equal(
    await auth.authenticate("alice@example.com", "correct horse "),
    null,
  );
  assert.equal(
    await auth.authenticate("alice@example.com", "Correct horse"),
    null,
  );
});

Deno.test("item 23-like: subject ids are distinct and never contain |", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
  });
  const seen = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const r = await auth.register(`u${i}@example.com`, "password1");
    assert.equal(r.kind, "created");
    const s = (r as { subject: string }).subject;
    assert.ok(!s.includes("|"));
    seen.add(s);
  }
  assert.equal(seen.size, 20);
});

Deno.test("register answers emailTaken for the same normalised email, and nothing changes", async () => {
  const credentials = new MemoryCredentialStore();
  const auth = new PasswordAuthenticator({ credentials, hasher: fast() });
  await auth.register("a@example.com", "password1");
  const before = await credentials.findByEmail("a@example.com");
  assert.deepEqual(await auth.register("A@EXAMPLE.COM", "password2"), {
    kind: "emailTaken",
  });
  assert.deepEqual(await credentials.findByEmail("a@example.com"), before);
  assert.equal(await auth.authenticate("a@example.com", "password2"), null);
});

Deno.test("concurrent registrations of one email end in exactly one created", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
  });
  const results = await Promise.all(
    Array.from(
      { length: 8 },
      () => auth.register("race@example.com", "password1"),
    ),
  );
  assert.equal(results.filter((r) => r.kind === "created").length, 1);
});

Deno.test("item 44 / item 11 / issue 8 (outcomes as values): register answers rejected with a reason for an invalid email or password, and stores nothing", async () => {
  const credentials = new MemoryCredentialStore();
  const { hasher, calls } = spy(fast());
  const auth = new PasswordAuthenticator({ credentials, hasher });
  assert.deepEqual(await auth.register("a＠b@example.com", "password1"), {
    kind: "rejected",
    reason: "emailInvalid",
  });
  assert.deepEqual(await auth.register("a@example.com", "short"), {
    kind: "rejected",
    reason: "passwordTooShort",
  });
  assert.deepEqual(await auth.register("a@example.com", "x".repeat(1025)), {
    kind: "rejected",
    reason: "passwordTooLong",
  });
  assert.deepEqual(await auth.register("a@example.com", "ab\ud800cdefghij"), {
    kind: "rejected",
    reason: "passwordMalformed",
  });
  assert.equal(
    calls.hash,
    1,
    "only the dummy, minted when the authenticator was made",
  );
  assert.equal(await credentials.findByEmail("a@example.com"), null);
});

Deno.test("item 11: minPasswordLength is configurable (NIST asks 15 for password-only login)", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
    minPasswordLength: 15,
  });
  assert.deepEqual(await auth.register("a@example.com", "fourteen chars"), {
    kind: "rejected",
    reason: "passwordTooShort",
  });
  assert.equal(
    (await auth.register("a@example.com", "fifteen chars!!")).kind,
    "created",
  );
});

Deno.test("item 13: a pluggable breached-password check refuses listed passwords", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
    isCompromised: (p) => p === "password123",
  });
  assert.deepEqual(await auth.register("a@example.com", "password123"), {
    kind: "rejected",
    reason: "passwordCommon",
  });
  assert.equal(
    (await auth.register("a@example.com", "password124")).kind,
    "created",
  );
});

Deno.test("item 15: an unknown email runs exactly one hasher.verify, against a dummy minted once with current parameters", async () => {
  const credentials = new MemoryCredentialStore();
  const { hasher, calls } = spy(fast());
  const auth = new PasswordAuthenticator({ credentials, hasher });
  await Promise.resolve();
  assert.equal(
    calls.hash,
    1,
    "the dummy is minted when the authenticator is made",
  );
  await auth.register("known@example.com", "password1");
  calls.hash = 0;
  for (let i = 0; i < 3; i++) {
    const before = calls.verify;
    assert.equal(
      await auth.authenticate(`nobody${i}@example.com`, "password1"),
      null,
    );
    assert.equal(calls.verify - before, 1);
  }
  assert.equal(calls.hash, 0, "the dummy is never minted again");
  const dummy = calls.verified[0];
  assert.match(dummy, /^\$pbkdf2-sha256\$i=1000\$/);
  assert.equal(new Set(calls.verified).size, 1);
  // A wrong password for a known email also costs exactly one verify.
  const before = calls.verify;
  assert.equal(await auth.authenticate("known@example.com", "password2"), null);
  assert.equal(calls.verify - before, 1);
});

Deno.test("issue 16 finding 6 / item 15: a password login on an account without a password (made by a provider sign-in) spends one hash, like an unknown email", async () => {
  // A WebCrypto that counts PBKDF2 derivations: the work a hash costs.
  let derived = 0;
  const real = crypto.subtle;
  const counting = {
    importKey: real.importKey.bind(real),
    sign: real.sign.bind(real),
    deriveBits(algorithm: Pbkdf2Params, key: CryptoKey, length: number) {
      derived++;
      return real.deriveBits(algorithm, key, length);
    },
  } as unknown as SubtleCrypto;
  const credentials = new MemoryCredentialStore();
  const { hasher, calls } = spy(
    new Pbkdf2Hasher({ iterations: 1000, subtle: counting }),
  );
  const auth = new PasswordAuthenticator({ credentials, hasher });
  await auth.register("known@example.com", "password1");
  // The markers an app stores for "no password" ("!oidc-only" in the
  // reference app), as a locked entry in /etc/shadow.
  const markers = ["!oidc-only", "!", "*", ""];
  for (const [i, passwordHash] of markers.entries()) {
    await credentials.create({
      id: `oidc_${i}`,
      email: `oidc${i}@example.com`,
      passwordHash,
      createdAt: 0,
    });
  }
  const cost = async (email: string) => {
    const [verifies, derivations] = [calls.verify, derived];
    assert.equal(await auth.authenticate(email, "wrong password"), null);
    return {
      verifies: calls.verify - verifies,
      derivations: derived - derivations,
      against: calls.verified.at(-1),
    };
  };
  const unknown = await cost("nobody@example.com");
  assert.equal(unknown.verifies, 1);
  assert.equal(unknown.derivations, 1);
  for (const i of markers.keys()) {
    assert.deepEqual(
      await cost(`oidc${i}@example.com`),
      unknown,
      `marker ${
        JSON.stringify(markers[i])
      }: the same one dummy hash as an unknown email`,
    );
  }
  // A wrong password on an account with one costs one derivation too.
  assert.equal((await cost("known@example.com")).derivations, 1);
});

Deno.test("item 12: oversize or malformed input is refused before any hashing, with the same null", async () => {
  const credentials = new MemoryCredentialStore();
  const { hasher, calls } = spy(fast());
  const auth = new PasswordAuthenticator({ credentials, hasher });
  await auth.register("a@example.com", "password1");
  const v = calls.verify;
  assert.equal(
    await auth.authenticate("a@example.com", "x".repeat(1025)),
    null,
  );
  assert.equal(await auth.authenticate("a@example.com", "é".repeat(513)), null);
  assert.equal(
    await auth.authenticate("nobody@example.com", "x".repeat(100_000)),
    null,
  );
  assert.equal(await auth.authenticate("not an email", "password1"), null);
  assert.equal(
    await auth.authenticate("a@example.com", "pass\ud800word"),
    null,
  );
  assert.equal(calls.verify, v);
});

Deno.test("item 3: a hash below policy is re-minted on successful login, through compare-and-set", async () => {
  const credentials = new MemoryCredentialStore();
  const old = new PasswordAuthenticator({
    credentials,
    hasher: new Pbkdf2Hasher({ iterations: 1000 }),
  });
  const r = await old.register("a@example.com", "password1");
  const subject = (r as { subject: string }).subject;
  const oldHash = (await credentials.findById(subject))!.passwordHash;
  const current = new Pbkdf2Hasher({ iterations: 2000, minIterations: 1000 });
  const auth = new PasswordAuthenticator({ credentials, hasher: current });
  // A failed login never writes.
  assert.equal(await auth.authenticate("a@example.com", "password2"), null);
  assert.equal((await credentials.findById(subject))!.passwordHash, oldHash);
  assert.equal(await auth.authenticate("a@example.com", "password1"), subject);
  const newHash = (await credentials.findById(subject))!.passwordHash;
  assert.match(newHash, /^\$pbkdf2-sha256\$i=2000\$/);
  assert.equal(current.needsRehash(newHash), false);
  assert.equal(await auth.authenticate("a@example.com", "password1"), subject);
});

Deno.test("item 3: rehash loses to a concurrent password change (compare-and-set)", async () => {
  const credentials = new MemoryCredentialStore();
  const old = new PasswordAuthenticator({
    credentials,
    hasher: new Pbkdf2Hasher({ iterations: 1000 }),
  });
  const subject =
    ((await old.register("a@example.com", "password1")) as { subject: string })
      .subject;
  const current = new Pbkdf2Hasher({ iterations: 2000, minIterations: 1000 });
  const racing: PasswordHasher = {
    hash: async (p) => {
      // Meanwhile, the user changes the password elsewhere.
      await old.changePassword(subject, "brand new password");
      return current.hash(p);
    },
    verify: (p, s) => current.verify(p, s),
    needsRehash: (s) => current.needsRehash(s),
  };
  const auth = new PasswordAuthenticator({ credentials, hasher: racing });
  assert.equal(await auth.authenticate("a@example.com", "password1"), subject);
  assert.equal(
    await old.authenticate("a@example.com", "brand new password"),
    subject,
  );
  assert.equal(await old.authenticate("a@example.com", "password1"), null);
});

Deno.test("item 9: migration verifies a bcrypt hash, re-mints PBKDF2 of the exact password, and the bcrypt hash is gone", async () => {
  const credentials = new MemoryCredentialStore();
  const bcrypt = new BcryptHasher();
  const legacyHash =
    "$2b$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui";
  const legacyPassword =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  await credentials.create({
    id: "legacy1",
    email: "old@example.com",
    passwordHash: legacyHash,
    createdAt: 0,
  });
  const current = fast();
  const hasher = new MigrationHasher({ current, legacy: [bcrypt] });
  assert.equal(hasher.needsRehash(legacyHash), true);
  const auth = new PasswordAuthenticator({ credentials, hasher });
  // A failed verify never writes.
  assert.equal(
    await auth.authenticate("old@example.com", legacyPassword + "!"),
    null,
  );
  assert.equal(
    (await credentials.findById("legacy1"))!.passwordHash,
    legacyHash,
  );
  assert.equal(
    await auth.authenticate("old@example.com", legacyPassword),
    "legacy1",
  );
  const stored = (await credentials.findById("legacy1"))!.passwordHash;
  assert.match(stored, /^\$pbkdf2-sha256\$/);
  assert.equal(await current.verify(legacyPassword, stored), true);
  assert.equal(hasher.needsRehash(stored), false);
  assert.equal(
    await auth.authenticate("old@example.com", legacyPassword),
    "legacy1",
  );
  // New registrations are PBKDF2.
  await auth.register("new@example.com", "password1");
  assert.match(
    (await credentials.findByEmail("new@example.com"))!.passwordHash,
    /^\$pbkdf2-sha256\$/,
  );
});

Deno.test("item 9: MigrationHasher requires an explicit legacy list", () => {
  // deno-lint-ignore no-explicit-any
  assert.throws(() => new MigrationHasher({} as any), TypeError);
});

Deno.test("item 17: changePasswordWithCurrent requires the current password", async () => {
  const credentials = new MemoryCredentialStore();
  const auth = new PasswordAuthenticator({ credentials, hasher: fast() });
  const subject =
    ((await auth.register("a@example.com", "password1")) as { subject: string })
      .subject;
  assert.equal(
    await auth.changePasswordWithCurrent(subject, {
      currentPassword: "wrong pass",
      newPassword: "password2",
    }),
    false,
  );
  assert.equal(await auth.authenticate("a@example.com", "password1"), subject);
  await assert.rejects(
    () =>
      auth.changePasswordWithCurrent(subject, {
        currentPassword: "password1",
        newPassword: "short",
      }),
    AuthError,
  );
  assert.equal(
    await auth.changePasswordWithCurrent(subject, {
      currentPassword: "password1",
      newPassword: "password2",
    }),
    true,
  );
  assert.equal(await auth.authenticate("a@example.com", "password1"), null);
  assert.equal(await auth.authenticate("a@example.com", "password2"), subject);
  assert.equal(
    await auth.changePasswordWithCurrent("nobody", {
      currentPassword: "password2",
      newPassword: "password3",
    }),
    false,
  );
});

Deno.test("changePassword (reset flows) sets a new password; unknown subjects answer false", async () => {
  const credentials = new MemoryCredentialStore();
  const auth = new PasswordAuthenticator({ credentials, hasher: fast() });
  const subject =
    ((await auth.register("a@example.com", "password1")) as { subject: string })
      .subject;
  assert.equal(await auth.changePassword(subject, "password9"), true);
  assert.equal(await auth.authenticate("a@example.com", "password9"), subject);
  assert.equal(await auth.changePassword("nobody", "password9"), false);
  await assert.rejects(() => auth.changePassword(subject, "short"), AuthError);
});

Deno.test("item 8: the hasher sees only the password, never the email or id", async () => {
  const seen: string[] = [];
  const inner = fast();
  const hasher: PasswordHasher = {
    hash: (p) => (seen.push(p), inner.hash(p)),
    verify: (p, s) => (seen.push(p), inner.verify(p, s)),
    needsRehash: (s) => inner.needsRehash(s),
  };
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher,
  });
  await auth.register("a@example.com", "password1");
  await auth.authenticate("a@example.com", "password1");
  await auth.authenticate("b@example.com", "password1");
  assert.ok(seen.filter((p) => p !== "password1").length <= 1); // the dummy's random password
  assert.ok(seen.every((p) => !p.includes("example.com")));
});

Deno.test("a newId that returns a bad subject is refused with INVALID_SUBJECT", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
    newId: () => "a|b",
  });
  await assert.rejects(
    () => auth.register("a@example.com", "password1"),
    (e: unknown) => e instanceof AuthError && e.code === "INVALID_SUBJECT",
  );
});

Deno.test("hardening finding 1: with revokeSessions, a password write revokes before it writes and again after; a failed revocation writes nothing", async () => {
  const inner = new MemoryCredentialStore();
  const events: string[] = [];
  const credentials: CredentialStore = {
    create: (u) => inner.create(u),
    findByEmail: (e) => inner.findByEmail(e),
    findById: (id) => inner.findById(id),
    markVerified: (...a) => inner.markVerified(...a),
    updateEmail: (...a) => inner.updateEmail(...a),
    deleteUser: (id) => inner.deleteUser(id),
    updatePasswordHash: (id, hash, expected) => {
      events.push("write");
      return inner.updatePasswordHash(id, hash, expected);
    },
  };
  let revokeFails = false;
  const auth = new PasswordAuthenticator({
    credentials,
    hasher: fast(),
    revokeSessions: (subject) => {
      events.push(`revoke ${subject}`);
      return revokeFails
        ? Promise.reject(new Error("store down"))
        : Promise.resolve();
    },
  });
  const r = await auth.register("o@example.com", "correct horse");
  if (r.kind !== "created") throw new Error(r.kind);
  assert.equal(
    await auth.changePasswordWithCurrent(r.subject, {
      currentPassword: "correct horse",
      newPassword: "second horse",
    }),
    true,
  );
  assert.deepEqual(events, [
    `revoke ${r.subject}`,
    "write",
    `revoke ${r.subject}`,
  ]);

  events.length = 0;
  revokeFails = true;
  await assert.rejects(() => auth.changePassword(r.subject, "third horse"));
  assert.deepEqual(events, [`revoke ${r.subject}`], "nothing was written");
  assert.equal(
    await auth.authenticate("o@example.com", "second horse"),
    r.subject,
  );
});

Deno.test("SECURITY item 45: login through a LoginThrottle answers throttled without hashing, for known, unknown and malformed emails alike, and a success clears the count", async () => {
  const { hasher, calls } = spy(fast());
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher,
    throttle: new LoginThrottle({
      store: new MemoryKV(),
      freeFailures: 2,
      baseDelaySeconds: 60,
    }),
  });
  await auth.register("k@example.com", "correct horse");
  for (const email of ["k@example.com", "nobody@example.com", "not-an-email"]) {
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await auth.login(email, "wrong horse"), {
        kind: "invalid",
      });
    }
    const verifies = calls.verify;
    const held = await auth.login(email, "correct horse");
    assert.deepEqual(held, { kind: "throttled", retryAfterSeconds: 60 });
    assert.equal(calls.verify, verifies, "no hash while throttled");
  }
  // From another address the owner signs in, which clears the counts.
  const ok = await auth.login("k@example.com", "correct horse", {
    address: "203.0.113.5",
  });
  assert.equal(ok.kind, "ok");
  assert.equal(
    (await auth.login("k@example.com", "wrong horse", {
      address: "203.0.113.5",
    })).kind,
    "invalid",
  );
});
