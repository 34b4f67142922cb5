import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { PGlite } from "@electric-sql/pglite";
import {
  lifecycleMigrationStatements,
  type SQLDialect,
} from "../../stores/sql/mod.ts";

const DIALECTS: SQLDialect[] = ["sqlite", "postgresql", "mysql"];

function readMigration(dialect: SQLDialect): Promise<string> {
  return Deno.readTextFile(
    new URL(
      `../../stores/sql/migrations/0002_lifecycle.${dialect}.sql`,
      import.meta.url,
    ),
  );
}

function statementsOf(text: string): string[] {
  return text.split("\n").filter((line) => !line.startsWith("--")).join("\n")
    .split(/;\s*\n/).map((s) => s.trim()).filter((s) => s.length > 0);
}

for (const dialect of DIALECTS) {
  Deno.test(`the shipped ${dialect} 0002 migration file equals lifecycleMigrationStatements("${dialect}")`, async () => {
    assert.deepEqual(
      statementsOf(await readMigration(dialect)),
      lifecycleMigrationStatements(dialect),
    );
  });
}

Deno.test("0002 statements are idempotent and never drop or alter", () => {
  for (const dialect of DIALECTS) {
    for (
      const s of lifecycleMigrationStatements(dialect, { tablePrefix: "x_" })
    ) {
      assert.match(s, /^CREATE (TABLE|INDEX) IF NOT EXISTS /);
      assert.doesNotMatch(s, /\b(DROP|ALTER|DELETE)\b/i);
    }
  }
  assert.throws(
    () => lifecycleMigrationStatements("sqlite", { tablePrefix: "1x" }),
    TypeError,
  );
  assert.throws(
    () => lifecycleMigrationStatements("oracle" as SQLDialect),
    TypeError,
  );
});

Deno.test("the shipped 0002 files run twice on libSQL and PGlite", async () => {
  const client = createClient({ url: ":memory:" });
  const pg = new PGlite();
  try {
    const lite = await readMigration("sqlite");
    await client.executeMultiple(lite);
    await client.executeMultiple(lite);
    const cols = (await client.execute("PRAGMA table_info(auth_events)")).rows
      .map((r) => `${r.name} ${r.type} ${r.notnull}`);
    assert.deepEqual(cols, [
      "id TEXT 1",
      "subject TEXT 1",
      "type TEXT 1",
      "at INTEGER 1",
      "user_agent TEXT 0",
    ]);
    const text = await readMigration("postgresql");
    await pg.exec(text);
    await pg.exec(text);
    const { rows } = await pg.query<{ column_name: string; data_type: string }>(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'auth_events' ORDER BY ordinal_position",
    );
    assert.deepEqual(rows.map((r) => `${r.column_name} ${r.data_type}`), [
      "id text",
      "subject text",
      "type text",
      "at bigint",
      "user_agent text",
    ]);
  } finally {
    client.close();
    await pg.close();
  }
});
