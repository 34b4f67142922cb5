/**
 * `RedisKV` on a real Redis Cluster: three private cluster-enabled
 * `redis-server` processes on free ports of 127.0.0.1, joined by
 * `redis-cli --cluster create`, reached with node-redis's `createCluster`.
 * Every cluster is stopped by its processes' PIDs when its test ends.
 */
import assert from "node:assert/strict";
import { createClient, createCluster } from "@redis/client";
import { RedisKV } from "../../stores/redis/mod.ts";
import { keySlot } from "../../stores/redis/_key_slot.ts";
import { KVSessionStore, SecretProvider, SessionManager } from "../../mod.ts";
import { testKeyValueStore } from "./_conformance.ts";
import {
  type PrivateCluster,
  requireRedisBinaries,
  startRedisCluster,
} from "../support/redis_servers.ts";

// deno-lint-ignore explicit-function-return-type
async function connectCluster(cluster: PrivateCluster) {
  const client = createCluster({
    rootNodes: cluster.nodes.map((n) => ({
      url: `redis://127.0.0.1:${n.port}`,
    })),
    defaults: { disableOfflineQueue: true },
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

type Cluster = Awaited<ReturnType<typeof connectCluster>>;

/** Sums one command's calls over every node, from INFO commandstats. */
async function callsOf(
  cluster: PrivateCluster,
  command: string,
): Promise<number> {
  let total = 0;
  for (const node of cluster.nodes) {
    const c = createClient({ socket: { host: "127.0.0.1", port: node.port } });
    c.on("error", () => {});
    await c.connect();
    const stats = await c.info("commandstats");
    const m = stats.match(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m"));
    total += m ? Number(m[1]) : 0;
    c.destroy();
  }
  return total;
}

async function resetStats(cluster: PrivateCluster): Promise<void> {
  for (const node of cluster.nodes) {
    const c = createClient({ socket: { host: "127.0.0.1", port: node.port } });
    c.on("error", () => {});
    await c.connect();
    await c.configResetStat();
    c.destroy();
  }
}

for (const prefix of ["portcullis-test:", "{portcullis-test}:"]) {
  let cluster: PrivateCluster | undefined;
  let client: Cluster | undefined;
  testKeyValueStore(`RedisKV (Redis Cluster, prefix ${prefix})`, async () => {
    cluster = await startRedisCluster(3);
    client = await connectCluster(cluster);
    return new RedisKV(client, { prefix });
  }, {
    available: requireRedisBinaries,
    expire: () => new Promise((r) => setTimeout(r, 1100)),
    close: async () => {
      client?.destroy();
      await cluster?.stop();
    },
  });
}

Deno.test({
  name: "RedisKV on a three-node Redis Cluster",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    if (!(await requireRedisBinaries())) return;
    const cluster = await startRedisCluster(3);
    let client: Cluster | undefined;
    try {
      client = await connectCluster(cluster);
      const c = client;
      await t.step(
        "keySlot() answers what CLUSTER KEYSLOT answers, hash tags and UTF-8 included",
        async () => {
          const keys = [
            "123456789",
            "",
            "foo",
            "{user1000}.following",
            "{user1000}.followers",
            "foo{}{bar}",
            "foo{{bar}}zap",
            "foo{bar}{zap}",
            "{}",
            "a{b",
            "a}b{c}",
            "portcullis:deny:01J0000000000000000000000",
            "{portcullis}:cut:user_ünï ✓",
            "ä{ö}ü",
            ...Array.from({ length: 200 }, () => crypto.randomUUID()),
          ];
          assert.equal(keySlot("123456789"), 12739); // the spec's CRC16 check value
          for (const key of keys) {
            const expected = await c.sendCommand(undefined, true, [
              "CLUSTER",
              "KEYSLOT",
              key,
            ]);
            assert.equal(keySlot(key), Number(expected), `slot of ${key}`);
          }
        },
      );
      await t.step(
        "on a cluster, getMany() of keys in many slots sends one MGET per slot and answers in order (a plain MGET would be refused)",
        async () => {
          const kv = new RedisKV(c, { prefix: "p:" });
          const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
          // Two keys of one slot, so that a group holds more than one key.
          keys.push("{k0}x", "{k0}y");
          await Promise.all(
            keys.map((k, i) => i % 3 ? kv.put(k, `v${i}`) : null),
          );
          const slots = new Set(keys.map((k) => keySlot("p:" + k)));
          assert.ok(slots.size > 30, `only ${slots.size} slots`);
          // Redis refuses one MGET over several slots. (node-redis 6.2 and later
          // split such an MGET per slot themselves; RedisKV does not rely on it.)
          const plain = createClient({
            socket: { host: "127.0.0.1", port: cluster.nodes[0].port },
          });
          plain.on("error", () => {});
          await plain.connect();
          try {
            await assert.rejects(
              plain.sendCommand(["MGET", ...keys.map((k) => "p:" + k)]),
              /CROSSSLOT/,
            );
          } finally {
            plain.destroy();
          }
          await resetStats(cluster);
          const got = await kv.getMany(keys);
          assert.deepEqual(got, keys.map((_, i) => i % 3 ? `v${i}` : null));
          assert.equal(await callsOf(cluster, "mget"), slots.size);
        },
      );
      await t.step(
        "on a cluster, a hash-tagged prefix makes getMany() one MGET on one primary",
        async () => {
          const kv = new RedisKV(c, { prefix: "{auth}:" });
          await kv.put("deny:abc", "1", { ttlSeconds: 60 });
          await resetStats(cluster);
          assert.deepEqual(
            await kv.getMany(["deny:abc", "cut:user_1", "deny:other"]),
            ["1", null, null],
          );
          assert.equal(await callsOf(cluster, "mget"), 1);
        },
      );
      await t.step(
        "the session layer over RedisKV on a cluster: a revocation is seen by another instance's next resolve()",
        async () => {
          const make = () =>
            new SessionManager({
              secret: SecretProvider.fromValue(
                "dAYvRjbcjECRbR/wbkpt8FYvHsCKqFIURquy3cs0moM=",
              ),
              store: new KVSessionStore(new RedisKV(c)),
            });
          const [one, two] = [make(), make()];
          const tokens = await Promise.all(
            Array.from({ length: 20 }, (_, i) => one.issue(`user_${i}`)),
          );
          for (const tok of tokens) assert.ok(await two.resolve(tok));
          for (const tok of tokens.slice(0, 10)) {
            assert.equal(await one.revoke(tok), true);
          }
          await one.revokeAll("user_15");
          const live = await Promise.all(tokens.map((tok) => two.resolve(tok)));
          assert.deepEqual(
            live.map((x) => x?.subject ?? null),
            tokens.map((_, i) => i < 10 || i === 15 ? null : `user_${i}`),
          );
        },
      );
    } finally {
      client?.destroy();
      await cluster.stop();
    }
  },
});

Deno.test({
  name: "RedisKV on a Redis Cluster with one replica per primary",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    if (!(await requireRedisBinaries())) return;
    const cluster = await startRedisCluster(3, 1);
    let client: Cluster | undefined;
    try {
      // Replicas reach every node's CLUSTER SLOTS a little after they
      // synced; connect until the client has discovered all three, or the
      // "no read went to a replica" assertion below would prove nothing.
      for (let attempt = 0; attempt < 40; attempt++) {
        client?.destroy();
        client = createCluster({
          rootNodes: cluster.nodes.map((n) => ({
            url: `redis://127.0.0.1:${n.port}`,
          })),
          useReplicas: true,
          defaults: {
            disableOfflineQueue: true,
            socket: { connectTimeout: 500, reconnectStrategy: () => 100 },
          },
        });
        client.on("error", () => {});
        await client.connect();
        if (client.replicas.length === 3) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const c = client!;
      assert.equal(c.replicas.length, 3, "replicas not discovered");
      const primaries: PrivateCluster["nodes"] = [];
      const replicas: PrivateCluster["nodes"] = [];
      for (const n of cluster.nodes) {
        const info = await rawInfo(n.port, "replication");
        (info.includes("role:slave") ? replicas : primaries).push(n);
      }
      assert.equal(replicas.length, 3);
      const kv = new RedisKV(c, { prefix: "r:", timeoutMs: 1000 });
      const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
      await Promise.all(keys.map((k) => kv.put(k, "v")));
      // Every write acknowledged by a replica before anything is killed.
      for (const k of keys) {
        assert.equal(
          await c.sendCommand("r:" + k, false, ["WAIT", "1", "2000"]),
          1,
        );
      }

      await t.step(
        "with useReplicas: true, RedisKV reads from primaries only (a typed mGet would read replicas)",
        async () => {
          const onReplicas = { nodes: replicas, stop: () => Promise.resolve() };
          await resetStats(cluster);
          for (let i = 0; i < 20; i++) {
            assert.deepEqual(await kv.getMany(keys), keys.map(() => "v"));
          }
          assert.equal(await callsOf(onReplicas, "mget"), 0);
          assert.ok((await callsOf(cluster, "mget")) >= 20);
          for (let i = 0; i < 20; i++) await c.mGet(["r:k0"]);
          assert.ok((await callsOf(onReplicas, "mget")) > 0);
        },
      );

      await t.step(
        "a killed primary makes calls reject within timeoutMs, never hang, and they succeed again once its replica took over",
        async () => {
          await primaries[0].kill();
          const started = Date.now();
          let rejected = 0;
          let recovered = false;
          while (Date.now() - started < 30_000) {
            const round = performance.now();
            const results = await Promise.allSettled([
              kv.getMany(keys),
              kv.increment("n", 60),
              kv.put("w", "x", { ttlSeconds: 60 }),
            ]);
            const took = performance.now() - round;
            // The deadline is 1000 ms; the rest is slack for a loaded CI
            // machine. A hang would take the whole 30 s.
            assert.ok(took < 2500, `a round took ${took} ms`);
            rejected += results.filter((r) => r.status === "rejected").length;
            if (results.every((r) => r.status === "fulfilled")) {
              assert.deepEqual(
                (results[0] as PromiseFulfilledResult<unknown>).value,
                keys.map(() => "v"),
              );
              recovered = true;
              break;
            }
            await new Promise((r) => setTimeout(r, 200));
          }
          assert.ok(rejected > 0, "no call noticed the outage");
          assert.ok(recovered, "calls did not recover after the failover");
        },
      );
    } finally {
      client?.destroy();
      await cluster.stop();
    }
  },
});

/** `INFO <section>` of one node. */
async function rawInfo(port: number, section: string): Promise<string> {
  const c = createClient({ socket: { host: "127.0.0.1", port } });
  c.on("error", () => {});
  await c.connect();
  try {
    return await c.info(section);
  } finally {
    c.destroy();
  }
}
