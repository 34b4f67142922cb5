import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openLocalSQLite } from "../../packages/accounts/deno/_node_sqlite.ts";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "../../stores/sql/mod.ts";
import {
  testCredentialStore,
  testVerificationTokenStore,
} from "../stores/_conformance.ts";

// The reference app's local SQLite database (node:sqlite, statements
// prepared once) must behave as the libSQL client did under the SQL stores.
const dir = await Deno.makeTempDir({ prefix: "portcullis-local-sqlite-" });

function opener(path: string) {
  let close = () => {};
  return {
    async open() {
      const opened = openLocalSQLite(path);
      close = opened.close;
      await migrate(opened.db);
      return opened.db;
    },
    close: () => close(),
  };
}

for (
  const [label, path] of [
    ["file", `${dir}/auth.db`],
    [":memory:", ":memory:"],
  ] as const
) {
  const users = opener(path);
  testCredentialStore(
    `SQLCredentialStore over openLocalSQLite (${label})`,
    async () => new SQLCredentialStore(await users.open()),
    { close: users.close },
  );
  const tokens = opener(path);
  testVerificationTokenStore(
    `SQLVerificationTokenStore over openLocalSQLite (${label})`,
    async () => new SQLVerificationTokenStore(await tokens.open()),
    { close: tokens.close },
  );
}

Deno.test("openLocalSQLite prepares each distinct statement once: 10,000 lookups prepare nothing more", async () => {
  // Count real prepares on node:sqlite's own class (the calls still run).
  const original = DatabaseSync.prototype.prepare;
  let prepares = 0;
  DatabaseSync.prototype.prepare = function (this: DatabaseSync, sql: string) {
    prepares++;
    return original.call(this, sql);
  };
  const { db, close } = openLocalSQLite(":memory:");
  try {
    await migrate(db);
    const store = new SQLCredentialStore(db);
    await store.create({
      id: "u1",
      email: "a@example.com",
      passwordHash: "$x",
      createdAt: 1,
    });
    assert.equal((await store.findById("u1"))?.email, "a@example.com");
    const warm = prepares;
    for (let i = 0; i < 10_000; i++) {
      assert.equal((await store.findById("u1"))?.email, "a@example.com");
      assert.equal(await store.findByEmail("b@example.com"), null);
    }
    assert.equal(prepares, warm + 1); // findByEmail's statement, once
  } finally {
    DatabaseSync.prototype.prepare = original;
    close();
  }
});

Deno.test("openLocalSQLite batches run in one transaction: a failing statement rolls the batch back", async () => {
  const { db, close } = openLocalSQLite(":memory:");
  try {
    await db.run("CREATE TABLE t (k TEXT PRIMARY KEY)");
    await db.run("INSERT INTO t VALUES ('a')");
    const { sql } = await import("drizzle-orm");
    await assert.rejects(
      db.batch([
        db.run(sql`INSERT INTO t VALUES ('b')`),
        db.run(sql`INSERT INTO t VALUES ('a')`),
      ] as never),
    );
    const rows = await db.all<{ k: string }>("SELECT k FROM t ORDER BY k");
    assert.deepEqual(rows.map((r) => r.k), ["a"]);
  } finally {
    close();
  }
});
