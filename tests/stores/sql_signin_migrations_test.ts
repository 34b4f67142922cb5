import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { PGlite } from "@electric-sql/pglite";
import {
  signInMigrationStatements,
  type SQLDialect,
} from "../../stores/sql/mod.ts";

const DIALECTS: SQLDialect[] = ["sqlite", "postgresql", "mysql"];

function read(dialect: SQLDialect): Promise<string> {
  return Deno.readTextFile(
    new URL(
      `../../stores/sql/migrations/0003_signin.${dialect}.sql`,
      import.meta.url,
    ),
  );
}

function statementsOf(text: string): string[] {
  return text.split("\n").filter((l) => !l.startsWith("--")).join("\n")
    .split(/;\s*\n/).map((s) => s.trim()).filter((s) => s.length > 0);
}

for (const dialect of DIALECTS) {
  Deno.test(`the shipped 0003 ${dialect} file equals signInMigrationStatements("${dialect}")`, async () => {
    assert.deepEqual(
      statementsOf(await read(dialect)),
      signInMigrationStatements(dialect),
    );
  });
}

Deno.test("every 0003 statement is idempotent and none drops or alters", () => {
  for (const dialect of DIALECTS) {
    for (const s of signInMigrationStatements(dialect, { tablePrefix: "x_" })) {
      assert.match(s, /^CREATE (TABLE|INDEX) IF NOT EXISTS "?`?x_/);
      assert.doesNotMatch(s, /\b(DROP|ALTER|DELETE)\b/i);
    }
  }
});

Deno.test("the shipped 0003 files run twice on libSQL and PGlite", async () => {
  const client = createClient({ url: ":memory:" });
  const pg = new PGlite();
  try {
    for (let i = 0; i < 2; i++) {
      await client.executeMultiple(await read("sqlite"));
      await pg.exec(await read("postgresql"));
    }
    const names = (await client.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    )).rows.map((r) => r.name);
    assert.deepEqual(names, [
      "identities",
      "passkeys",
      "recovery_codes",
      "totp_credentials",
    ]);
  } finally {
    client.close();
    await pg.close();
  }
});
