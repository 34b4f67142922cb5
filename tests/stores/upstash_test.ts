/**
 * `UpstashKV` against real Redis on 127.0.0.1:6379, reached through the
 * Upstash REST bridge in `tests/support/upstash_bridge.ts` with the real
 * `@upstash/redis` client.
 */
import assert from "node:assert/strict";
import { Redis } from "@upstash/redis";
import { UpstashKV } from "../../stores/upstash/mod.ts";
import { testKeyValueStore } from "./_conformance.ts";
import { requireTcp } from "../support/services.ts";
import {
  closedPort,
  startUpstashBridge,
  type UpstashBridge,
} from "../support/upstash_bridge.ts";

const REDIS_PORT = 6379;
let shared: UpstashBridge | undefined;

testKeyValueStore("UpstashKV (url and token)", () => {
  shared ??= startUpstashBridge();
  return new UpstashKV({ url: shared.url, token: shared.token });
}, {
  available: () => requireTcp("Redis", REDIS_PORT),
  expire: () => new Promise((r) => setTimeout(r, 1100)),
  close: async () => {
    await shared?.close();
    shared = undefined;
  },
});

let sharedClient: UpstashBridge | undefined;
testKeyValueStore("UpstashKV (a client with a key prefix)", () => {
  sharedClient ??= startUpstashBridge();
  const redis = new Redis({
    url: sharedClient.url,
    token: sharedClient.token,
    automaticDeserialization: false,
    enableAutoPipelining: false,
  });
  return new UpstashKV({ redis, prefix: "portcullis-test:" });
}, {
  available: () => requireTcp("Redis", REDIS_PORT),
  close: async () => {
    await sharedClient?.close();
    sharedClient = undefined;
  },
});

/** Runs `fn` with a fresh bridge, or skips when Redis is missing. */
function withBridge(
  name: string,
  fn: (bridge: UpstashBridge) => Promise<void>,
): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      if (!(await requireTcp("Redis", REDIS_PORT))) return;
      const bridge = startUpstashBridge();
      try {
        await fn(bridge);
      } finally {
        await bridge.close();
      }
    },
  });
}

withBridge(
  "UpstashKV.getMany() is one HTTP request and one MGET",
  async (bridge) => {
    const kv = new UpstashKV({ url: bridge.url, token: bridge.token });
    const p = `one-trip:${crypto.randomUUID()}:`;
    await kv.put(p + "jti", "revoked", { ttlSeconds: 120 });
    bridge.resetStats();
    const got = await kv.getMany([p + "jti", p + "subject", p + "other"]);
    assert.deepEqual(got, ["revoked", null, null]);
    assert.deepEqual(bridge.stats(), {
      httpRequests: 1,
      commands: 1,
      byName: { MGET: 1 },
    });
  },
);

withBridge(
  "UpstashKV.getMany([]) sends nothing",
  async (bridge) => {
    const kv = new UpstashKV({ url: bridge.url, token: bridge.token });
    bridge.resetStats();
    assert.deepEqual(await kv.getMany([]), []);
    assert.equal(bridge.stats().httpRequests, 0);
  },
);

withBridge(
  "UpstashKV.put() sets EX in seconds (PX for a fraction) and stores the raw string",
  async (bridge) => {
    const kv = new UpstashKV({ url: bridge.url, token: bridge.token });
    const raw = new Redis({
      url: bridge.url,
      token: bridge.token,
      automaticDeserialization: false,
    });
    const p = `ttl:${crypto.randomUUID()}:`;
    await kv.put(p + "a", "1", { ttlSeconds: 90 });
    await kv.put(p + "b", '{"json":true}', { ttlSeconds: 2.5 });
    await kv.put(p + "c", "forever");
    const ttlA = await raw.ttl(p + "a");
    const pttlB = await raw.pttl(p + "b");
    assert.ok(ttlA > 85 && ttlA <= 90, `TTL of a: ${ttlA}`);
    assert.ok(pttlB > 2000 && pttlB <= 2500, `PTTL of b: ${pttlB}`);
    assert.equal(await raw.ttl(p + "c"), -1);
    assert.deepEqual(await raw.mget(p + "a", p + "b"), ["1", '{"json":true}']);
    assert.deepEqual(await kv.getMany([p + "b"]), ['{"json":true}']);
    await raw.del(p + "a", p + "b", p + "c");
  },
);

withBridge(
  "UpstashKV.put() rejects a time to live that is not positive",
  async (bridge) => {
    const kv = new UpstashKV({ url: bridge.url, token: bridge.token });
    for (const ttlSeconds of [0, -5, Number.NaN, Infinity]) {
      await assert.rejects(
        kv.put("never-written", "v", { ttlSeconds }),
        RangeError,
      );
    }
  },
);

Deno.test({
  name: "UpstashKV surfaces a 401 from a wrong token as a thrown error",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    // The token is checked before Redis is touched: no Redis needed.
    const bridge = startUpstashBridge({ redisPort: closedPort() });
    try {
      await check401(bridge);
    } finally {
      await bridge.close();
    }
  },
});

async function check401(bridge: UpstashBridge): Promise<void> {
  {
    const kv = new UpstashKV({ url: bridge.url, token: "not-the-token" });
    await assert.rejects(kv.getMany(["a"]), /Unauthorized/);
    await assert.rejects(kv.put("a", "1"), /Unauthorized/);
    await assert.rejects(kv.delete("a"), /Unauthorized/);
    const res = await fetch(bridge.url, {
      method: "POST",
      body: JSON.stringify(["GET", "a"]),
    });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: "Unauthorized" });
    assert.equal(bridge.stats().commands, 0);
  }
}

Deno.test({
  name: "UpstashKV throws when Redis behind the REST endpoint is down",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const bridge = startUpstashBridge({ redisPort: closedPort() });
    try {
      const kv = new UpstashKV({ url: bridge.url, token: bridge.token });
      await assert.rejects(kv.getMany(["a", "b"]), /could not reach Redis/);
      await assert.rejects(kv.put("a", "1", { ttlSeconds: 60 }), /Redis/);
      await assert.rejects(kv.delete("a"), /Redis/);
    } finally {
      await bridge.close();
    }
  },
});

Deno.test({
  name: "UpstashKV throws when the REST endpoint itself is unreachable",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const redis = new Redis({
      url: `http://127.0.0.1:${closedPort()}`,
      token: "t",
      automaticDeserialization: false,
      retry: false,
    });
    const kv = new UpstashKV({ redis });
    await assert.rejects(kv.getMany(["a"]));
    await assert.rejects(kv.put("a", "1"));
  },
});

Deno.test("UpstashKV refuses a client that parses values as JSON", () => {
  const redis = new Redis({ url: "http://127.0.0.1:1", token: "t" });
  assert.throws(() => new UpstashKV({ redis }), TypeError);
  assert.throws(
    () => new UpstashKV({ url: "", token: "t" }),
    /needs both url and token/,
  );
});

withBridge(
  "upstash bridge: pipeline, multi-exec and base64 encoding follow the REST protocol",
  async (bridge) => {
    const p = `bridge:${crypto.randomUUID()}:`;
    const post = async (
      path: string,
      body: unknown,
      base64 = false,
    ): Promise<{ status: number; body: unknown }> => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${bridge.token}`,
      };
      if (base64) headers["upstash-encoding"] = "base64";
      const res = await fetch(bridge.url + path, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    assert.deepEqual(await post("/", ["SET", p + "k", "välue", "EX", 60]), {
      status: 200,
      body: { result: "OK" },
    });
    assert.deepEqual(await post("/", ["GET", p + "k"]), {
      status: 200,
      body: { result: "välue" },
    });
    const b64 = btoa(
      String.fromCharCode(...new TextEncoder().encode("välue")),
    );
    assert.deepEqual(await post("/", ["MGET", p + "k", p + "none"], true), {
      status: 200,
      body: { result: [b64, null] },
    });
    assert.deepEqual(await post("/", ["SET", p + "k", "x"], true), {
      status: 200,
      body: { result: "OK" },
    });
    assert.deepEqual(await post("/", ["PING"], true), {
      status: 200,
      body: { result: btoa("PONG") },
    });
    const wrong = await post("/", ["GET"]);
    assert.equal(wrong.status, 400);
    assert.match((wrong.body as { error: string }).error, /wrong number/);
    const pipe = await post("/pipeline", [
      ["SET", p + "n", 1],
      ["INCR", p + "n"],
      ["INCR", p + "k"],
      ["DEL", p + "n", p + "k"],
    ]);
    assert.equal(pipe.status, 200);
    const entries = pipe.body as Record<string, unknown>[];
    assert.deepEqual(entries[0], { result: "OK" });
    assert.deepEqual(entries[1], { result: 2 });
    assert.match(String(entries[2].error), /not an integer/);
    assert.deepEqual(entries[3], { result: 2 });
    const multi = await post("/multi-exec", [
      ["SET", p + "m", "a"],
      ["APPEND", p + "m", "b"],
      ["GET", p + "m"],
      ["DEL", p + "m"],
    ], true);
    assert.deepEqual(multi, {
      status: 200,
      body: [
        { result: "OK" },
        { result: 2 },
        { result: btoa("ab") },
        { result: 1 },
      ],
    });
    const aborted = await post("/multi-exec", [["SET", p + "m"]]);
    assert.equal(aborted.status, 400);
    assert.match((aborted.body as { error: string }).error, /EXECABORT/);
    const stats = bridge.stats();
    assert.equal(stats.httpRequests, 9);
    assert.equal(stats.byName.INCR, 2);
  },
);
