import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import {
  deriveSecretKey,
  MemoryTotpStore,
  TotpAuthenticator,
  type TotpStore,
} from "../../packages/totp/mod.ts";
import { SecretBox } from "../../packages/totp/secret_box.ts";
import { SecretProvider, SessionManager } from "../../mod.ts";
import { purposeSigner, TEST_SECRET } from "./_signers.ts";

const vectors = JSON.parse(
  await Deno.readTextFile(
    new URL("../vectors/rfc6238_totp.json", import.meta.url),
  ),
);

async function secretKey(): Promise<CryptoKey> {
  return deriveSecretKey((await TEST_SECRET.keys("totp-secret")).current.key);
}

async function setup(start = Date.UTC(2026, 0, 1)) {
  let t = start;
  const store = new MemoryTotpStore();
  const key = await secretKey();
  const totp = new TotpAuthenticator({
    store,
    issuer: "Portcullis Test",
    secretKeys: [key],
    pending: purposeSigner("totp-pending"),
    now: () => t,
  });
  return {
    store,
    totp,
    key,
    advance: (ms: number) => {
      t += ms;
    },
    at: () => t,
  };
}

function codeAt(base32: string, ms: number): string {
  return new TOTP({ secret: Secret.fromBase32(base32), digits: 6 }).generate({
    timestamp: ms,
  });
}

/** Enrols user_1 with a known secret (the RFC's SHA-1 key). */
async function enrolKnown(
  store: TotpStore,
  key: CryptoKey,
  totp: TotpAuthenticator,
  now: number,
): Promise<string> {
  const base32 = Secret.fromUTF8(vectors.secrets.SHA1).base32;
  await store.savePending({
    subject: "user_1",
    secret: await new SecretBox([key]).seal("user_1", base32),
    enabledAt: 0,
    lastStep: 0,
    createdAt: 0,
  });
  assert.ok(await totp.confirmEnrolment("user_1", codeAt(base32, now)));
  return base32;
}

Deno.test("otpauth reproduces every RFC 6238 Appendix B vector (SHA-1, SHA-256, SHA-512)", () => {
  for (const v of vectors.vectors) {
    for (const algorithm of ["SHA1", "SHA256", "SHA512"]) {
      const totp = new TOTP({
        algorithm,
        digits: 8,
        period: 30,
        secret: Secret.fromUTF8(vectors.secrets[algorithm]),
      });
      assert.equal(
        totp.generate({ timestamp: v.time * 1000 }),
        v[algorithm],
        `${algorithm} at ${v.time}`,
      );
      assert.equal(
        TOTP.counter({ period: 30, timestamp: v.time * 1000 }),
        parseInt(v.step, 16),
      );
    }
  }
});

Deno.test("verify() accepts the six-digit form of the RFC 6238 SHA-1 vectors at their times", async () => {
  for (const v of vectors.vectors.slice(1)) {
    const { store, totp, key } = await setup(v.time * 1000 - 90_000);
    await enrolKnown(store, key, totp, v.time * 1000 - 90_000);
    // Same store and key, clock at the vector's time.
    const atVector = new TotpAuthenticator({
      store,
      issuer: "x",
      secretKeys: [key],
      pending: purposeSigner("totp-pending"),
      now: () => v.time * 1000,
    });
    assert.equal(await atVector.verify("user_1", v.SHA1.slice(2)), "totp");
  }
});

Deno.test("startEnrolment() answers a secret, an otpauth URI and an SVG QR code, and stores the secret sealed", async () => {
  const { store, totp } = await setup();
  const e = await totp.startEnrolment("user_1", "a@example.com");
  assert.ok(e);
  assert.match(e.secret, /^[A-Z2-7]{32}$/);
  assert.match(
    e.uri,
    /^otpauth:\/\/totp\/Portcullis%20Test:a%40example\.com\?/,
  );
  assert.match(e.uri, new RegExp(`secret=${e.secret}`));
  assert.match(e.qrSvg, /^<svg [^>]*viewBox/);
  assert.doesNotMatch(e.qrSvg, /<script|href=|on[a-z]+=/i);
  const record = await store.find("user_1");
  assert.ok(record && record.enabledAt === 0);
  assert.ok(!record.secret.includes(e.secret));
  assert.equal(await totp.isEnabled("user_1"), false);
});

Deno.test("confirmEnrolment() refuses a wrong code and turns TOTP on with a right one, with ten recovery codes", async () => {
  const { totp, at } = await setup();
  const e = (await totp.startEnrolment("user_1", "a@example.com"))!;
  assert.equal(await totp.confirmEnrolment("user_1", "000000"), null);
  assert.equal(await totp.isEnabled("user_1"), false);
  const codes = await totp.confirmEnrolment("user_1", codeAt(e.secret, at()));
  assert.ok(codes);
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  for (const c of codes) assert.match(c, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
  assert.equal(await totp.isEnabled("user_1"), true);
  assert.equal(await totp.recoveryCodesLeft("user_1"), 10);
  assert.equal(await totp.startEnrolment("user_1", "a@example.com"), null);
});

Deno.test("verify() accepts a time step once: the same code replayed is refused (no replay)", async () => {
  const { totp, at, advance } = await setup();
  const e = (await totp.startEnrolment("user_1", "a@example.com"))!;
  await totp.confirmEnrolment("user_1", codeAt(e.secret, at()));
  advance(30_000);
  const code = codeAt(e.secret, at());
  assert.equal(await totp.verify("user_1", code), "totp");
  assert.equal(await totp.verify("user_1", code), null);
  advance(30_000);
  assert.equal(await totp.verify("user_1", codeAt(e.secret, at())), "totp");
});

Deno.test("verify() allows ±1 step of skew and refuses ±2 steps", async () => {
  const { totp, at, advance } = await setup();
  const e = (await totp.startEnrolment("user_1", "a@example.com"))!;
  await totp.confirmEnrolment("user_1", codeAt(e.secret, at()));
  advance(10 * 30_000);
  assert.equal(
    await totp.verify("user_1", codeAt(e.secret, at() - 60_000)),
    null,
  );
  assert.equal(
    await totp.verify("user_1", codeAt(e.secret, at() - 30_000)),
    "totp",
  );
  assert.equal(
    await totp.verify("user_1", codeAt(e.secret, at() + 60_000)),
    null,
  );
  assert.equal(
    await totp.verify("user_1", codeAt(e.secret, at() + 30_000)),
    "totp",
  );
  // Older than the last accepted step: refused even inside the window.
  assert.equal(await totp.verify("user_1", codeAt(e.secret, at())), null);
});

Deno.test("verify() refuses wrong codes, garbage and users without TOTP", async () => {
  const { totp, at } = await setup();
  const e = (await totp.startEnrolment("user_1", "a@example.com"))!;
  // Pending enrolment: codes do not pass verify().
  assert.equal(await totp.verify("user_1", codeAt(e.secret, at())), null);
  await totp.confirmEnrolment("user_1", codeAt(e.secret, at()));
  for (const bad of ["", "12345", "1234567", "abcdef", "x".repeat(10_000)]) {
    assert.equal(await totp.verify("user_1", bad), null, bad);
  }
  assert.equal(await totp.verify("nobody", "123456"), null);
});

Deno.test("a recovery code passes once, in any case and with or without the dash", async () => {
  const { totp, at } = await setup();
  const e = (await totp.startEnrolment("user_1", "a@example.com"))!;
  const codes =
    (await totp.confirmEnrolment("user_1", codeAt(e.secret, at())))!;
  assert.equal(await totp.verify("user_1", codes[0]), "recovery");
  assert.equal(await totp.verify("user_1", codes[0]), null);
  assert.equal(
    await totp.verify("user_1", codes[1].toLowerCase().replace("-", "")),
    "recovery",
  );
  assert.equal(await totp.recoveryCodesLeft("user_1"), 8);
  const fresh = await totp.regenerateRecoveryCodes("user_1");
  assert.equal(await totp.verify("user_1", codes[2]), null);
  assert.equal(await totp.verify("user_1", fresh[2]), "recovery");
});

Deno.test("a sealed secret copied onto another user does not open", async () => {
  const { store, totp, at } = await setup();
  const e = (await totp.startEnrolment("user_1", "a@example.com"))!;
  const sealed = (await store.find("user_1"))!.secret;
  await store.savePending({
    subject: "user_2",
    secret: sealed,
    enabledAt: 0,
    lastStep: 0,
    createdAt: 0,
  });
  assert.equal(
    await totp.confirmEnrolment("user_2", codeAt(e.secret, at())),
    null,
  );
});

Deno.test("disable() needs a valid code", async () => {
  const { totp, at, advance } = await setup();
  const e = (await totp.startEnrolment("user_1", "a@example.com"))!;
  await totp.confirmEnrolment("user_1", codeAt(e.secret, at()));
  advance(30_000);
  assert.equal(await totp.disable("user_1", "000000"), false);
  assert.equal(await totp.isEnabled("user_1"), true);
  assert.equal(await totp.disable("user_1", codeAt(e.secret, at())), true);
  assert.equal(await totp.isEnabled("user_1"), false);
  assert.equal(await totp.recoveryCodesLeft("user_1"), 0);
});

Deno.test("readPending() answers the subject until the value expires, and refuses tampered values", async () => {
  const { store, totp, key, at, advance } = await setup();
  await enrolKnown(store, key, totp, at());
  const value = await totp.issuePending("user_1", "/account");
  const read = await totp.readPending(value);
  assert.deepEqual(read, {
    subject: "user_1",
    next: "/account",
    fingerprint: read?.fingerprint,
    boundTo: null,
  });
  assert.match(read!.fingerprint, /^[A-Za-z0-9_-]{22}$/);
  const parts = value.split(".");
  const forged = [parts[0], parts[1], parts[2].slice(0, -2) + "AA", parts[3]]
    .join(".");
  assert.equal(await totp.readPending(forged), null);
  assert.equal(await totp.readPending(""), null);
  assert.equal(await totp.readPending("x".repeat(5000)), null);
  advance(301_000);
  assert.equal(await totp.readPending(value), null);
});

Deno.test("a pending value tied to a key (boundTo) opens only for the same key, and one tied to none only without a key", async () => {
  const { store, totp, key, at } = await setup();
  await enrolKnown(store, key, totp, at());
  const mine = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs";
  const theirs = "kbKjnDWRbxB0SKQvL3qFmNyE2zXwDNkx9hO_GbE5Wwc";
  const bound = await totp.issuePending("user_1", "/", { boundTo: mine });
  assert.equal(
    (await totp.readPending(bound, { boundTo: mine }))?.boundTo,
    mine,
  );
  assert.equal(await totp.readPending(bound), null, "without the key");
  assert.equal(await totp.readPending(bound, { boundTo: null }), null);
  assert.equal(await totp.readPending(bound, { boundTo: theirs }), null);
  const plain = await totp.issuePending("user_1", "/", { boundTo: null });
  assert.ok(await totp.readPending(plain));
  assert.equal(await totp.readPending(plain, { boundTo: mine }), null);
  await assert.rejects(
    totp.issuePending("user_1", "/", { boundTo: "" }),
    TypeError,
  );
  await assert.rejects(
    totp.issuePending("user_1", "/", { boundTo: 5 as unknown as string }),
    TypeError,
  );
});

Deno.test("a pending value is no session, and a session token is no pending value (separate purposes)", async () => {
  const { store, totp, key, at } = await setup();
  await enrolKnown(store, key, totp, at());
  const sessions = new SessionManager({ secret: TEST_SECRET, store: null });
  const pending = await totp.issuePending("user_1");
  assert.equal(await sessions.resolve(pending), null);
  const session = await sessions.issue("user_1");
  assert.equal(await totp.readPending(session), null);
  // A value signed for this purpose under another secret is refused too.
  const other = new TotpAuthenticator({
    store,
    issuer: "x",
    secretKeys: [await secretKey()],
    pending: purposeSigner(
      "totp-pending",
      SecretProvider.fromValue("tvccL3/XxmBNHfGPRXHKe5hK4A6fcsL7YVDV5967l4M="),
    ),
  });
  assert.equal(
    await totp.readPending(await other.issuePending("user_1")),
    null,
  );
});

Deno.test("the constructor refuses a missing issuer or a key that is not AES-GCM", async () => {
  const hmac = (await TEST_SECRET.keys("x")).current.key;
  const base = {
    store: new MemoryTotpStore(),
    pending: purposeSigner("totp-pending"),
  };
  assert.throws(
    () => new TotpAuthenticator({ ...base, issuer: "", secretKeys: [] }),
    TypeError,
  );
  assert.throws(
    () => new TotpAuthenticator({ ...base, issuer: "x", secretKeys: [hmac] }),
    /AES-GCM/,
  );
});

/** A store that counts the writes it is asked for. */
function countingWrites(inner: TotpStore) {
  const writes: string[] = [];
  const store: TotpStore = {
    find: (s) => inner.find(s),
    savePending: (r) => (writes.push("savePending"), inner.savePending(r)),
    enable: (s, x, st, a) => (writes.push("enable"), inner.enable(s, x, st, a)),
    useStep: (s, st) => (writes.push("useStep"), inner.useStep(s, st)),
    remove: (s) => (writes.push("remove"), inner.remove(s)),
    replaceRecoveryCodes: (s, h, a) => (
      writes.push("replaceRecoveryCodes"), inner.replaceRecoveryCodes(s, h, a)
    ),
    consumeRecoveryCode: (s, h) => (
      writes.push("consumeRecoveryCode"), inner.consumeRecoveryCode(s, h)
    ),
    countRecoveryCodes: (s) => inner.countRecoveryCodes(s),
  };
  return { store, writes };
}

async function boundSetup() {
  let t = Date.UTC(2026, 0, 1);
  const memory = new MemoryTotpStore();
  const { store, writes } = countingWrites(memory);
  const key = await secretKey();
  const account: { passwordHash: string | null } = { passwordHash: "$h$1" };
  const totp = new TotpAuthenticator({
    store,
    issuer: "Portcullis Test",
    secretKeys: [key],
    pending: purposeSigner("totp-pending"),
    accountState: (subject) =>
      subject === "user_1" ? account.passwordHash : null,
    now: () => t,
  });
  const base32 = await enrolKnown(memory, key, totp, t);
  const recovery = await totp.regenerateRecoveryCodes("user_1");
  writes.length = 0;
  return {
    totp,
    writes,
    account,
    base32,
    recovery,
    advance: (ms: number) => {
      t += ms;
    },
    at: () => t,
  };
}

Deno.test("issue 16 finding 4: a pending value serves one successful second step (TOTP code); issuing and reading it write nothing", async () => {
  const { totp, writes, base32, advance, at } = await boundSetup();
  advance(60_000);
  const value = await totp.issuePending("user_1", "/account");
  const spare = await totp.issuePending("user_1", "/");
  const pending = await totp.readPending(value);
  assert.equal(pending?.subject, "user_1");
  assert.deepEqual(writes, [], "no store write to issue or read");
  // Failed attempts do not end it.
  assert.equal(await totp.verify("user_1", "000000"), null);
  assert.ok(await totp.readPending(value));
  assert.equal(await totp.verify("user_1", codeAt(base32, at())), "totp");
  assert.deepEqual(writes, ["useStep"], "one write: the time step used");
  // The same value again, even with a later valid code, does not open.
  advance(30_000);
  assert.equal(await totp.readPending(value), null);
  assert.equal(await totp.readPending(spare), null, "nor any issued before");
  // A value issued now works.
  const fresh = await totp.readPending(await totp.issuePending("user_1"));
  assert.ok(fresh);
  assert.notEqual(fresh.fingerprint, pending!.fingerprint);
});

Deno.test("issue 16 finding 4: a pending value serves one successful second step (recovery code)", async () => {
  const { totp, recovery, advance } = await boundSetup();
  advance(60_000);
  const value = await totp.issuePending("user_1");
  assert.ok(await totp.readPending(value));
  assert.equal(await totp.verify("user_1", recovery[0]), "recovery");
  assert.equal(await totp.readPending(value), null);
});

Deno.test("a recovery code spends no time step: the code of the same or the next step still passes", async () => {
  const { totp, recovery, base32, advance, at } = await boundSetup();
  // The enrolment used the current step; the sign-ins come in the next.
  advance(30_000);
  const value = await totp.issuePending("user_1");
  assert.equal(await totp.verify("user_1", recovery[0]), "recovery");
  assert.equal(await totp.readPending(value), null, "the value served");
  const next = await totp.readPending(await totp.issuePending("user_1"));
  assert.ok(next);
  assert.equal(await totp.verify("user_1", codeAt(base32, at())), "totp");
  assert.equal(await totp.readPending(value), null);
});

Deno.test("issue 16 finding 4: a pending value is bound to the credentials: a password change or reset, TOTP off or enrolled anew end it", async () => {
  const { totp, account, base32, advance, at } = await boundSetup();
  advance(60_000);
  // Password changed (or reset) between the two steps.
  let value = await totp.issuePending("user_1");
  account.passwordHash = "$h$2";
  assert.equal(await totp.readPending(value), null);
  // The account is gone.
  value = await totp.issuePending("user_1");
  account.passwordHash = null;
  assert.equal(await totp.readPending(value), null);
  account.passwordHash = "$h$2";
  // TOTP turned off, then on again with a new secret.
  value = await totp.issuePending("user_1");
  assert.ok(await totp.readPending(value));
  assert.equal(await totp.disable("user_1", codeAt(base32, at())), true);
  assert.equal(await totp.readPending(value), null);
  const e = (await totp.startEnrolment("user_1", "a@example.com"))!;
  advance(30_000);
  assert.ok(await totp.confirmEnrolment("user_1", codeAt(e.secret, at())));
  assert.equal(await totp.readPending(value), null);
  // A value for a user without TOTP never opens.
  assert.equal(await totp.readPending(await totp.issuePending("user_2")), null);
});
