import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { PGlite } from "@electric-sql/pglite";
import { migrationStatements, type SQLDialect } from "../../stores/sql/mod.ts";

const DIALECTS: SQLDialect[] = ["sqlite", "postgresql", "mysql"];

function readMigration(dialect: SQLDialect): Promise<string> {
  return Deno.readTextFile(
    new URL(
      `../../stores/sql/migrations/0001_init.${dialect}.sql`,
      import.meta.url,
    ),
  );
}

/** The statements of a SQL file: comments dropped, split on `;` at line end. */
function statementsOf(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => !line.startsWith("--"))
    .join("\n")
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

for (const dialect of DIALECTS) {
  Deno.test(`the shipped ${dialect} migration file equals migrationStatements("${dialect}")`, async () => {
    assert.deepEqual(
      statementsOf(await readMigration(dialect)),
      migrationStatements(dialect),
    );
  });
}

Deno.test("every statement is idempotent (CREATE … IF NOT EXISTS) and none drops or alters", () => {
  for (const dialect of DIALECTS) {
    for (
      const statement of migrationStatements(dialect, { tablePrefix: "x_" })
    ) {
      assert.match(statement, /^CREATE (UNIQUE )?(TABLE|INDEX) IF NOT EXISTS /);
      assert.doesNotMatch(statement, /\b(DROP|ALTER|DELETE)\b/i);
    }
  }
});

Deno.test("the shipped SQLite file runs twice on libSQL", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const text = await readMigration("sqlite");
    await client.executeMultiple(text);
    await client.executeMultiple(text);
    const cols = (await client.execute("PRAGMA table_info(users)")).rows.map((
      r,
    ) => `${r.name} ${r.type} ${r.notnull} ${r.dflt_value} ${r.pk}`);
    assert.deepEqual(cols, [
      "id TEXT 1 null 1",
      "email TEXT 1 null 0",
      "password_hash TEXT 1 null 0",
      "verified_at INTEGER 1 0 0",
      "created_at INTEGER 1 null 0",
    ]);
  } finally {
    client.close();
  }
});

Deno.test("the shipped PostgreSQL file runs twice on PGlite, with BIGINT times", async () => {
  const pg = new PGlite();
  try {
    const text = await readMigration("postgresql");
    await pg.exec(text);
    await pg.exec(text);
    const { rows } = await pg.query<{ column_name: string; data_type: string }>(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'users' ORDER BY ordinal_position",
    );
    assert.deepEqual(rows.map((r) => `${r.column_name} ${r.data_type}`), [
      "id text",
      "email text",
      "password_hash text",
      "verified_at bigint",
      "created_at bigint",
    ]);
  } finally {
    await pg.close();
  }
});

Deno.test("a table prefix that is not a plain identifier is refused", () => {
  for (
    const bad of ["a-b", "1x", 'x"; DROP TABLE users; --', "a".repeat(25), "ä"]
  ) {
    assert.throws(
      () => migrationStatements("sqlite", { tablePrefix: bad }),
      TypeError,
    );
  }
  assert.throws(() => migrationStatements("oracle" as SQLDialect), TypeError);
});
