/**
 * The schema's single source: the embedded migrations equal the committed
 * SQL files, table prefixes rename every object, and an application's own
 * drizzle table references `users` with full types (foreign key, join).
 *
 * @module
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { eq, getTableName } from "drizzle-orm";
import { MIGRATIONS } from "../../stores/sql/_migrations.ts";
import {
  migrate,
  migrationSQL,
  SQLCredentialStore,
  type SQLDialect,
  tableNames,
} from "../../stores/sql/mod.ts";
import { sqliteSchema, users } from "../../stores/sql/schema/sqlite.ts";
import { pgSchema } from "../../stores/sql/schema/postgresql.ts";
import { mysqlSchema } from "../../stores/sql/schema/mysql.ts";
import { notes } from "../fixtures/sql_app_schema/notes_schema.ts";

const DIALECTS: SQLDialect[] = ["sqlite", "postgresql", "mysql"];

async function sha256(text: string): Promise<string> {
  const d = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

for (const dialect of DIALECTS) {
  Deno.test(`the embedded ${dialect} migrations equal stores/sql/migrations/${dialect}/ and drizzle-kit's journal`, async () => {
    const dir = new URL(
      `../../stores/sql/migrations/${dialect}/`,
      import.meta.url,
    );
    const journal = JSON.parse(
      await Deno.readTextFile(new URL("meta/_journal.json", dir)),
    ) as { dialect: string; entries: { tag: string }[] };
    assert.deepEqual(
      MIGRATIONS[dialect].map((m) => m.tag),
      journal.entries.map((e) => e.tag),
    );
    for (const m of MIGRATIONS[dialect]) {
      const text = await Deno.readTextFile(new URL(`${m.tag}.sql`, dir));
      assert.equal(m.sql, text, m.tag);
      assert.equal(m.hash, await sha256(text), m.tag);
    }
  });
}

Deno.test("migration 0000 is the 0.2.0 tables and 0001 only deletes orphans and adds the foreign keys", () => {
  for (const dialect of DIALECTS) {
    const [first, second] = migrationSQL(dialect);
    assert.equal(first.tag, "0000_v0_2_0");
    for (const s of first.statements) {
      assert.match(s, /^CREATE (TABLE|(UNIQUE )?INDEX) /, `${dialect}: ${s}`);
    }
    assert.equal(second.tag, "0001_credential_foreign_keys");
    assert.equal(second.statements.filter((s) => /^DELETE /.test(s)).length, 4);
    assert.equal(
      second.statements.filter((s) => /ON DELETE cascade/i.test(s)).length,
      4,
      dialect,
    );
    assert.ok(
      second.statements.every((s) => !/DROP TABLE [`"]users[`"]/.test(s)),
      "users is never rebuilt",
    );
  }
});

Deno.test("a table prefix renames every table, index and constraint of every migration", () => {
  for (const dialect of DIALECTS) {
    const plain = migrationSQL(dialect).flatMap((m) => m.statements).join("\n");
    const prefixed = migrationSQL(dialect, { tablePrefix: "auth_" })
      .flatMap((m) => m.statements).join("\n");
    const names = (text: string) =>
      [...text.matchAll(
        /(?:CREATE TABLE|INDEX|CONSTRAINT|REFERENCES|ON|FROM|INTO|ALTER TABLE|RENAME TO|DROP TABLE) [`"](\w+)[`"]/g,
      )]
        .map((m) => m[1]);
    const before = names(plain);
    const after = names(prefixed);
    assert.equal(after.length, before.length);
    assert.deepEqual(after, before.map((n) => `auth_${n}`), dialect);
  }
});

Deno.test("the drizzle tables carry the prefix the stores use", () => {
  for (
    const schema of [
      sqliteSchema("auth_"),
      pgSchema("auth_"),
      mysqlSchema("auth_"),
    ]
  ) {
    assert.equal(getTableName(schema.users), tableNames("auth_").users);
    assert.equal(getTableName(schema.recoveryCodes), "auth_recovery_codes");
  }
  assert.throws(() => sqliteSchema('x"; DROP TABLE users; --'), TypeError);
  for (const bad of ["a-b", "1x", "a".repeat(25), "ä"]) {
    assert.throws(
      () => migrationSQL("sqlite", { tablePrefix: bad }),
      TypeError,
    );
  }
  assert.throws(() => migrationSQL("oracle" as SQLDialect), TypeError);
});

Deno.test("an application's table references users: typed join, and its rows go with the user", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const db = drizzle(client);
    await migrate(db);
    await client.execute(
      "CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, text TEXT NOT NULL, created_at INTEGER NOT NULL)",
    );
    const store = new SQLCredentialStore(db);
    await store.create({
      id: "u1",
      email: "a@example.com",
      passwordHash: "$x",
      createdAt: 1,
    });
    await db.insert(notes).values({
      id: "n1",
      ownerId: "u1",
      text: "hello",
      createdAt: 2,
    });
    const rows = await db.select({ email: users.email, text: notes.text })
      .from(notes).innerJoin(users, eq(notes.ownerId, users.id));
    // Typed: `rows[0].email` is a string, `verifiedAt` a number.
    const email: string = rows[0].email;
    assert.deepEqual(rows, [{ email: "a@example.com", text: "hello" }]);
    assert.equal(email, "a@example.com");
    const [u] = await db.select().from(users).where(eq(users.id, "u1"));
    const verifiedAt: number = u.verifiedAt;
    assert.equal(verifiedAt, 0);
    await store.deleteUser("u1");
    assert.deepEqual(await db.select().from(notes), []);
  } finally {
    client.close();
  }
});
