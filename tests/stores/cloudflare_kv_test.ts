/**
 * `CloudflareKV` against a real Workers KV implementation: a namespace from
 * Miniflare 4 (npm `miniflare`, which runs Cloudflare's `workerd` runtime
 * and its local KV storage; Deno runs it although its package asks for
 * Node 22).
 */
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";
import {
  CloudflareKV,
  type KVNamespaceLike,
} from "../../stores/cloudflare/mod.ts";
import { testKeyValueStore } from "./_conformance.ts";
import { missing } from "../support/services.ts";

/** A clock the tests move by hand. */
function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = Date.now();
  return { now: () => t, advance: (ms) => t += ms };
}

interface Local {
  mf: Miniflare;
  ns: KVNamespaceLike & {
    list(options: { prefix: string }): Promise<{
      keys: { name: string; expiration?: number }[];
    }>;
  };
}

/** Starts Miniflare with one KV namespace, or reports why it cannot. */
async function startLocal(): Promise<Local | null> {
  try {
    const mf = new Miniflare({
      modules: true,
      script: "export default { fetch() { return new Response('ok'); } }",
      kvNamespaces: ["AUTH_KV"],
    });
    const ns = await mf.getKVNamespace("AUTH_KV");
    return { mf, ns: ns as unknown as Local["ns"] };
  } catch (err) {
    missing(
      `Miniflare (workerd) could not start a local KV namespace: ${
        err instanceof Error ? err.message : String(err)
      }`,
    );
    return null;
  }
}

for (const bulkGet of [true, false]) {
  const clock = fakeClock();
  let local: Local | null = null;
  testKeyValueStore(
    `CloudflareKV on Miniflare (${bulkGet ? "bulk reads" : "parallel reads"})`,
    () => new CloudflareKV(local!.ns, { bulkGet, now: clock.now }),
    {
      available: async () => (local = await startLocal()) !== null,
      // The exact expiry lives in metadata and is checked against the clock.
      expire: () => Promise.resolve(clock.advance(1001)),
      close: () => local?.mf.dispose(),
    },
  );
}

Deno.test({
  name: "CloudflareKV on Miniflare: what is special to Workers KV",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const local = await startLocal();
    if (!local) return;
    const { mf, ns } = local;
    const p = `cf:${crypto.randomUUID()}:`;
    try {
      await t.step(
        "KV itself refuses an expirationTtl under 60 seconds",
        async () => {
          await assert.rejects(
            ns.put(p + "raw", "v", { expirationTtl: 30 }),
            /60/,
          );
        },
      );

      await t.step(
        "put() rounds the time to live up to 60 seconds and keeps the exact expiry in metadata",
        async () => {
          const clock = fakeClock();
          const kv = new CloudflareKV(ns, { now: clock.now });
          await kv.put(p + "short", "v", { ttlSeconds: 1 });
          await kv.put(p + "odd", "w", { ttlSeconds: 90.2 });
          const { keys } = await ns.list({ prefix: p });
          const exp = new Map(keys.map((k) => [k.name, k.expiration]));
          const nowS = Date.now() / 1000;
          const short = exp.get(p + "short")! - nowS;
          const odd = exp.get(p + "odd")! - nowS;
          assert.ok(short > 55 && short <= 61, `short expires in ${short} s`);
          assert.ok(odd > 85 && odd <= 92, `odd expires in ${odd} s`);
          const raw = await ns.getWithMetadata(p + "short", "text");
          assert.deepEqual(raw.metadata, { expiresAt: clock.now() + 1000 });
          assert.deepEqual(await kv.getMany([p + "short"]), ["v"]);
          clock.advance(1000);
          // KV still holds it for about a minute; the store never reads it.
          assert.equal(
            (await ns.getWithMetadata(p + "short", "text")).value,
            "v",
          );
          assert.deepEqual(await kv.getMany([p + "short", p + "odd"]), [
            null,
            "w",
          ]);
        },
      );

      await t.step(
        "put() without a time to live clears an earlier expiry",
        async () => {
          const clock = fakeClock();
          const kv = new CloudflareKV(ns, { now: clock.now });
          await kv.put(p + "re", "1", { ttlSeconds: 1 });
          await kv.put(p + "re", "2");
          clock.advance(5000);
          assert.deepEqual(await kv.getMany([p + "re"]), ["2"]);
        },
      );

      await t.step(
        "getMany() reads more than 100 keys (several bulk reads) in order, with duplicates",
        async () => {
          let bulkReads = 0;
          const counting: KVNamespaceLike = {
            getWithMetadata: ((k: string | string[], type: "text") => {
              if (Array.isArray(k)) bulkReads++;
              return ns.getWithMetadata(k as string[], type);
            }) as KVNamespaceLike["getWithMetadata"],
            put: (k, v, o) => ns.put(k, v, o),
            delete: (k) => ns.delete(k),
          };
          const kv = new CloudflareKV(counting);
          const keys = Array.from({ length: 230 }, (_, i) => `${p}n:${i}`);
          await Promise.all(
            keys.filter((_, i) => i % 3 === 0).map((k) => kv.put(k, k)),
          );
          const asked = [...keys, keys[0], keys[1]];
          bulkReads = 0;
          const got = await kv.getMany(asked);
          assert.equal(bulkReads, 3); // 100 + 100 + 32 keys
          assert.deepEqual(
            got,
            asked.map((k) => Number(k.split(":").pop()) % 3 === 0 ? k : null),
          );
        },
      );

      await t.step(
        "getMany() reads entries written by others, without metadata",
        async () => {
          await ns.put(p + "foreign", "from wrangler");
          const kv = new CloudflareKV(ns);
          assert.deepEqual(await kv.getMany([p + "foreign"]), [
            "from wrangler",
          ]);
        },
      );

      await t.step(
        "put() rejects a time to live that is not positive",
        async () => {
          const kv = new CloudflareKV(ns);
          for (const ttlSeconds of [0, -60, Number.NaN]) {
            await assert.rejects(
              kv.put(p + "x", "v", { ttlSeconds }),
              RangeError,
            );
          }
        },
      );

      await t.step("a failing binding makes every call throw", async () => {
        const failing: KVNamespaceLike = {
          getWithMetadata: () =>
            Promise.reject<never>(new Error("KV GET failed: 500")),
          put: () => Promise.reject(new Error("KV PUT failed: 500")),
          delete: () => Promise.reject(new Error("KV DELETE failed: 500")),
        };
        for (const bulkGet of [true, false]) {
          const kv = new CloudflareKV(failing, { bulkGet });
          await assert.rejects(kv.getMany(["a", "b"]), /500/);
          await assert.rejects(kv.put("a", "1", { ttlSeconds: 60 }), /500/);
          await assert.rejects(kv.delete("a"), /500/);
        }
      });
    } finally {
      await mf.dispose();
    }
  },
});
