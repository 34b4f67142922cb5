/**
 * `RedisKV` against real Redis with the real node-redis client: the shared
 * Redis on 127.0.0.1:6379 for the conformance suite and the session layer
 * (a fresh key prefix per run, its keys deleted afterwards), and private
 * `redis-server` processes for command counts, outages and a hung server.
 * The cluster tests are in `redis_cluster_test.ts`.
 */
import assert from "node:assert/strict";
import { createClient, createClientPool } from "@redis/client";
import { RedisKV } from "../../stores/redis/mod.ts";
import {
  AuthError,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import { testKeyValueStore } from "./_conformance.ts";
import { requireTcp } from "../support/services.ts";
import {
  type PrivateRedis,
  requireRedisBinaries,
  startRedis,
} from "../support/redis_servers.ts";

const REDIS_PORT = 6379;
const SECRET = "2LmWgZ//w0RGuDsPMAZ9qs4s1Nxqi7mkeB0wZMqdZtk=";

/**
 * A connected client that fails fast: no offline queue, and no reconnect
 * storm in the test log. Connection errors are expected in the outage
 * tests; the listener keeps node-redis from throwing them.
 */
// deno-lint-ignore explicit-function-return-type
async function connect(port: number) {
  const client = createClient({
    socket: {
      host: "127.0.0.1",
      port,
      connectTimeout: 1000,
      reconnectStrategy: () => 100,
    },
    disableOfflineQueue: true,
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

type Client = Awaited<ReturnType<typeof connect>>;

/** Deletes every key under `prefix` (SCAN, then DEL). */
async function deleteUnder(client: Client, prefix: string): Promise<number> {
  let deleted = 0;
  for await (
    const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })
  ) {
    if (keys.length > 0) deleted += await client.del(keys);
  }
  return deleted;
}

/** A key prefix no other run shares. */
function runPrefix(): string {
  return `portcullis-test:redis:${crypto.randomUUID()}:`;
}

const sleep = (ms: number): Promise<void> =>
  new Promise((r) => setTimeout(r, ms));

{
  let client: Client | undefined;
  const prefix = runPrefix();
  testKeyValueStore("RedisKV (node-redis client, shared Redis)", async () => {
    client = await connect(REDIS_PORT);
    return new RedisKV(client, { prefix });
  }, {
    available: () => requireTcp("Redis", REDIS_PORT),
    expire: () => sleep(1100),
    close: async () => {
      if (!client) return;
      await deleteUnder(client, prefix);
      assert.equal(await deleteUnder(client, prefix), 0);
      client.destroy();
    },
  });
}

{
  let pool: ReturnType<typeof createClientPool> | undefined;
  const prefix = runPrefix();
  testKeyValueStore("RedisKV (node-redis client pool)", async () => {
    pool = createClientPool({
      socket: { host: "127.0.0.1", port: REDIS_PORT },
      disableOfflineQueue: true,
    }, { minimum: 1, maximum: 4 });
    pool.on("error", () => {});
    await pool.connect();
    return new RedisKV(pool, { prefix });
  }, {
    available: () => requireTcp("Redis", REDIS_PORT),
    close: async () => {
      if (!pool) return;
      const client = await connect(REDIS_PORT);
      await deleteUnder(client, prefix);
      client.destroy();
      pool.destroy();
    },
  });
}

/** Runs `fn` with the shared Redis, a client and a fresh prefix. */
function withShared(
  name: string,
  fn: (kv: RedisKV, client: Client, prefix: string) => Promise<void>,
): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      if (!(await requireTcp("Redis", REDIS_PORT))) return;
      const client = await connect(REDIS_PORT);
      const prefix = runPrefix();
      try {
        await fn(new RedisKV(client, { prefix }), client, prefix);
      } finally {
        await deleteUnder(client, prefix);
        client.destroy();
      }
    },
  });
}

/** Runs `fn` with a private redis-server, always stopped afterwards. */
function withPrivate(
  name: string,
  fn: (server: PrivateRedis) => Promise<void>,
): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      if (!(await requireRedisBinaries())) return;
      const server = await startRedis();
      try {
        await fn(server);
      } finally {
        await server.kill();
      }
    },
  });
}

withShared(
  "RedisKV.put() sets PX in milliseconds and stores the raw string",
  async (kv, client, prefix) => {
    await kv.put("a", "1", { ttlSeconds: 90 });
    await kv.put("b", '{"json":true}', { ttlSeconds: 2.5 });
    await kv.put("c", "forever");
    const pttlA = await client.pTTL(prefix + "a");
    const pttlB = await client.pTTL(prefix + "b");
    assert.ok(pttlA > 85_000 && pttlA <= 90_000, `PTTL of a: ${pttlA}`);
    assert.ok(pttlB > 2000 && pttlB <= 2500, `PTTL of b: ${pttlB}`);
    assert.equal(await client.pTTL(prefix + "c"), -1);
    assert.deepEqual(await client.mGet([prefix + "a", prefix + "b"]), [
      "1",
      '{"json":true}',
    ]);
  },
);

withShared(
  "RedisKV.put() and increment() reject a time to live that is not positive, and write nothing",
  async (kv, client, prefix) => {
    for (const ttlSeconds of [0, -5, Number.NaN, Infinity]) {
      await assert.rejects(kv.put("p", "v", { ttlSeconds }), RangeError);
      await assert.rejects(kv.increment("n", ttlSeconds), RangeError);
    }
    assert.equal(await client.exists([prefix + "p", prefix + "n"]), 0);
  },
);

withShared(
  "RedisKV.increment() starts the window at the first hit and later hits keep it",
  async (kv, client, prefix) => {
    assert.equal(await kv.increment("w", 100), 1);
    const first = await client.pTTL(prefix + "w");
    assert.ok(first > 95_000 && first <= 100_000, `PTTL: ${first}`);
    // A later hit with another window length neither resets nor extends.
    assert.equal(await kv.increment("w", 5000), 2);
    const later = await client.pTTL(prefix + "w");
    assert.ok(later > 95_000 && later <= first, `PTTL: ${later}`);
    assert.equal(await client.get(prefix + "w"), "2");
  },
);

withShared(
  "RedisKV.increment() gives a counter without an expiry one, so it cannot block forever",
  async (kv, client, prefix) => {
    await kv.put("stuck", "7");
    assert.equal(await client.pTTL(prefix + "stuck"), -1);
    assert.equal(await kv.increment("stuck", 60), 8);
    const pttl = await client.pTTL(prefix + "stuck");
    assert.ok(pttl > 55_000 && pttl <= 60_000, `PTTL: ${pttl}`);
  },
);

withShared(
  "RedisKV.increment() rejects a value that is not an integer and leaves it as it was",
  async (kv, client, prefix) => {
    await kv.put("text", "not a number");
    await assert.rejects(kv.increment("text", 60), /not an integer/);
    assert.equal(await client.get(prefix + "text"), "not a number");
  },
);

withShared(
  "RedisKV keeps keys under its prefix only",
  async (kv, client, prefix) => {
    await kv.put("k", "v");
    await kv.increment("n", 60);
    const keys: string[] = [];
    for await (
      const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })
    ) keys.push(...batch);
    assert.deepEqual(keys.sort(), [prefix + "k", prefix + "n"]);
    await kv.delete("k");
    assert.equal(await client.exists(prefix + "k"), 0);
  },
);

withShared(
  "RedisKV reads values written by other clients as they are, also through a Buffer type mapping",
  async (_kv, client, prefix) => {
    await client.set(prefix + "u", "ünïcode ✓");
    const buffers = client.withTypeMapping({
      [36 /* RESP_TYPES.BLOB_STRING */]: Buffer,
    });
    const kv = new RedisKV(buffers, { prefix });
    assert.deepEqual(await kv.getMany(["u", "none"]), ["ünïcode ✓", null]);
    assert.equal(await kv.increment("n", 60), 1);
  },
);

Deno.test("RedisKV refuses what is not a client, a client with its own keyPrefix, and a bad timeout", () => {
  assert.throws(
    () => new RedisKV({} as never),
    /needs a node-redis client, client pool or cluster/,
  );
  assert.throws(() => new RedisKV(null as never), TypeError);
  const prefixed = createClient({ keyPrefix: "app:" });
  assert.throws(() => new RedisKV(prefixed), /without keyPrefix/);
  const plain = createClient();
  for (const timeoutMs of [0, -1, Number.NaN, Infinity, 2 ** 31]) {
    assert.throws(() => new RedisKV(plain, { timeoutMs }), RangeError);
  }
});

withPrivate(
  "RedisKV.getMany() is one MGET on a single node, and getMany([]) sends nothing",
  async (server) => {
    const client = await connect(server.port);
    try {
      const kv = new RedisKV(client, { prefix: "p:" });
      await kv.put("jti", "revoked", { ttlSeconds: 120 });
      await client.configResetStat();
      assert.deepEqual(await kv.getMany(["jti", "subject", "other"]), [
        "revoked",
        null,
        null,
      ]);
      assert.deepEqual(await kv.getMany([]), []);
      const stats = await client.info("commandstats");
      const calls = [...stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)]
        .map(([, name, n]) => `${name}=${n}`)
        .filter((s) => !s.startsWith("info=") && !s.startsWith("config"));
      assert.deepEqual(calls, ["mget=1"]);
    } finally {
      client.destroy();
    }
  },
);

withPrivate(
  "RedisKV.increment() is one EVAL and counts exactly under 200 concurrent calls",
  async (server) => {
    const client = await connect(server.port);
    try {
      const kv = new RedisKV(client);
      await client.configResetStat();
      const results = await Promise.all(
        Array.from({ length: 200 }, () => kv.increment("c", 60)),
      );
      assert.deepEqual(
        results.sort((a, b) => a - b),
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
      const stats = await client.info("commandstats");
      // Inside the script: INCR and PTTL each time, PEXPIRE once (the
      // window starts at the first hit). Nothing outside it.
      assert.match(stats, /^cmdstat_eval:calls=200,/m);
      assert.match(stats, /^cmdstat_pexpire:calls=1,/m);
      assert.doesNotMatch(stats, /^cmdstat_(multi|exec|set):/m);
    } finally {
      client.destroy();
    }
  },
);

/** A session manager over RedisKV. */
function sessionsOver(kv: RedisKV): SessionManager {
  return new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
  });
}

withShared(
  "the session layer over RedisKV: revoke() and revokeAll() take effect on the next resolve()",
  async (kv) => {
    const sessions = sessionsOver(kv);
    const other = sessionsOver(kv); // another app instance, same Redis
    const a = await sessions.issue("user_a");
    const b = await sessions.issue("user_b");
    const b2 = await sessions.issue("user_b");
    assert.equal((await other.resolve(a))?.subject, "user_a");
    assert.equal(await sessions.revoke(a), true);
    assert.equal(await other.resolve(a), null);
    assert.equal((await other.resolve(b))?.subject, "user_b");
    await sessions.revokeAll("user_b");
    assert.equal(await other.resolve(b), null);
    assert.equal(await other.resolve(b2), null);
  },
);

withPrivate(
  "a killed Redis makes every RedisKV call reject at once and resolve() fail closed with STORE_UNAVAILABLE; calls work again after a restart",
  async (server) => {
    const client = await connect(server.port);
    try {
      // A deadline far above the bound asserted below: the rejections must
      // come from the closed socket and disableOfflineQueue, not from it.
      const kv = new RedisKV(client, { prefix: "outage:", timeoutMs: 10_000 });
      const sessions = sessionsOver(kv);
      const token = await sessions.issue("user_outage");
      assert.equal((await sessions.resolve(token))?.subject, "user_outage");

      await server.kill();
      const started = performance.now();
      await assert.rejects(kv.getMany(["a", "b"]));
      await assert.rejects(kv.put("a", "1", { ttlSeconds: 60 }));
      await assert.rejects(kv.increment("n", 60));
      await assert.rejects(kv.delete("a"));
      await assert.rejects(
        sessions.resolve(token),
        (e) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
      );
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 2000, `outage calls took ${elapsed} ms`);

      const again = await startRedis({ port: server.port });
      try {
        // The client reconnects on its own (every 100 ms here).
        const until = Date.now() + 5000;
        while (!client.isReady && Date.now() < until) await sleep(50);
        assert.ok(client.isReady, "client did not reconnect");
        assert.equal((await sessions.resolve(token))?.subject, "user_outage");
        assert.equal(await kv.increment("n", 60), 1);
      } finally {
        await again.kill();
      }
    } finally {
      client.destroy();
    }
  },
);

withPrivate(
  "a Redis that stops answering makes RedisKV calls reject after timeoutMs, and resolve() fail closed",
  async (server) => {
    const client = await connect(server.port);
    // node-redis's own command timeout only covers commands not yet
    // written; turn it off to show that RedisKV's deadline alone suffices.
    const untimed = client.withCommandOptions({ timeout: undefined });
    try {
      const kv = new RedisKV(untimed, { timeoutMs: 300 });
      const sessions = sessionsOver(kv);
      const token = await sessions.issue("user_hung");
      assert.equal((await sessions.resolve(token))?.subject, "user_hung");
      server.pause();
      const started = performance.now();
      const results = await Promise.allSettled([
        kv.getMany(["a"]),
        kv.put("a", "1"),
        kv.increment("n", 60),
        kv.delete("a"),
        sessions.resolve(token),
      ]);
      const elapsed = performance.now() - started;
      assert.ok(
        elapsed >= 250 && elapsed < 2000,
        `calls settled after ${elapsed} ms`,
      );
      assert.ok(results.every((r) => r.status === "rejected"));
      for (const r of results.slice(0, 4)) {
        const reason = (r as PromiseRejectedResult).reason;
        assert.ok(reason instanceof DOMException, String(reason));
        assert.equal(reason.name, "TimeoutError");
      }
      const last = (results[4] as PromiseRejectedResult).reason;
      assert.ok(last instanceof AuthError && last.code === "STORE_UNAVAILABLE");
    } finally {
      server.resume();
      client.destroy();
    }
  },
);
