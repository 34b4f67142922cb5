/**
 * The shared suites the sign-in stores pass: every `TotpStore`,
 * `IdentityStore` and `PasskeyStore`, in memory and on each SQL dialect.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { TotpStore } from "../../packages/totp/mod.ts";
import type { IdentityStore } from "../../packages/oidc/mod.ts";
import type { PasskeyStore } from "../../packages/passkeys/mod.ts";

/** Registers the TOTP store suite. */
export function testTotpStore(
  name: string,
  make: () => Promise<TotpStore>,
  options: { available?: () => Promise<boolean> } = {},
): void {
  const test = (title: string, fn: (s: TotpStore) => Promise<void>) =>
    Deno.test(`${name}: ${title}`, async () => {
      if (options.available && !(await options.available())) return;
      await fn(await make());
    });
  const id = () => `u_${crypto.randomUUID()}`;
  const pending = (subject: string, secret = "sealed-1") => ({
    subject,
    secret,
    enabledAt: 0,
    lastStep: 0,
    createdAt: 5,
  });

  test("savePending() replaces a pending enrolment but never an enabled one", async (s) => {
    const u = id();
    assert.equal(await s.find(u), null);
    assert.equal(await s.savePending(pending(u, "a")), true);
    assert.equal(await s.savePending(pending(u, "b")), true);
    assert.equal((await s.find(u))?.secret, "b");
    assert.equal(await s.enable(u, "a", 10, 99), false, "stale secret");
    assert.equal(await s.enable(u, "b", 10, 99), true);
    assert.equal(await s.enable(u, "b", 11, 99), false, "already on");
    assert.equal(await s.savePending(pending(u, "c")), false);
    const r = await s.find(u);
    assert.deepEqual(r, {
      subject: u,
      secret: "b",
      enabledAt: 99,
      lastStep: 10,
      createdAt: 5,
    });
  });

  test("useStep() accepts only steps newer than the last, and only once under concurrency", async (s) => {
    const u = id();
    await s.savePending(pending(u));
    assert.equal(await s.useStep(u, 20), false, "pending enrolment");
    await s.enable(u, "sealed-1", 10, 1);
    assert.equal(await s.useStep(u, 10), false);
    assert.equal(await s.useStep(u, 9), false);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => s.useStep(u, 11)),
    );
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal((await s.find(u))?.lastStep, 11);
    assert.equal(await s.useStep("nobody", 50), false);
  });

  test("recovery codes: replaced as a set, each consumed once, even concurrently", async (s) => {
    const u = id();
    const other = id();
    await s.replaceRecoveryCodes(u, ["h1", "h2", "h3"], 1);
    await s.replaceRecoveryCodes(other, ["h1"], 1);
    assert.equal(await s.countRecoveryCodes(u), 3);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => s.consumeRecoveryCode(u, "h2")),
    );
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal(await s.consumeRecoveryCode(u, "zz"), false);
    assert.equal(await s.countRecoveryCodes(u), 2);
    await s.replaceRecoveryCodes(u, ["h9"], 2);
    assert.equal(await s.consumeRecoveryCode(u, "h1"), false);
    assert.equal(await s.countRecoveryCodes(u), 1);
    assert.equal(await s.countRecoveryCodes(other), 1, "other user untouched");
  });

  test("remove() drops the enrolment and the codes of that user only", async (s) => {
    const u = id();
    const other = id();
    for (const x of [u, other]) {
      await s.savePending(pending(x));
      await s.enable(x, "sealed-1", 1, 1);
      await s.replaceRecoveryCodes(x, ["h"], 1);
    }
    await s.remove(u);
    assert.equal(await s.find(u), null);
    assert.equal(await s.countRecoveryCodes(u), 0);
    assert.ok(await s.find(other));
    assert.equal(await s.countRecoveryCodes(other), 1);
  });
}

/** Registers the OpenID Connect identity store suite. */
export function testIdentityStore(
  name: string,
  make: () => Promise<IdentityStore>,
  options: { available?: () => Promise<boolean> } = {},
): void {
  const test = (title: string, fn: (s: IdentityStore) => Promise<void>) =>
    Deno.test(`${name}: ${title}`, async () => {
      if (options.available && !(await options.available())) return;
      await fn(await make());
    });
  const id = () => `u_${crypto.randomUUID()}`;

  test("link() makes a link once; find() and listFor() read it back", async (s) => {
    const u = id();
    const sub = `sub-${crypto.randomUUID()}`;
    const record = {
      provider: "op",
      providerSubject: sub,
      subject: u,
      email: "a@example.com",
      createdAt: 7,
    };
    assert.equal(await s.find("op", sub), null);
    assert.equal(await s.link(record), true);
    assert.deepEqual(await s.find("op", sub), record);
    assert.equal(await s.find("other-op", sub), null);
    assert.equal(await s.link({ ...record, subject: id() }), false);
    assert.equal((await s.find("op", sub))?.subject, u);
    await s.link({ ...record, provider: "other-op", createdAt: 8 });
    assert.deepEqual(
      (await s.listFor(u)).map((r) => r.provider),
      ["op", "other-op"],
    );
  });

  test("concurrent links of one provider user: exactly one wins", async (s) => {
    const sub = `sub-${crypto.randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        s.link({
          provider: "op",
          providerSubject: sub,
          subject: id(),
          email: "a@example.com",
          createdAt: 1,
        })),
    );
    assert.equal(results.filter(Boolean).length, 1);
  });

  test("unlink() removes only the user's own link", async (s) => {
    const u = id();
    const sub = `sub-${crypto.randomUUID()}`;
    await s.link({
      provider: "op",
      providerSubject: sub,
      subject: u,
      email: "a@example.com",
      createdAt: 1,
    });
    assert.equal(await s.unlink(id(), "op", sub), false);
    assert.ok(await s.find("op", sub));
    assert.equal(await s.unlink(u, "op", sub), true);
    assert.equal(await s.find("op", sub), null);
  });
}

/** Registers the passkey store suite. */
export function testPasskeyStore(
  name: string,
  make: () => Promise<PasskeyStore>,
  options: { available?: () => Promise<boolean> } = {},
): void {
  const test = (title: string, fn: (s: PasskeyStore) => Promise<void>) =>
    Deno.test(`${name}: ${title}`, async () => {
      if (options.available && !(await options.available())) return;
      await fn(await make());
    });
  const record = (subject: string, extra = {}) => ({
    credentialId: `cred-${crypto.randomUUID()}`,
    subject,
    publicKey: "pQECAyYgASFYIA",
    counter: 0,
    transports: ["internal", "hybrid"],
    name: "Laptop",
    createdAt: 5,
    lastUsedAt: 0,
    backupEligible: false,
    backedUp: false,
    ...extra,
  });

  test("add() stores a passkey once; find() and listFor() read it back", async (s) => {
    const u = `u_${crypto.randomUUID()}`;
    const a = record(u);
    assert.equal(await s.add(a), true);
    assert.equal(await s.add({ ...a, subject: "someone-else" }), false);
    assert.deepEqual(await s.find(a.credentialId), a);
    const b = record(u, { createdAt: 6, transports: [] });
    await s.add(b);
    assert.deepEqual(await s.listFor(u), [a, b]);
    assert.equal(await s.find("missing"), null);
  });

  test("updateCounter() is a compare-and-set: one of several concurrent moves wins", async (s) => {
    const a = record(`u_${crypto.randomUUID()}`, { counter: 3 });
    await s.add(a);
    assert.equal(await s.updateCounter(a.credentialId, 2, 9, 10), false);
    const results = await Promise.all(
      Array.from(
        { length: 6 },
        () => s.updateCounter(a.credentialId, 3, 4, 11),
      ),
    );
    assert.equal(results.filter(Boolean).length, 1);
    const after = await s.find(a.credentialId);
    assert.equal(after?.counter, 4);
    assert.equal(after?.lastUsedAt, 11);
  });

  test("the backup flags (BE, BS) are kept; a use records its BS, and a use that names none keeps it", async (s) => {
    const a = record(`u_${crypto.randomUUID()}`, {
      backupEligible: true,
      backedUp: false,
    });
    await s.add(a);
    assert.deepEqual(await s.find(a.credentialId), a);
    assert.equal(await s.updateCounter(a.credentialId, 0, 1, 12, true), true);
    const synced = await s.find(a.credentialId);
    assert.equal(synced?.backupEligible, true);
    assert.equal(synced?.backedUp, true);
    assert.equal(await s.updateCounter(a.credentialId, 1, 2, 13), true);
    assert.equal((await s.find(a.credentialId))?.backedUp, true);
  });

  test("updateCounter() records BE only for a passkey whose BE is not known, never over a known one", async (s) => {
    const known = record(`u_${crypto.randomUUID()}`, { backupEligible: false });
    await s.add(known);
    assert.equal(
      await s.updateCounter(known.credentialId, 0, 1, 12, false, true),
      true,
    );
    assert.equal((await s.find(known.credentialId))?.backupEligible, false);
    const legacy: Record<string, unknown> = record(`u_${crypto.randomUUID()}`);
    delete legacy.backupEligible;
    await s.add(legacy as ReturnType<typeof record>);
    const before = await s.find(legacy.credentialId as string);
    assert.equal(before?.backupEligible, undefined);
    assert.equal(
      await s.updateCounter(
        legacy.credentialId as string,
        0,
        1,
        12,
        true,
        true,
      ),
      true,
    );
    assert.equal(
      (await s.find(legacy.credentialId as string))?.backupEligible,
      true,
    );
  });

  test("rename() and remove() act only on the owner's passkey", async (s) => {
    const u = `u_${crypto.randomUUID()}`;
    const a = record(u);
    await s.add(a);
    assert.equal(await s.rename("intruder", a.credentialId, "x"), false);
    assert.equal(await s.rename(u, a.credentialId, "Phone"), true);
    assert.equal((await s.find(a.credentialId))?.name, "Phone");
    assert.equal(await s.remove("intruder", a.credentialId), false);
    assert.equal(await s.remove(u, a.credentialId), true);
    assert.equal(await s.find(a.credentialId), null);
  });
}
