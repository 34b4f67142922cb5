/**
 * The upgrade from 0.2.0 on all six backends: a database made with the
 * pinned 0.2.0 SQL (tests/fixtures/sql_0_2_0/) and rows in every table,
 * then today's `migrate()`: every row is kept (the orphan credentials that
 * 0.2.0's account deletion left behind go), the journal records every
 * migration, the events gain their `actor` and `detail` (empty for the
 * rows kept), the API keys and bans tables appear, and deleting a user now
 * removes its identities, passkeys, TOTP enrolment, recovery codes, API
 * keys and ban (ON DELETE CASCADE).
 *
 * @module
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { createClient as createWebClient } from "@libsql/client/web";
import { drizzle as libsql } from "drizzle-orm/libsql";
import { drizzle as d1 } from "drizzle-orm/d1";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as pglite } from "drizzle-orm/pglite";
import postgres from "postgres";
import { drizzle as pgjs } from "drizzle-orm/postgres-js";
import mysql from "mysql2/promise";
import { drizzle as mysqlDrizzle } from "drizzle-orm/mysql2";
import { Miniflare } from "miniflare";
import { sql } from "drizzle-orm";
import { openLocalSQLite } from "../../packages/accounts/deno/_node_sqlite.ts";
import {
  checkMigrations,
  migrate,
  migrationSQL,
  SQLCredentialStore,
  type SQLDatabase,
  type SQLDialect,
  SQLMigrationError,
} from "../../stores/sql/mod.ts";
import { missing, requireTcp } from "../support/services.ts";
import { startLibsqlHttpBridge } from "../support/libsql_http_bridge.ts";
import { schema020, SEED } from "./sql_fixture_0_2_0.ts";

type Rows = Record<string, unknown>[];

/** One backend with a 0.2.0-shaped database to upgrade. */
interface Opened {
  dialect: SQLDialect;
  db: SQLDatabase;
  exec(statement: string): Promise<void>;
  all(query: string): Promise<Rows>;
  close(): Promise<void>;
}

interface Backend {
  name: string;
  available?: () => Promise<boolean>;
  open(): Promise<Opened>;
}

/** The tables 0.2.0 had (their rows are compared before and after). */
const TABLES = [
  "users",
  "verification_tokens",
  "auth_events",
  "identities",
  "passkeys",
  "totp_credentials",
  "recovery_codes",
];
/** Every table today (their columns are compared with a new database's). */
const ALL_TABLES = [...TABLES, "api_keys", "account_bans"];
const CREDENTIALS = [
  "identities",
  "passkeys",
  "totp_credentials",
  "recovery_codes",
];
/** The tables of 0002, with a row of each user once upgraded. */
const ACCESS = ["api_keys", "account_bans"];

/** Every row of every table, in a stable order, values as strings. */
async function snapshot(o: Opened): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of TABLES) {
    const rows = await o.all(`SELECT * FROM ${t}`);
    out[t] = rows.map((r) =>
      JSON.stringify(
        // The events' `actor` and `detail` (0002) are empty on the rows the
        // upgrade kept, and the passkeys' backup flags (0003) are 0 (not
        // eligible, not backed up: unknown for a passkey stored before):
        // a kept row compares with its 0.2.0 self.
        // (The reference app's node:sqlite adapter also gives each column
        // by its index: those duplicates are left out.)
        Object.keys(r).filter((k) =>
          !/^\d+$/.test(k) &&
          !(t === "auth_events" && (k === "actor" || k === "detail") &&
            r[k] === null) &&
          !(t === "passkeys" &&
            (k === "backup_eligible" || k === "backed_up") &&
            String(r[k]) === "0")
        ).sort().map((
          k,
        ) => [k, r[k] === null ? null : String(r[k])]),
      )
    ).sort();
  }
  return out;
}

/** The columns of every table as the database describes them. */
async function columns(o: Opened): Promise<string[]> {
  const out: string[] = [];
  for (const t of ALL_TABLES) {
    if (o.dialect === "sqlite") {
      for (const c of await o.all(`PRAGMA table_info(${t})`)) {
        out.push(
          `${t}.${c.name} ${c.type} ${c.notnull} ${c.dflt_value} ${c.pk}`,
        );
      }
      for (const f of await o.all(`PRAGMA foreign_key_list(${t})`)) {
        out.push(`${t} fk ${f.from} ${f.table}.${f.to} ${f.on_delete}`);
      }
    } else {
      const collation = o.dialect === "mysql"
        ? ", collation_name AS coll, column_type AS ctype"
        : "";
      const schema = o.dialect === "mysql" ? "DATABASE()" : "current_schema()";
      for (
        const c of await o.all(
          `SELECT column_name AS name, data_type AS type, is_nullable AS nullable, column_default AS dflt${collation} FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = '${t}' ORDER BY ordinal_position`,
        )
      ) {
        out.push(
          `${t}.${c.name} ${c.type} ${c.nullable} ${c.dflt} ${c.coll ?? ""} ${
            c.ctype ?? ""
          }`,
        );
      }
    }
  }
  return out;
}

function withoutGhost(
  before: Record<string, string[]>,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [t, rows] of Object.entries(before)) {
    out[t] = CREDENTIALS.includes(t)
      ? rows.filter((r) => !r.includes('"ghost"'))
      : rows;
  }
  return out;
}

const PG = {
  host: "127.0.0.1",
  port: 5432,
  user: "postgres",
  database: "test",
  onnotice: () => {},
};
const MY = { host: "127.0.0.1", port: 3306, user: "root" };

let mf: Miniflare | undefined;
let mfStarted: Promise<boolean> | undefined;
let d1Opened = 0;

const backends: Backend[] = [
  {
    name: "SQLite file (libSQL)",
    async open() {
      const dir = await Deno.makeTempDir({ prefix: "portcullis-upgrade-" });
      const client = createClient({ url: `file:${dir}/app.db` });
      return {
        dialect: "sqlite",
        db: libsql(client),
        exec: async (s) => void await client.execute(s),
        all: async (q) => (await client.execute(q)).rows as unknown as Rows,
        close: async () => {
          client.close();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
  },
  {
    name: "SQLite file (node:sqlite, the reference app's adapter)",
    async open() {
      const dir = await Deno.makeTempDir({ prefix: "portcullis-upgrade-" });
      const local = openLocalSQLite(`${dir}/app.db`);
      return {
        dialect: "sqlite",
        db: local.db,
        exec: async (s) => void await local.db.run(sql.raw(s)),
        all: async (q) => await local.db.all(sql.raw(q)) as Rows,
        close: async () => {
          local.close();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
  },
  {
    name: "libSQL over HTTP",
    async open() {
      const bridge = await startLibsqlHttpBridge();
      const client = createWebClient({
        url: bridge.url,
        authToken: bridge.token,
      });
      return {
        dialect: "sqlite",
        db: libsql(client),
        exec: async (s) => void await client.execute(s),
        all: async (q) => (await client.execute(q)).rows as unknown as Rows,
        close: async () => {
          client.close();
          await bridge.close();
        },
      };
    },
  },
  {
    name: "Cloudflare D1 (Miniflare)",
    available: () =>
      mfStarted ??= (async () => {
        try {
          mf = new Miniflare({
            modules: true,
            script: "export default { fetch() { return new Response('ok'); } }",
            d1Databases: ["UPGRADE_1", "UPGRADE_2", "UPGRADE_3"],
          });
          await mf.ready;
          return true;
        } catch (err) {
          return missing(`Miniflare could not start: ${String(err)}`);
        }
      })(),
    async open() {
      const binding = await mf!.getD1Database(`UPGRADE_${++d1Opened}`);
      return {
        dialect: "sqlite",
        // deno-lint-ignore no-explicit-any
        db: d1(binding as any),
        exec: async (s) => void await binding.prepare(s).run(),
        all: async (q) =>
          (await binding.prepare(q).all()).results as unknown as Rows,
        close: () => Promise.resolve(),
      };
    },
  },
  {
    name: "PGlite",
    async open() {
      const pg = await PGlite.create();
      return {
        dialect: "postgresql",
        db: pglite(pg),
        exec: async (s) => void await pg.exec(s),
        all: async (q) => (await pg.query(q)).rows as Rows,
        close: () => pg.close(),
      };
    },
  },
  {
    name: "PostgreSQL",
    available: () => requireTcp("PostgreSQL", 5432),
    async open() {
      const schema = `portcullis_upgrade_${
        crypto.randomUUID().replaceAll("-", "")
      }`;
      const admin = postgres({ ...PG, max: 1 });
      await admin.unsafe(`CREATE SCHEMA "${schema}"`);
      await admin.end();
      const client = postgres({
        ...PG,
        max: 4,
        connection: { search_path: schema },
      });
      return {
        dialect: "postgresql",
        db: pgjs(client),
        exec: async (s) => void await client.unsafe(s),
        all: async (q) => [...await client.unsafe(q)] as Rows,
        close: async () => {
          await client.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
          await client.end();
        },
      };
    },
  },
  {
    name: "MariaDB",
    available: () => requireTcp("MariaDB", 3306),
    async open() {
      const database = `portcullis_upgrade_${crypto.randomUUID().slice(0, 8)}`;
      const admin = await mysql.createConnection(MY);
      await admin.query(`CREATE DATABASE \`${database}\``);
      await admin.end();
      const pool = mysql.createPool({ ...MY, database, connectionLimit: 4 });
      return {
        dialect: "mysql",
        db: mysqlDrizzle(pool),
        exec: async (s) => void await pool.query(s),
        all: async (q) => (await pool.query(q))[0] as Rows,
        close: async () => {
          await pool.query(`DROP DATABASE \`${database}\``);
          await pool.end();
        },
      };
    },
  },
];

for (const b of backends) {
  Deno.test({
    name:
      `${b.name}: a 0.2.0 database with rows in every table upgrades in place, keeps every row and gains the cascade`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      if (b.available && !(await b.available())) return;
      const o = await b.open();
      try {
        for (const s of await schema020(o.dialect)) await o.exec(s);
        for (const s of SEED) await o.exec(s);
        const before = await snapshot(o);
        assert.equal(before.users.length, 2);

        // Before the upgrade, a store says what is missing.
        const store = new SQLCredentialStore(o.db);
        await assert.rejects(
          store.findById("u1"),
          (e) =>
            e instanceof SQLMigrationError && e.code === "MIGRATIONS_PENDING",
        );

        await migrate(o.db);
        assert.deepEqual(
          await snapshot(o),
          withoutGhost(before),
        );
        const journal = await o.all(
          "SELECT id FROM portcullis_migrations ORDER BY id",
        );
        assert.deepEqual(journal.map((r) => r.id), [
          "0000_v0_2_0",
          "0001_credential_foreign_keys",
          "0002_api_keys_and_bans",
          "0003_passkey_backup_state",
        ]);
        await checkMigrations(o.db);
        await migrate(o.db); // nothing left to do
        // The upgraded tables are those a new database gets.
        const fresh = await b.open();
        try {
          await migrate(fresh.db);
          assert.deepEqual(await columns(o), await columns(fresh));
        } finally {
          await fresh.close();
        }
        assert.deepEqual(
          await snapshot(o),
          withoutGhost(before),
        );

        // The new tables take rows of both users.
        for (const u of ["u1", "u2"]) {
          await o.exec(
            `INSERT INTO api_keys (id, user_id, name, secret_hash, scopes, created_at, expires_at, last_used_at) VALUES ('key${u}aaaaaaaaaaaa', '${u}', 'k', '${
              "0".repeat(64)
            }', 'notes:view', 1, 2, 0)`,
          );
          await o.exec(
            `INSERT INTO account_bans (user_id, reason, banned_by, banned_at) VALUES ('${u}', 'r', 'op', 1)`,
          );
        }

        // The login path reads the kept row.
        const users = new SQLCredentialStore(o.db);
        assert.equal((await users.findByEmail("josé@example.com"))?.id, "u2");

        // Deleting a user removes every credential of that user only.
        assert.equal(await users.deleteUser("u1"), true);
        for (const t of [...CREDENTIALS, ...ACCESS]) {
          const column = "user_id";
          const left = await o.all(`SELECT ${column} FROM ${t}`);
          assert.deepEqual(
            left.map((r) => r[column]),
            left.length === 0 ? [] : left.map(() => "u2"),
            t,
          );
          assert.ok(left.length > 0, `${t} keeps u2's rows`);
        }
        // A credential of a user who does not exist is refused now.
        await assert.rejects(
          o.exec(
            "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES ('nobody', 'c9', 1)",
          ),
        );
      } finally {
        await o.close();
      }
    },
  });

  Deno.test({
    name:
      `${b.name}: migrate() refuses a database migrated by a newer version and changes nothing`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      if (b.available && !(await b.available())) return;
      const o = await b.open();
      try {
        await migrate(o.db);
        await o.exec(
          "INSERT INTO portcullis_migrations (id, hash, applied_at) VALUES ('0099_from_the_future', 'x', 1)",
        );
        for (const run of [migrate, checkMigrations]) {
          const err = await run(o.db).then(() => null, (e) => e);
          assert.ok(err instanceof SQLMigrationError, String(err));
          assert.equal(err.code, "DATABASE_NEWER");
          assert.deepEqual(err.migrations, ["0099_from_the_future"]);
          assert.match(err.message, /newer @portcullis\/sql/);
        }
        assert.equal(
          (await o.all("SELECT id FROM portcullis_migrations")).length,
          5,
        );
      } finally {
        await o.close();
      }
    },
  });
}

Deno.test({
  name:
    "MariaDB: a step cut short after some of its DDL committed runs again to the end (MySQL DDL is not transactional)",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const mariadb = backends.find((b) => b.name === "MariaDB")!;
    if (!(await mariadb.available!())) return;
    const o = await mariadb.open();
    try {
      for (const s of await schema020("mysql")) await o.exec(s);
      for (const s of SEED) await o.exec(s);
      // 0.2.0 baselined, then 0001 died after its second foreign key.
      const [first, second] = migrationSQL("mysql");
      await o.exec(
        "CREATE TABLE portcullis_migrations (id VARCHAR(255) NOT NULL PRIMARY KEY, hash VARCHAR(64) NOT NULL, applied_at BIGINT NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
      );
      await o.exec(
        `INSERT INTO portcullis_migrations VALUES ('${first.tag}', '${first.hash}', 1)`,
      );
      const fks = second.statements.filter((s) => s.startsWith("ALTER"));
      for (
        const s of second.statements.slice(
          0,
          second.statements.indexOf(fks[1]) + 1,
        )
      ) {
        await o.exec(s);
      }
      await migrate(o.db);
      const names = await o.all(
        "SELECT constraint_name AS name FROM information_schema.referential_constraints WHERE constraint_schema = DATABASE() ORDER BY 1",
      );
      assert.deepEqual(names.map((r) => r.name), [
        "account_bans_user_fk",
        "api_keys_user_fk",
        "identities_user_fk",
        "passkeys_user_fk",
        "recovery_codes_user_fk",
        "totp_credentials_user_fk",
      ]);
      await checkMigrations(o.db);
    } finally {
      await o.close();
    }
  },
});

Deno.test({
  name: "upgrade: dispose of Miniflare",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await mf?.dispose();
  },
});
