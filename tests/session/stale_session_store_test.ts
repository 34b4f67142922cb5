import assert from "node:assert/strict";
import { AuthError, DenoKV, KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "../../mod.ts";
import type { KeyValueStore } from "../../mod.ts";
import type { PutOptions } from "../../lib/session/mod.ts";
import { StaleSessionStore } from "../../lib/session/stale_session_store.ts";
import { Clock, SECRET } from "./_helpers.ts";

/** A real store in front of another, counting reads; `down` makes it fail. */
class CountingKV implements KeyValueStore {
  reads = 0;
  down = false;
  constructor(readonly inner: KeyValueStore) {}
  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    this.reads++;
    if (this.down) return Promise.reject(new Error("connection refused"));
    return this.inner.getMany(keys);
  }
  put(key: string, value: string, options?: PutOptions): Promise<void> {
    if (this.down) return Promise.reject(new Error("connection refused"));
    return this.inner.put(key, value, options);
  }
  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }
}

/** Two manager instances (two isolates) over one shared key-value store. */
function twoInstances(shared: KeyValueStore, staleness = 5) {
  const clock = new Clock();
  const kvA = new CountingKV(shared);
  const make = (kv: KeyValueStore, revocationStaleness?: number) =>
    new SessionManager({
      secret: SecretProvider.fromValue(SECRET),
      store: new KVSessionStore(kv),
      now: clock.now,
      revocationStaleness,
    });
  return {
    clock,
    kvA,
    a: make(kvA, staleness), // the opted-in instance under test
    b: make(shared), // another instance, exact
  };
}

for (
  const [name, open] of [
    ["MemoryKV", () => Promise.resolve(new MemoryKV())],
    ["Deno KV", () => DenoKV.open(":memory:")],
  ] as const
) {
  Deno.test(`revocationStaleness (${name}): a revocation through another instance is seen within the bound and not before it is due`, async () => {
    const shared = await open();
    try {
      const { clock, kvA, a, b } = twoInstances(shared, 5);
      const token = await b.issue("user_1");
      assert.equal((await a.resolve(token))?.subject, "user_1");
      assert.equal(kvA.reads, 1);
      clock.advance(1);
      assert.equal(await b.revoke(token), true);
      assert.equal(await b.resolve(token), null, "exact instance: at once");
      // Inside the bound the opted-in instance answers from memory, without
      // a round trip: the revocation is not yet due there.
      clock.advance(3.999);
      assert.equal((await a.resolve(token))?.subject, "user_1");
      assert.equal(kvA.reads, 1);
      // Five seconds after the store was asked, the answer is due again.
      clock.advance(0.001);
      assert.equal(await a.resolve(token), null);
      assert.equal(kvA.reads, 2);
      // The "revoked" answer is reused within the bound too.
      clock.advance(4);
      assert.equal(await a.resolve(token), null);
      assert.equal(kvA.reads, 2);
    } finally {
      (shared as { close?: () => void }).close?.();
    }
  });
}

Deno.test("revocationStaleness: revokeAll through another instance is seen within the bound", async () => {
  const { clock, kvA, a, b } = twoInstances(new MemoryKV(), 10);
  const t1 = await a.issue("user_1");
  const t2 = await a.issue("user_1");
  assert.ok(await a.resolve(t1));
  assert.ok(await a.resolve(t2));
  clock.advance(1);
  await b.revokeAll("user_1");
  clock.advance(8.999);
  assert.ok(await a.resolve(t1), "still within the bound");
  clock.advance(0.001);
  assert.equal(await a.resolve(t1), null);
  assert.equal(await a.resolve(t2), null);
  assert.equal(kvA.reads, 4);
});

Deno.test("revocationStaleness: a revocation through the same instance applies at once", async () => {
  const { a, b } = twoInstances(new MemoryKV(), 60);
  const token = await a.issue("user_1");
  assert.ok(await a.resolve(token));
  await a.revoke(token);
  assert.equal(await a.resolve(token), null);
  assert.equal(await b.resolve(token), null);
});

Deno.test("revocationStaleness: revokeAll through the same instance applies at once, and later sessions live", async () => {
  const { clock, a } = twoInstances(new MemoryKV(), 60);
  const t1 = await a.issue("user_1");
  const t2 = await a.issue("user_1");
  const other = await a.issue("user_2");
  for (const t of [t1, t2, other]) assert.ok(await a.resolve(t));
  clock.advance(1);
  await a.revokeAll("user_1");
  assert.equal(await a.resolve(t1), null);
  assert.equal(await a.resolve(t2), null);
  assert.equal((await a.resolve(other))?.subject, "user_2");
  clock.advance(1);
  const after = await a.issue("user_1");
  assert.equal((await a.resolve(after))?.subject, "user_1");
});

Deno.test("revocationStaleness: a revocation here applies at once even when the store's reads lag its writes (Cloudflare KV)", async () => {
  // A real MemoryKV whose reads do not see writes yet, as Cloudflare KV
  // may not for up to 60 s.
  const clock = new Clock();
  const truth = new MemoryKV({ now: clock.now });
  const lagging: KeyValueStore = {
    getMany: (keys) => truth.getMany(keys),
    // Writes are held back: this test ends before they would land.
    put: (key, value, options) =>
      Promise.resolve(void lagged.push([key, value, options])),
    delete: (key) => truth.delete(key),
  };
  const lagged: [string, string, PutOptions | undefined][] = [];
  const a = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(lagging),
    now: clock.now,
    revocationStaleness: 30,
  });
  const token = await a.issue("user_1");
  const other = await a.issue("user_1");
  assert.ok(await a.resolve(token));
  await a.revoke(token);
  assert.equal(lagged.length, 1, "the write has not reached reads yet");
  assert.equal(await a.resolve(token), null);
  clock.advance(1);
  await a.revokeAll("user_1");
  assert.equal(await a.resolve(other), null);
});

Deno.test("revocationStaleness: a store outage inside the bound fails closed for sessions not seen before", async () => {
  const { clock, kvA, a } = twoInstances(new MemoryKV(), 5);
  const seen = await a.issue("user_1");
  const unseen = await a.issue("user_2");
  assert.ok(await a.resolve(seen));
  kvA.down = true;
  clock.advance(2);
  // Seen within the bound: answered from memory.
  assert.equal((await a.resolve(seen))?.subject, "user_1");
  // Never asked about: the store must answer, and it cannot.
  await assert.rejects(
    () => a.resolve(unseen),
    (e: unknown) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
  );
  // Past the bound, a seen session is not kept alive by its old answer.
  clock.advance(3);
  await assert.rejects(
    () => a.resolve(seen),
    (e: unknown) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
  );
  // And a failed revocation is reported, not silently remembered as done.
  await assert.rejects(
    () => a.revoke(seen),
    (e: unknown) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
  );
});

Deno.test("StaleSessionStore: concurrent requests for one session share one round trip", async () => {
  const kv = new CountingKV(new MemoryKV());
  const store = new StaleSessionStore(new KVSessionStore(kv), {
    maxStalenessSeconds: 5,
  });
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => store.isRevoked("u", "jti-1", 0)),
  );
  assert.deepEqual(new Set(answers), new Set([false]));
  assert.equal(kv.reads, 1);
  assert.equal(store.roundTrips, 1);
});

Deno.test("StaleSessionStore: memory stays within maxEntries", async () => {
  const kv = new CountingKV(new MemoryKV());
  const store = new StaleSessionStore(new KVSessionStore(kv), {
    maxStalenessSeconds: 5,
    maxEntries: 4,
  });
  for (let i = 0; i < 10; i++) await store.isRevoked("u", `jti-${i}`, 0);
  assert.equal(store.size, 4);
  // The oldest answers went first: jti-0 is asked again, jti-9 is not.
  await store.isRevoked("u", "jti-9", 0);
  assert.equal(kv.reads, 10);
  await store.isRevoked("u", "jti-0", 0);
  assert.equal(kv.reads, 11);
});

Deno.test("StaleSessionStore: an answer for one subject is not reused for another", async () => {
  const kv = new CountingKV(new MemoryKV());
  const store = new StaleSessionStore(new KVSessionStore(kv), {
    maxStalenessSeconds: 5,
  });
  await store.isRevoked("u", "jti-1", 0);
  await store.isRevoked("v", "jti-1", 0);
  assert.equal(kv.reads, 2);
});

Deno.test("StaleSessionStore refuses a bound that is not in (0, 3600] seconds", () => {
  const inner = new KVSessionStore(new MemoryKV());
  for (const bad of [0, -1, Number.NaN, 3601, Infinity]) {
    assert.throws(
      () => new StaleSessionStore(inner, { maxStalenessSeconds: bad }),
      RangeError,
      String(bad),
    );
  }
  assert.throws(
    () =>
      new SessionManager({
        secret: SecretProvider.fromValue(SECRET),
        store: inner,
        revocationStaleness: 0,
      }),
    RangeError,
  );
});

Deno.test("StaleSessionStore.peek() answers from memory within the bound only, and sees local revocations", async () => {
  const clock = new Clock();
  const kv = new CountingKV(new MemoryKV({ now: clock.now }));
  const store = new StaleSessionStore(new KVSessionStore(kv), {
    maxStalenessSeconds: 5,
    now: clock.now,
  });
  assert.equal(store.peek("u", "jti-1", 0), undefined, "never asked");
  assert.equal(await store.isRevoked("u", "jti-1", 0), false);
  assert.equal(store.peek("u", "jti-1", 0), false);
  assert.equal(store.peek("v", "jti-1", 0), undefined, "another subject");
  clock.advance(5);
  assert.equal(store.peek("u", "jti-1", 0), undefined, "past the bound");
  assert.equal(await store.isRevoked("u", "jti-1", 0), false);
  await store.revoke("jti-1", 60);
  assert.equal(store.peek("u", "jti-1", 0), true);
  await store.revokeAll("w", 1000, 60);
  assert.equal(store.peek("w", "jti-2", 999), true);
  assert.equal(store.peek("w", "jti-3", 1001), undefined);
  assert.equal(kv.reads, 2, "peek never reads the store");
});
