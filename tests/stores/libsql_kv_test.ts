/**
 * `LibsqlKV` against real libSQL: a database file in a temporary directory
 * and `:memory:`.
 */
import assert from "node:assert/strict";
import { type Client, createClient } from "@libsql/client";
import { LIBSQL_KV_TABLE, LibsqlKV } from "../../stores/libsql_kv/mod.ts";
import { testKeyValueStore } from "./_conformance.ts";

/** A clock the tests move by hand. */
function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = Date.now();
  return { now: () => t, advance: (ms) => t += ms };
}

async function tempFileClient(): Promise<{ client: Client; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-libsql-" });
  return { client: createClient({ url: `file:${dir}/kv.db` }), dir };
}

{
  const clock = fakeClock();
  let file: { client: Client; dir: string } | undefined;
  testKeyValueStore("LibsqlKV (file)", async () => {
    file = await tempFileClient();
    return new LibsqlKV(file.client, { now: clock.now });
  }, {
    expire: () => Promise.resolve(clock.advance(1001)),
    close: async () => {
      file?.client.close();
      if (file) await Deno.remove(file.dir, { recursive: true });
    },
  });
}

{
  const clock = fakeClock();
  let client: Client | undefined;
  testKeyValueStore("LibsqlKV (:memory:)", () => {
    client = createClient({ url: ":memory:" });
    return new LibsqlKV(client, { now: clock.now });
  }, {
    expire: () => Promise.resolve(clock.advance(1001)),
    close: () => client?.close(),
  });
}

async function count(client: Client): Promise<number> {
  const r = await client.execute(
    `SELECT count(*) AS n FROM ${LIBSQL_KV_TABLE}`,
  );
  return Number(r.rows[0].n);
}

Deno.test("LibsqlKV creates its table on first use, with the documented columns", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const kv = new LibsqlKV(client);
    assert.deepEqual(await kv.getMany(["a"]), [null]);
    const cols = await client.execute(`PRAGMA table_info(${LIBSQL_KV_TABLE})`);
    assert.deepEqual(
      cols.rows.map((r) => [r.name, r.type, Number(r.notnull), Number(r.pk)]),
      [
        ["key", "TEXT", 0, 1],
        ["value", "TEXT", 1, 0],
        ["expires_at", "INTEGER", 0, 0],
      ],
    );
    await kv.migrate(); // idempotent
    await new LibsqlKV(client).migrate(); // and so is a second store's
  } finally {
    client.close();
  }
});

Deno.test("LibsqlKV.getMany() runs one query however many keys (up to 500)", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const kv = new LibsqlKV(client);
    await kv.migrate();
    await kv.put("a", "1");
    let statements = 0;
    const counting = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === "execute") {
          return (...args: Parameters<Client["execute"]>) => {
            statements++;
            return target.execute(...args);
          };
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const reader = new LibsqlKV(counting);
    await reader.migrate();
    statements = 0;
    const keys = Array.from({ length: 500 }, (_, i) => `k${i}`);
    keys[250] = "a";
    const got = await reader.getMany(keys);
    assert.equal(statements, 1);
    assert.equal(got[250], "1");
    assert.equal(got.filter((v) => v !== null).length, 1);
  } finally {
    client.close();
  }
});

Deno.test("LibsqlKV never reads an expired row, and cleans expired rows up lazily", async () => {
  const client = createClient({ url: ":memory:" });
  const clock = fakeClock();
  try {
    const kv = new LibsqlKV(client, {
      now: clock.now,
      cleanupIntervalMs: 10_000,
    });
    await kv.put("short", "v", { ttlSeconds: 1 }); // first put: cleanup runs
    await kv.put("long", "w", { ttlSeconds: 3600 });
    clock.advance(1000); // exactly at expiry: gone
    assert.deepEqual(await kv.getMany(["short", "long"]), [null, "w"]);
    assert.equal(await count(client), 2); // reads never delete
    clock.advance(9000);
    await kv.put("other", "x"); // 10 s after the last cleanup
    assert.equal(await count(client), 2);
    const left = await client.execute(
      `SELECT key FROM ${LIBSQL_KV_TABLE} ORDER BY key`,
    );
    assert.deepEqual(left.rows.map((r) => r.key), ["long", "other"]);
    clock.advance(3600_000);
    assert.equal(await kv.deleteExpired(), 1);
  } finally {
    client.close();
  }
});

Deno.test("LibsqlKV keeps entries in the file across clients", async () => {
  const { client, dir } = await tempFileClient();
  try {
    await new LibsqlKV(client).put("persisted", "yes", { ttlSeconds: 60 });
    client.close();
    const again = createClient({ url: `file:${dir}/kv.db` });
    try {
      assert.deepEqual(await new LibsqlKV(again).getMany(["persisted"]), [
        "yes",
      ]);
    } finally {
      again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("LibsqlKV throws when the database fails, and retries its migration afterwards", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    // The real client, with every statement failing while `down` is set.
    let down = true;
    const flaky = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === "execute") {
          return (...args: Parameters<Client["execute"]>) =>
            down
              ? Promise.reject(new Error("database is unreachable"))
              : target.execute(...args);
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const kv = new LibsqlKV(flaky);
    await assert.rejects(kv.getMany(["a"]), /unreachable/);
    await assert.rejects(kv.put("a", "1"), /unreachable/);
    await assert.rejects(kv.delete("a"), /unreachable/);
    down = false;
    await kv.put("a", "1");
    assert.deepEqual(await kv.getMany(["a"]), ["1"]);
  } finally {
    client.close();
  }
});

Deno.test("LibsqlKV throws once its client is closed", async () => {
  const { client, dir } = await tempFileClient();
  try {
    const kv = new LibsqlKV(client);
    await kv.put("a", "1");
    client.close();
    await assert.rejects(kv.getMany(["a"]));
    await assert.rejects(kv.put("a", "2"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("LibsqlKV rejects a time to live that is not positive", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const kv = new LibsqlKV(client);
    for (const ttlSeconds of [0, -1, Number.NaN]) {
      await assert.rejects(kv.put("k", "v", { ttlSeconds }), RangeError);
    }
    assert.deepEqual(await kv.getMany(["k"]), [null]);
    assert.throws(
      () => new LibsqlKV(client, { cleanupIntervalMs: -1 }),
      RangeError,
    );
  } finally {
    client.close();
  }
});
