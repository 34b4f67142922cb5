import { sessionParts } from "../../lib/session/session_manager.ts";
/**
 * SessionRegistry: a subject's live sessions over the key-value store, with
 * revocation through the denylist and no store round trip on an ordinary
 * request.
 */
import assert from "node:assert/strict";
import {
  type KeyValueStore,
  KVSessionStore,
  MemoryKV,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import type { PutOptions } from "@portcullis/auth/sessions";
import { SessionRegistry } from "@portcullis/auth/session-registry";
import { SECRET } from "./_helpers.ts";

class CountingKV implements KeyValueStore {
  calls: string[] = [];
  constructor(readonly inner: KeyValueStore) {}
  getMany(keys: readonly string[]) {
    this.calls.push("getMany");
    return this.inner.getMany(keys);
  }
  put(key: string, value: string, options?: PutOptions) {
    this.calls.push("put");
    return this.inner.put(key, value, options);
  }
  delete(key: string) {
    this.calls.push("delete");
    return this.inner.delete(key);
  }
}

function setup() {
  let t = Date.UTC(2026, 0, 1);
  const now = () => t;
  const memory = new MemoryKV({ now });
  const kv = new CountingKV(memory);
  const revocations = new KVSessionStore(memory);
  const manager = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: revocations,
    now,
  });
  const registry = new SessionRegistry({
    kv,
    manager,
    revocations,
    now,
  });
  return {
    kv,
    manager,
    registry,
    advance: (ms: number) => void (t += ms),
    now,
  };
}

Deno.test("SessionRegistry lists a subject's sessions newest first with id, times and user agent", async () => {
  const { manager, registry, advance, now } = setup();
  const a = await sessionParts(manager).issue("u1");
  await registry.add(a.identity, "Firefox\r\n");
  advance(1000);
  const b = await sessionParts(manager).issue("u1");
  await registry.add(b.identity, null);
  const other = await sessionParts(manager).issue("u2");
  await registry.add(other.identity, "Curl");
  const list = await registry.list("u1");
  assert.deepEqual(list, [
    {
      id: b.identity.jti,
      createdAt: now(),
      lastSeenAt: now(),
      userAgent: null,
      expiresAt: b.identity.expiresAt,
      binding: null,
    },
    {
      id: a.identity.jti,
      createdAt: now() - 1000,
      lastSeenAt: now() - 1000,
      userAgent: "Firefox",
      expiresAt: a.identity.expiresAt,
      binding: null,
    },
  ]);
  assert.deepEqual((await registry.list("u2")).map((s) => s.id), [
    other.identity.jti,
  ]);
  assert.deepEqual(await registry.list("nobody"), []);
});

Deno.test("SessionRegistry.revoke() ends that session only; another subject's or an unknown id answers false", async () => {
  const { manager, registry } = setup();
  const a = await sessionParts(manager).issue("u1");
  const b = await sessionParts(manager).issue("u1");
  const c = await sessionParts(manager).issue("u2");
  for (const s of [a, b, c]) await registry.add(s.identity, null);
  assert.equal(await registry.revoke("u1", c.identity.jti), false);
  assert.ok(await manager.resolve(c.token), "u2's session untouched");
  assert.equal(await registry.revoke("u1", "x".repeat(30)), false);
  assert.equal(await registry.revoke("u1", a.identity.jti), true);
  assert.equal(await manager.resolve(a.token), null);
  assert.ok(await manager.resolve(b.token));
  assert.deepEqual((await registry.list("u1")).map((s) => s.id), [
    b.identity.jti,
  ]);
  assert.equal(await registry.revoke("u1", a.identity.jti), false);
});

Deno.test("SessionRegistry.list() leaves out sessions the denylist refuses and sessions that expired", async () => {
  const { manager, registry, advance } = setup();
  const a = await sessionParts(manager).issue("u1");
  const b = await sessionParts(manager).issue("u1");
  await registry.add(a.identity, null);
  await registry.add(b.identity, null);
  await manager.revoke(a.token); // a logout elsewhere
  assert.deepEqual((await registry.list("u1")).map((s) => s.id), [
    b.identity.jti,
  ]);
  await manager.revokeAll("u1"); // sign out everywhere
  assert.deepEqual(await registry.list("u1"), []);
  const c = await sessionParts(manager).issue("u1");
  await registry.add(c.identity, null);
  assert.equal((await registry.list("u1")).length, 1);
  advance(manager.lifetimeSeconds * 1000);
  assert.deepEqual(await registry.list("u1"), []);
});

Deno.test("SessionRegistry.seen() adds no store round trip to an ordinary request: one deferred write per session an hour", async () => {
  const { kv, manager, registry, advance, now } = setup();
  const s = await sessionParts(manager).issue("u1");
  await registry.add(s.identity, "Firefox");
  kv.calls.length = 0;
  for (let i = 0; i < 1000; i++) {
    assert.equal(registry.seen(s.identity, "Firefox"), null);
    advance(3);
  }
  assert.deepEqual(kv.calls, [], "no store call within the hour");
  advance(3600 * 1000);
  const write = registry.seen(s.identity, "Firefox");
  assert.ok(write instanceof Promise, "one write, started");
  assert.equal(registry.seen(s.identity, "Firefox"), null);
  assert.equal(await write, true);
  assert.deepEqual(kv.calls, ["getMany", "put"]);
  const [info] = await registry.list("u1");
  assert.equal(info.lastSeenAt, now());
  assert.equal(info.userAgent, "Firefox");
});

Deno.test("SessionRegistry.seen() puts back an entry the list lost", async () => {
  const { manager, registry } = setup();
  const s = await sessionParts(manager).issue("u1");
  assert.equal(await registry.seen(s.identity, "Agent"), true);
  const [info] = await registry.list("u1");
  assert.equal(info.id, s.identity.jti);
  assert.equal(info.userAgent, "Agent");
});

Deno.test("SessionRegistry: misuse throws clear errors", () => {
  const { kv, manager } = setup();
  assert.throws(() => new SessionRegistry({} as never), TypeError);
  assert.throws(
    () =>
      new SessionRegistry({
        kv,
        manager,
        revocations: new KVSessionStore(kv),
        touchEverySeconds: 0,
      }),
    RangeError,
  );
});
