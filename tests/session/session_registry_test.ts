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
import { createClient } from "@libsql/client";
import { LibsqlKV } from "../../stores/libsql_kv/mod.ts";
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
  const a = await manager.issueSession("u1");
  await registry.add(a.identity, "Firefox\r\n");
  advance(1000);
  const b = await manager.issueSession("u1");
  await registry.add(b.identity, null);
  const other = await manager.issueSession("u2");
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
      actor: null,
    },
    {
      id: a.identity.jti,
      createdAt: now() - 1000,
      lastSeenAt: now() - 1000,
      userAgent: "Firefox",
      expiresAt: a.identity.expiresAt,
      binding: null,
      actor: null,
    },
  ]);
  assert.deepEqual((await registry.list("u2")).map((s) => s.id), [
    other.identity.jti,
  ]);
  assert.deepEqual(await registry.list("nobody"), []);
});

Deno.test("SessionRegistry.revoke() ends that session only; another subject's or an unknown id answers false", async () => {
  const { manager, registry } = setup();
  const a = await manager.issueSession("u1");
  const b = await manager.issueSession("u1");
  const c = await manager.issueSession("u2");
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
  const a = await manager.issueSession("u1");
  const b = await manager.issueSession("u1");
  await registry.add(a.identity, null);
  await registry.add(b.identity, null);
  await manager.revoke(a.token); // a logout elsewhere
  assert.deepEqual((await registry.list("u1")).map((s) => s.id), [
    b.identity.jti,
  ]);
  await manager.revokeAll("u1"); // sign out everywhere
  assert.deepEqual(await registry.list("u1"), []);
  const c = await manager.issueSession("u1");
  await registry.add(c.identity, null);
  assert.equal((await registry.list("u1")).length, 1);
  advance(manager.lifetimeSeconds * 1000);
  assert.deepEqual(await registry.list("u1"), []);
});

Deno.test("SessionRegistry.seen() adds no store round trip to an ordinary request: one deferred write per session an hour", async () => {
  const { kv, manager, registry, advance, now } = setup();
  const s = await manager.issueSession("u1");
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
  const s = await manager.issueSession("u1");
  assert.equal(await registry.seen(s.identity, "Agent"), true);
  const [info] = await registry.list("u1");
  assert.equal(info.id, s.identity.jti);
  assert.equal(info.userAgent, "Agent");
});

Deno.test("SessionRegistry.seen() puts a lost bound session back as bound", async () => {
  const { manager, registry } = setup();
  const s = await manager.issueSession("u1");
  const bound = { ...s.identity, binding: "device" as const };
  assert.equal(await registry.seen(bound, "Agent"), true);
  assert.deepEqual((await registry.list("u1")).map((i) => i.binding), [
    "device",
  ]);
});

Deno.test("SessionRegistry.remove(): a request of that session still in flight does not put it back", async () => {
  const { kv, manager, registry, advance } = setup();
  const s = await manager.issueSession("u1");
  await registry.add(s.identity, null);
  advance(2 * 3600 * 1000); // its next touch is due
  await registry.remove("u1", s.identity.jti);
  kv.calls.length = 0;
  assert.equal(registry.seen(s.identity, null), null, "no write");
  assert.deepEqual(kv.calls, []);
  assert.deepEqual(await registry.list("u1"), []);
});

{
  // Each write reads the whole list and writes it back: overlapping writes
  // of one subject must wait for each other, or all but one change is lost.
  const stores: [string, () => Promise<[KeyValueStore, () => void]>][] = [
    ["MemoryKV", () => Promise.resolve([new MemoryKV(), () => {}])],
    ["a libSQL file", async () => {
      const dir = await Deno.makeTempDir({ prefix: "portcullis-registry-" });
      const client = createClient({ url: `file:${dir}/kv.db` });
      return [new LibsqlKV(client), () => {
        client.close();
        Deno.removeSync(dir, { recursive: true });
      }];
    }],
  ];
  for (const [name, open] of stores) {
    Deno.test(`SessionRegistry over ${name}: writes of one subject at the same moment all land`, async () => {
      const [kv, close] = await open();
      try {
        const revocations = new KVSessionStore(kv);
        const manager = new SessionManager({
          secret: SecretProvider.fromValue(SECRET),
          store: revocations,
        });
        const registry = new SessionRegistry({ kv, manager, revocations });
        const issue = () => manager.issueSession("u1");
        const first = await Promise.all(Array.from({ length: 6 }, issue));
        await Promise.all(first.map((s) => registry.add(s.identity, null)));
        assert.equal((await registry.list("u1")).length, 6, "six sign-ins");
        // A device registration (one session swapped for its bound one),
        // a revocation, a removal and two more sign-ins, all at once; a
        // store error in one write does not stop the next.
        const [bound, x, y] = await Promise.all([issue(), issue(), issue()]);
        await Promise.all([
          registry.remove("u1", first[0].identity.jti).then(() =>
            registry.add({ ...bound.identity, binding: "device" }, null)
          ),
          registry.revoke("u1", first[1].identity.jti),
          registry.remove("u1", first[2].identity.jti),
          registry.add(x.identity, null),
          registry.add(y.identity, null),
        ]);
        const listed = await registry.list("u1");
        assert.deepEqual(
          listed.map((i) => i.id).sort(),
          [
            bound.identity.jti,
            x.identity.jti,
            y.identity.jti,
            ...first.slice(3).map((s) => s.identity.jti),
          ].sort(),
        );
        assert.equal(
          listed.find((i) => i.id === bound.identity.jti)?.binding,
          "device",
        );
        // A list asked while a write is under way answers after it.
        const z = await issue();
        const adding = registry.add(z.identity, null);
        assert.ok(
          (await registry.list("u1")).some((i) => i.id === z.identity.jti),
          "the list reads this registry's own write",
        );
        await adding;
      } finally {
        close();
      }
    });
  }
}

/**
 * A registry over memory whose first list write answers `first()` instead
 * of writing (a store failing or hanging once), and two sessions of u1.
 */
async function firstWriteAnswers(first: () => Promise<void>) {
  const memory = new MemoryKV();
  let puts = 0;
  const kv: KeyValueStore = {
    getMany: (keys) => memory.getMany(keys),
    put: (key, value, options) =>
      ++puts === 1 ? first() : memory.put(key, value, options),
    delete: (key) => memory.delete(key),
  };
  const revocations = new KVSessionStore(memory);
  const manager = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: revocations,
  });
  const registry = new SessionRegistry({ kv, manager, revocations });
  const a = await manager.issueSession("u1");
  const b = await manager.issueSession("u1");
  return { registry, a: a.identity, b: b.identity };
}

Deno.test("SessionRegistry: a failed write does not stop the writes queued after it", async () => {
  const { registry, a, b } = await firstWriteAnswers(() =>
    Promise.reject(new Error("store down"))
  );
  const [lost, kept] = await Promise.allSettled([
    registry.add(a, null),
    registry.add(b, null),
  ]);
  assert.equal(lost.status, "rejected");
  assert.match(String((lost as PromiseRejectedResult).reason), /store down/);
  assert.equal(kept.status, "fulfilled");
  assert.deepEqual((await registry.list("u1")).map((i) => i.id), [b.jti]);
});

Deno.test("SessionRegistry: a write that hangs delays the subject's next writes by at most 2 s, never stops them", async () => {
  // The first write never answers (a store without a deadline, or a
  // cancelled request's write on Workers).
  const { registry, a, b } = await firstWriteAnswers(() =>
    new Promise(() => {})
  );
  void registry.add(a, null); // hangs
  const t0 = performance.now();
  await registry.add(b, null);
  const waited = performance.now() - t0;
  assert.ok(waited >= 1900 && waited < 4000, `waited ${waited} ms`);
  assert.deepEqual((await registry.list("u1")).map((i) => i.id), [b.jti]);
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
