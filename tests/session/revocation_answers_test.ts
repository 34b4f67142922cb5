// Issue 16 finding 9 (b, c): a session store that answers anything but a
// strict `false`, and a cut-off that is not a canonical number, give no
// identity (fail closed).
import assert from "node:assert/strict";
import {
  type AuthEvent,
  compose,
  identityMiddleware,
  KVSessionStore,
  MemoryKV,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
  type SessionStore,
} from "../../mod.ts";
import { SessionRegistry } from "../../lib/session/session_registry.ts";
import { Clock, makeManager, SECRET } from "./_helpers.ts";

/** Every answer a broken custom store might give instead of `false`. */
const NOT_FALSE: unknown[] = [undefined, null, 0, "", "false", NaN, {}, 1, []];

/** A store whose `isRevoked` answers whatever `answer` holds. */
function answering(box: { answer: unknown }): SessionStore {
  return {
    isRevoked: () => Promise.resolve(box.answer as boolean),
    revoke: () => Promise.resolve(),
    revokeAll: () => Promise.resolve(),
  };
}

for (const staleness of [undefined, 30]) {
  const mode = staleness === undefined ? "exact" : "revocationStaleness";
  Deno.test(`issue 16 finding 9b (${mode}): only a strict false from SessionStore.isRevoked lets a session through, cold and warm`, async () => {
    for (const bad of NOT_FALSE) {
      const box: { answer: unknown } = { answer: false };
      const sessions = new SessionManager({
        secret: SecretProvider.fromValue(SECRET),
        store: answering(box),
        revocationStaleness: staleness,
      });
      // Cold: a token never seen before.
      box.answer = bad;
      const cold = await sessions.issue("u");
      await assert.rejects(
        () => sessions.resolve(cold),
        (e: unknown) =>
          e instanceof TypeError &&
          /isRevoked must answer true or false/.test(e.message),
        `cold, ${String(bad)}`,
      );
      // Warm: a token verified before, with a store that answered false.
      box.answer = false;
      const warm = await sessions.issue("u");
      assert.equal((await sessions.resolve(warm))?.subject, "u");
      if (staleness !== undefined) continue; // its answer is reused
      box.answer = bad;
      await assert.rejects(
        () => sessions.resolve(warm),
        TypeError,
        `warm, ${String(bad)}`,
      );
    }
  });
}

Deno.test("issue 16 finding 9b: over HTTP, a store answering undefined gives no identity (401) and reports misconfigured", async () => {
  const box: { answer: unknown } = { answer: undefined };
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: answering(box),
  });
  const events: AuthEvent[] = [];
  const app = compose(
    [identityMiddleware(sessions, { onEvent: (e) => events.push(e) })],
    (req) => requireAuthenticated(req) ?? new Response("me"),
  );
  const token = await sessions.issue("alice");
  for (const bad of [undefined, null, 0, ""]) {
    box.answer = bad;
    const res = await app(
      new Request("http://app.test/me", {
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    assert.equal(res.status, 401, String(bad));
    assert.notEqual(await res.text(), "me");
  }
  assert.ok(
    events.some((e) =>
      e.type === "misconfigured" && /isRevoked must answer/.test(e.message)
    ),
  );
});

Deno.test("issue 16 finding 9b: SessionRegistry lists as live only sessions the store answered a strict false for", async () => {
  const clock = new Clock();
  const kv = new MemoryKV({ now: clock.now });
  const box: { answer: unknown } = { answer: false };
  const revocations = answering(box);
  const manager = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: revocations,
    now: clock.now,
  });
  const registry = new SessionRegistry({
    kv,
    manager,
    revocations,
    now: clock.now,
  });
  const token = await manager.issue("u");
  const identity = (await manager.resolve(token))!;
  await registry.add(identity, null);
  assert.equal((await registry.list("u")).length, 1);
  for (const bad of NOT_FALSE) {
    box.answer = bad;
    assert.deepEqual(await registry.list("u"), [], String(bad));
  }
});

Deno.test('issue 16 finding 9c: a revocation cut-off stored as "" (or any non-canonical number) revokes, never reads as 0', async () => {
  const bad = [
    "",
    " ",
    " 5",
    "5 ",
    "+5",
    "-1",
    "1e3",
    "0x10",
    "1.5",
    "00",
    "01",
    "NaN",
    "Infinity",
    "9007199254740993", // beyond 2^53
    "١٢٣", // Arabic-Indic digits
  ];
  for (const cut of bad) {
    const { sessions, kv } = makeManager();
    const token = await sessions.issue("u");
    await kv.put("portcullis:cut:u", cut);
    assert.equal(
      await sessions.resolve(token),
      null,
      `cut-off ${JSON.stringify(cut)}`,
    );
    const store = new KVSessionStore(kv);
    assert.equal(await store.isRevoked("u", "j", 1), true);
    assert.equal(store.peek("u", "j", 1), true, "the synchronous read too");
  }
  // A canonical cut-off still cuts exactly where it says.
  const { sessions, kv, clock } = makeManager();
  const before = await sessions.issue("u");
  await kv.put("portcullis:cut:u", String(clock.ms));
  clock.advance(1);
  const after = await sessions.issue("u");
  assert.equal(await sessions.resolve(before), null);
  assert.equal((await sessions.resolve(after))?.subject, "u");
  await kv.put("portcullis:cut:u", "0");
  assert.equal((await sessions.resolve(before))?.subject, "u");
});

Deno.test("KVSessionStore reads each session's own keys, whatever it saw before", async () => {
  const kv = new MemoryKV();
  const store = new KVSessionStore(kv);
  // Warm: the same session read many times, then revoked.
  for (let i = 0; i < 3; i++) assert.equal(store.peek("u", "j1", 1), false);
  await store.revoke("j1", 60);
  assert.equal(store.peek("u", "j1", 1), true);
  assert.equal(await store.isRevoked("u", "j1", 1), true);
  // The same jti under another subject is read under that subject's key.
  await store.revokeAll("v", 10, 60);
  assert.equal(store.peek("v", "j2", 5), true);
  assert.equal(store.peek("w", "j2", 5), false);
  assert.equal(store.peek("v", "j2", 5), true);
  assert.equal(await store.isRevoked("w", "j2", 5), false);
  // Past the memo's size every session still reads its own keys.
  for (let i = 0; i < 10_000; i++) {
    assert.equal(store.peek(`s${i}`, `k${i}`, 1), false);
  }
  await store.revoke("k9999", 60);
  await store.revokeAll("s3", 10, 60);
  assert.equal(store.peek("s9999", "k9999", 1), true);
  assert.equal(store.peek("s3", "k3", 1), true);
  assert.equal(store.peek("s4", "k4", 1), false);
  assert.equal(store.peek("u", "j1", 1), true);
  // With a prefix of its own.
  const other = new KVSessionStore(kv, { prefix: "other:" });
  assert.equal(other.peek("u", "j1", 1), false);
  await kv.put("other:deny:j1", "1");
  assert.equal(other.peek("u", "j1", 1), true);
});
