/**
 * Two instances starting at once: two PROCESSES run `migrate()` at the same
 * moment on one 0.2.0 database with rows (SQLite file, PostgreSQL,
 * MariaDB). Both must succeed, each migration must be applied once (one
 * journal row each), and the rows must all be there.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import postgres from "postgres";
import mysql from "mysql2/promise";
import { requireTcp } from "../support/services.ts";
import { schema020, SEED } from "./sql_fixture_0_2_0.ts";
import type { SQLDialect } from "../../stores/sql/mod.ts";

interface ChildResult {
  ok: boolean;
  started?: number;
  ended?: number;
  error?: string;
  cause?: string;
}

/** Starts both children, released at one instant, and answers their reports. */
async function race(
  dialect: SQLDialect,
  target: string,
): Promise<ChildResult[]> {
  const child = new URL("./sql_migrate_child.ts", import.meta.url).pathname;
  const importMap = new URL("../import_map.json", import.meta.url).pathname;
  const lock = new URL("../deno.lock", import.meta.url).pathname;
  // Time enough for both to load and connect before the start.
  const startAt = Date.now() + 4000;
  const runs = [0, 1].map(() =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `--import-map=${importMap}`,
        `--lock=${lock}`,
        child,
        dialect,
        target,
        String(startAt),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output()
  );
  const outputs = await Promise.all(runs);
  return outputs.map((o) => {
    const text = new TextDecoder().decode(o.stdout).trim().split("\n").at(-1);
    assert.ok(
      text,
      `child printed nothing: ${new TextDecoder().decode(o.stderr)}`,
    );
    return JSON.parse(text) as ChildResult;
  });
}

function assertBoth(results: ChildResult[]): void {
  for (const r of results) assert.equal(r.ok, true, JSON.stringify(r));
  // They really ran at the same time: each started before the other ended.
  const [a, b] = results;
  assert.ok(
    a.started! <= b.ended! && b.started! <= a.ended!,
    JSON.stringify(results),
  );
}

const JOURNAL = [
  "0000_v0_2_0",
  "0001_credential_foreign_keys",
  "0002_api_keys_and_bans",
  "0003_passkey_backup_state",
];

Deno.test({
  name:
    "two processes migrating one SQLite file at once: one applies, the other finds it done",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "portcullis-race-" });
    const file = `${dir}/app.db`;
    const client = createClient({ url: `file:${file}` });
    try {
      for (const s of await schema020("sqlite")) await client.execute(s);
      for (const s of SEED) await client.execute(s);
      client.close();
      assertBoth(await race("sqlite", file));
      const after = createClient({ url: `file:${file}` });
      try {
        const journal = (await after.execute(
          "SELECT id FROM portcullis_migrations ORDER BY id",
        )).rows.map((r) => r.id);
        assert.deepEqual(journal, JOURNAL);
        assert.equal(
          (await after.execute("SELECT count(*) AS n FROM recovery_codes"))
            .rows[0].n,
          3,
        );
        assert.equal(
          (await after.execute("SELECT count(*) AS n FROM users")).rows[0].n,
          2,
        );
      } finally {
        after.close();
      }
    } finally {
      client.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "two processes migrating one PostgreSQL schema at once: the advisory lock makes them take turns",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await requireTcp("PostgreSQL", 5432))) return;
    const schema = `portcullis_race_${crypto.randomUUID().replaceAll("-", "")}`;
    const client = postgres({
      host: "127.0.0.1",
      port: 5432,
      user: "postgres",
      database: "test",
      max: 1,
      onnotice: () => {},
    });
    try {
      await client.unsafe(`CREATE SCHEMA "${schema}"`);
      await client.unsafe(`SET search_path TO "${schema}"`);
      for (const s of await schema020("postgresql")) await client.unsafe(s);
      for (const s of SEED) await client.unsafe(s);
      assertBoth(await race("postgresql", schema));
      const journal = await client.unsafe(
        "SELECT id FROM portcullis_migrations ORDER BY id",
      );
      assert.deepEqual(journal.map((r) => r.id), JOURNAL);
      const [{ n }] = await client.unsafe(
        "SELECT count(*)::int AS n FROM recovery_codes",
      );
      assert.equal(n, 3);
    } finally {
      await client.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  },
});

Deno.test({
  name:
    "two processes migrating one MariaDB database at once: GET_LOCK makes them take turns",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    if (!(await requireTcp("MariaDB", 3306))) return;
    const database = `portcullis_race_${crypto.randomUUID().slice(0, 8)}`;
    const conn = await mysql.createConnection({
      host: "127.0.0.1",
      port: 3306,
      user: "root",
    });
    try {
      await conn.query(`CREATE DATABASE \`${database}\``);
      await conn.query(`USE \`${database}\``);
      for (const s of await schema020("mysql")) await conn.query(s);
      for (const s of SEED) await conn.query(s);
      assertBoth(await race("mysql", database));
      const [journal] = await conn.query(
        "SELECT id FROM portcullis_migrations ORDER BY id",
      );
      assert.deepEqual((journal as { id: string }[]).map((r) => r.id), JOURNAL);
      const [[{ n }]] = await conn.query(
        "SELECT count(*) AS n FROM recovery_codes",
      ) as unknown as [[{ n: number }]];
      assert.equal(Number(n), 3);
    } finally {
      await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await conn.end();
    }
  },
});
