import assert from "node:assert/strict";
import { DenoKV, MemoryKV } from "../../mod.ts";
import { testKeyValueStore } from "../stores/_conformance.ts";
import { Clock } from "../session/_helpers.ts";

{
  const clock = new Clock();
  testKeyValueStore("MemoryKV", () => new MemoryKV({ now: clock.now }), {
    expire: () => Promise.resolve(clock.advance(2)),
  });
}

{
  const clock = new Clock(Date.now());
  const dir = Deno.makeTempDirSync();
  let kv: DenoKV | undefined;
  testKeyValueStore(
    "DenoKV (a real Deno KV file)",
    async () => (kv = await DenoKV.open(`${dir}/kv.sqlite3`, {
      now: clock.now,
    })),
    {
      // Deno KV deletes expired keys lazily; the store re-checks expiry.
      expire: () => Promise.resolve(clock.advance(2)),
      close: () => {
        kv?.close();
        Deno.removeSync(dir, { recursive: true });
      },
    },
  );
}

Deno.test("DenoKV re-checks expiry in code: an entry past its time is not read even before Deno KV deletes it", async () => {
  const clock = new Clock(Date.now());
  const raw = await Deno.openKv(":memory:");
  const kv = new DenoKV(raw, { now: clock.now });
  try {
    await kv.put("k", "v", { ttlSeconds: 60 });
    assert.deepEqual(await kv.getMany(["k"]), ["v"]);
    clock.advance(61);
    // Still physically present in Deno KV (expireIn is "not before")...
    assert.notEqual((await raw.get(["portcullis", "k"])).value, null);
    // ...but never answered.
    assert.deepEqual(await kv.getMany(["k"]), [null]);
  } finally {
    raw.close();
  }
});

Deno.test("DenoKV ignores values it did not write", async () => {
  const raw = await Deno.openKv(":memory:");
  try {
    await raw.set(["portcullis", "x"], "plain string");
    await raw.set(["portcullis", "y"], { v: 3, e: 0 });
    assert.deepEqual(await new DenoKV(raw).getMany(["x", "y"]), [null, null]);
  } finally {
    raw.close();
  }
});

Deno.test("MemoryKV sweeps expired entries as writes happen", async () => {
  const clock = new Clock();
  const kv = new MemoryKV({ now: clock.now });
  for (let i = 0; i < 1000; i++) await kv.put(`k${i}`, "v", { ttlSeconds: 1 });
  clock.advance(2);
  for (let i = 0; i < 100; i++) await kv.put(`n${i}`, "v");
  assert.ok(kv.size <= 100, `size ${kv.size}`);
});
