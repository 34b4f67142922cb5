/**
 * Backup eligibility (WebAuthn Level 3 §6.1.3, the BE flag) is fixed for a
 * credential's life (outside tester's LOW finding 1 against the passkeys):
 * an assertion whose BE differs from the one stored at registration, either
 * way, is refused (`backup_flags_invalid`) and records nothing (no counter,
 * no use, no backup state). BS may change, and only while BE is set. A
 * passkey stored before the flags were kept (BE not known) records the BE
 * of its next accepted use, and is held to it from then on.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  MemoryPasskeyStore,
  PasskeyAuthenticator,
  type PasskeyRecord,
} from "../../packages/passkeys/mod.ts";
import { FLAGS, SoftAuthenticator } from "../support/soft_authenticator.ts";
import { purposeSigner } from "./_signers.ts";

const ORIGIN = "http://localhost:8000";

function make() {
  const store = new MemoryPasskeyStore();
  const passkeys = new PasskeyAuthenticator({
    rpId: "localhost",
    rpName: "Test",
    origins: [ORIGIN],
    store,
    challenges: store,
    signer: purposeSigner("webauthn-challenge"),
  });
  return { store, passkeys };
}

async function registered(
  passkeys: PasskeyAuthenticator,
  backup: "synced" | "device",
): Promise<{ key: SoftAuthenticator; record: PasskeyRecord }> {
  const key = new SoftAuthenticator(ORIGIN, backup);
  const options = await passkeys.registrationOptions({
    subject: "user_1",
    email: "a@example.com",
  });
  const outcome = await passkeys.register(
    "user_1",
    await key.create(options as never),
    "Laptop",
  );
  assert.equal(outcome.kind, "ok", JSON.stringify(outcome));
  return { key, record: (outcome as { passkey: PasskeyRecord }).passkey };
}

async function signIn(
  passkeys: PasskeyAuthenticator,
  key: SoftAuthenticator,
  flags?: number,
) {
  const options = await passkeys.authenticationOptions();
  return await passkeys.authenticate(
    await key.get(options, flags === undefined ? {} : { flags }),
  );
}

Deno.test("authenticate() refuses an assertion that claims BE for a passkey registered without it, and records nothing", async () => {
  const { store, passkeys } = make();
  const { key, record } = await registered(passkeys, "device");
  assert.equal(record.backupEligible, false);
  const before = await store.find(record.credentialId);
  for (
    const flags of [
      FLAGS.UP | FLAGS.UV | FLAGS.BE,
      FLAGS.UP | FLAGS.UV | FLAGS.BE | FLAGS.BS,
    ]
  ) {
    assert.deepEqual(await signIn(passkeys, key, flags), {
      kind: "refused",
      reason: "backup_flags_invalid",
    });
    // Not the counter, not the use, not the backup state.
    assert.deepEqual(await store.find(record.credentialId), before);
  }
  // Its own flags still sign in, and move the counter.
  const ok = await signIn(passkeys, key);
  assert.equal(ok.kind, "ok");
  assert.ok((await store.find(record.credentialId))!.counter > before!.counter);
});

Deno.test("authenticate() lets BS change while BE stays set, and refuses a synced passkey's assertion without BE", async () => {
  const { store, passkeys } = make();
  const { key, record } = await registered(passkeys, "synced");
  assert.equal(record.backupEligible, true);
  assert.equal(record.backedUp, true);
  assert.equal(
    (await signIn(passkeys, key, FLAGS.UP | FLAGS.UV | FLAGS.BE)).kind,
    "ok",
  );
  assert.equal((await store.find(record.credentialId))!.backedUp, false);
  assert.equal((await signIn(passkeys, key)).kind, "ok");
  assert.equal((await store.find(record.credentialId))!.backedUp, true);
  const before = await store.find(record.credentialId);
  assert.deepEqual(await signIn(passkeys, key, FLAGS.UP | FLAGS.UV), {
    kind: "refused",
    reason: "backup_flags_invalid",
  });
  assert.deepEqual(await store.find(record.credentialId), before);
});

Deno.test("a passkey whose BE is not known (stored before the flags were kept) records the BE of its next use and is held to it", async () => {
  const { store, passkeys } = make();
  const { key, record } = await registered(passkeys, "synced");
  const legacy: PasskeyRecord = { ...record };
  delete legacy.backupEligible;
  legacy.backedUp = false;
  await store.remove("user_1", record.credentialId);
  assert.equal(await store.add(legacy), true);
  assert.equal(
    (await store.find(record.credentialId))!.backupEligible,
    undefined,
  );
  assert.equal((await signIn(passkeys, key)).kind, "ok");
  const learnt = await store.find(record.credentialId);
  assert.equal(learnt!.backupEligible, true);
  assert.equal(learnt!.backedUp, true);
  assert.deepEqual(await signIn(passkeys, key, FLAGS.UP | FLAGS.UV), {
    kind: "refused",
    reason: "backup_flags_invalid",
  });
});
