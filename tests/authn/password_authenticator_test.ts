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
  const r = await auth.register(
    "  Alice@Example.com ",
    "correct horse battery",
  );
  assert.equal(r.kind, "created");
  const subject = (r as { subject: string }).subject;
  assert.match(subject, /^[A-Za-z0-9_-]{22}$/); // 128 bits, base64url
  const user = await credentials.findByEmail("alice@example.com");
  assert.equal(user?.id, subject);
  assert.equal(user?.createdAt, 42);
  assert.ok(!user?.passwordHash.includes("correct horse battery"));
  assert.equal(
    await auth.authenticate("ALICE@example.com", "correct horse battery"),
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
    const r = await auth.register(`u${i}@example.com`, "first long password");
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
  await auth.register("a@example.com", "first long password");
  const before = await credentials.findByEmail("a@example.com");
  assert.deepEqual(
    await auth.register("A@EXAMPLE.COM", "second long password"),
    {
      kind: "emailTaken",
    },
  );
  assert.deepEqual(await credentials.findByEmail("a@example.com"), before);
  assert.equal(
    await auth.authenticate("a@example.com", "second long password"),
    null,
  );
});

Deno.test("concurrent registrations of one email end in exactly one created", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
  });
  const results = await Promise.all(
    Array.from(
      { length: 8 },
      () => auth.register("race@example.com", "first long password"),
    ),
  );
  assert.equal(results.filter((r) => r.kind === "created").length, 1);
});

Deno.test("item 44 / item 11 / issue 8 (outcomes as values): register answers rejected with a reason for an invalid email or password, and stores nothing", async () => {
  const credentials = new MemoryCredentialStore();
  const { hasher, calls } = spy(fast());
  const auth = new PasswordAuthenticator({ credentials, hasher });
  assert.deepEqual(
    await auth.register("a＠b@example.com", "first long password"),
    {
      kind: "rejected",
      reason: "emailInvalid",
    },
  );
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
    minPasswordLength: 20,
  });
  assert.deepEqual(
    await auth.register("a@example.com", "nineteen characters"),
    { kind: "rejected", reason: "passwordTooShort" },
  );
  assert.equal(
    (await auth.register("a@example.com", "twenty characters!!!")).kind,
    "created",
  );
});

Deno.test("NIST SP 800-63B-4 §3.1.1.2: a password that is the only factor needs 15 characters by default, 8 with a second factor", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
  });
  // Registration: a new account has no second factor.
  assert.deepEqual(await auth.register("a@example.com", "fourteen chars"), {
    kind: "rejected",
    reason: "passwordTooShort",
  });
  const created = await auth.register("a@example.com", "fifteen chars!!");
  assert.equal(created.kind, "created");
  if (created.kind !== "created") return;
  assert.equal(auth.minPasswordLength(), 15);
  assert.equal(auth.minPasswordLength({ secondFactor: true }), 8);
  // A change without a second factor: 15 again.
  await assert.rejects(
    () =>
      auth.changePasswordWithCurrent(created.subject, {
        currentPassword: "fifteen chars!!",
        newPassword: "eight ch",
      }),
    (e: unknown) => e instanceof AuthError && e.reason === "passwordTooShort",
  );
  await assert.rejects(
    () => auth.changePassword(created.subject, "fourteen chars"),
    (e: unknown) => e instanceof AuthError && e.reason === "passwordTooShort",
  );
  await assert.rejects(
    () => auth.checkNewPassword("fourteen chars"),
    /at least 15/,
  );
  // With a second factor, 8 is enough, and 7 is not.
  await assert.rejects(
    () => auth.checkNewPassword("seven c", { secondFactor: true }),
    /at least 8/,
  );
  assert.equal(
    await auth.changePasswordWithCurrent(created.subject, {
      currentPassword: "fifteen chars!!",
      newPassword: "eight ch",
      secondFactor: true,
    }),
    true,
  );
  // The shorter password set with a second factor still signs in.
  assert.equal(
    await auth.authenticate("a@example.com", "eight ch"),
    created.subject,
  );
  assert.throws(
    () =>
      new PasswordAuthenticator({
        credentials: new MemoryCredentialStore(),
        minPasswordLength: 10,
        minPasswordLengthWithSecondFactor: 12,
      }),
    RangeError,
  );
});

Deno.test("item 13: a pluggable breached-password check refuses listed passwords", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
    isCompromised: (p) => p === "password123456789",
  });
  assert.deepEqual(await auth.register("a@example.com", "password123456789"), {
    kind: "rejected",
    reason: "passwordCommon",
  });
  assert.equal(
    (await auth.register("a@example.com", "password123456780")).kind,
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
  await auth.register("known@example.com", "first long password");
  calls.hash = 0;
  for (let i = 0; i < 3; i++) {
    const before = calls.verify;
    assert.equal(
      await auth.authenticate(`nobody${i}@example.com`, "first long password"),
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
  assert.equal(
    await auth.authenticate("known@example.com", "second long password"),
    null,
  );
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
  await auth.register("known@example.com", "first long password");
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
  await auth.register("a@example.com", "first long password");
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
  assert.equal(
    await auth.authenticate("not an email", "first long password"),
    null,
  );
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
  const r = await old.register("a@example.com", "first long password");
  const subject = (r as { subject: string }).subject;
  const oldHash = (await credentials.findById(subject))!.passwordHash;
  const current = new Pbkdf2Hasher({ iterations: 2000, minIterations: 1000 });
  const auth = new PasswordAuthenticator({ credentials, hasher: current });
  // A failed login never writes.
  assert.equal(
    await auth.authenticate("a@example.com", "second long password"),
    null,
  );
  assert.equal((await credentials.findById(subject))!.passwordHash, oldHash);
  assert.equal(
    await auth.authenticate("a@example.com", "first long password"),
    subject,
  );
  const newHash = (await credentials.findById(subject))!.passwordHash;
  assert.match(newHash, /^\$pbkdf2-sha256\$i=2000\$/);
  assert.equal(current.needsRehash(newHash), false);
  assert.equal(
    await auth.authenticate("a@example.com", "first long password"),
    subject,
  );
});

Deno.test("item 3: rehash loses to a concurrent password change (compare-and-set)", async () => {
  const credentials = new MemoryCredentialStore();
  const old = new PasswordAuthenticator({
    credentials,
    hasher: new Pbkdf2Hasher({ iterations: 1000 }),
  });
  const subject =
    ((await old.register("a@example.com", "first long password")) as {
      subject: string;
    })
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
  assert.equal(
    await auth.authenticate("a@example.com", "first long password"),
    subject,
  );
  assert.equal(
    await old.authenticate("a@example.com", "brand new password"),
    subject,
  );
  assert.equal(
    await old.authenticate("a@example.com", "first long password"),
    null,
  );
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
  await auth.register("new@example.com", "first long password");
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
    ((await auth.register("a@example.com", "first long password")) as {
      subject: string;
    })
      .subject;
  assert.equal(
    await auth.changePasswordWithCurrent(subject, {
      currentPassword: "wrong pass",
      newPassword: "second long password",
    }),
    false,
  );
  assert.equal(
    await auth.authenticate("a@example.com", "first long password"),
    subject,
  );
  await assert.rejects(
    () =>
      auth.changePasswordWithCurrent(subject, {
        currentPassword: "first long password",
        newPassword: "short",
      }),
    AuthError,
  );
  assert.equal(
    await auth.changePasswordWithCurrent(subject, {
      currentPassword: "first long password",
      newPassword: "second long password",
    }),
    true,
  );
  assert.equal(
    await auth.authenticate("a@example.com", "first long password"),
    null,
  );
  assert.equal(
    await auth.authenticate("a@example.com", "second long password"),
    subject,
  );
  assert.equal(
    await auth.changePasswordWithCurrent("nobody", {
      currentPassword: "second long password",
      newPassword: "password3",
    }),
    false,
  );
});

Deno.test("changePassword (reset flows) sets a new password; unknown subjects answer false", async () => {
  const credentials = new MemoryCredentialStore();
  const auth = new PasswordAuthenticator({ credentials, hasher: fast() });
  const subject =
    ((await auth.register("a@example.com", "first long password")) as {
      subject: string;
    })
      .subject;
  assert.equal(
    await auth.changePassword(subject, "a ninth long password"),
    true,
  );
  assert.equal(
    await auth.authenticate("a@example.com", "a ninth long password"),
    subject,
  );
  assert.equal(
    await auth.changePassword("nobody", "a ninth long password"),
    false,
  );
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
  await auth.register("a@example.com", "first long password");
  await auth.authenticate("a@example.com", "first long password");
  await auth.authenticate("b@example.com", "first long password");
  assert.ok(seen.filter((p) => p !== "first long password").length <= 1); // the dummy's random password
  assert.ok(seen.every((p) => !p.includes("example.com")));
});

Deno.test("a newId that returns a bad subject is refused with INVALID_SUBJECT", async () => {
  const auth = new PasswordAuthenticator({
    credentials: new MemoryCredentialStore(),
    hasher: fast(),
    newId: () => "a|b",
  });
  await assert.rejects(
    () => auth.register("a@example.com", "first long password"),
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
  const r = await auth.register("o@example.com", "correct horse battery");
  if (r.kind !== "created") throw new Error(r.kind);
  assert.equal(
    await auth.changePasswordWithCurrent(r.subject, {
      currentPassword: "correct horse battery",
      newPassword: "second horse battery",
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
  await assert.rejects(() =>
    auth.changePassword(r.subject, "third horse battery")
  );
  assert.deepEqual(events, [`revoke ${r.subject}`], "nothing was written");
  assert.equal(
    await auth.authenticate("o@example.com", "second horse battery"),
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
  await auth.register("k@example.com", "correct horse battery");
  for (const email of ["k@example.com", "nobody@example.com", "not-an-email"]) {
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await auth.login(email, "wrong horse"), {
        kind: "invalid",
      });
    }
    const verifies = calls.verify;
    const held = await auth.login(email, "correct horse battery");
    assert.deepEqual(held, { kind: "throttled", retryAfterSeconds: 60 });
    assert.equal(calls.verify, verifies, "no hash while throttled");
  }
  // From another address the owner signs in, which clears the counts.
  const ok = await auth.login("k@example.com", "correct horse battery", {
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
