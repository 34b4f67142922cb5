/**
 * Security-event stores: the in-memory one, and `SQLAuthEventStore` on
 * libSQL, PGlite, a real PostgreSQL and a real MariaDB.
 */
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { drizzle as drizzleMysql } from "drizzle-orm/mysql2";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import mysql from "mysql2/promise";
import { MemorySecurityEventStore } from "../../lib/events/memory_security_event_store.ts";
import {
  migrate,
  SQLAuthEventStore,
  type SQLDatabase,
} from "../../stores/sql/mod.ts";
import { requireTcp } from "../support/services.ts";
import { testSecurityEventStore } from "./_event_conformance.ts";
import { ownedTables } from "./sql_extras.ts";

testSecurityEventStore(
  "MemorySecurityEventStore",
  (retention) => new MemorySecurityEventStore(retention),
);

let libsql: ReturnType<typeof createClient> | undefined;
let libsqlDb: Promise<SQLDatabase> | undefined;
testSecurityEventStore("SQLAuthEventStore (libSQL)", async (retention) => {
  libsqlDb ??= (async () => {
    libsql = createClient({ url: ":memory:" });
    const db = drizzle(libsql);
    await migrate(db);
    return db;
  })();
  return new SQLAuthEventStore(await libsqlDb, retention);
}, { close: () => libsql?.close() });

let pglite: PGlite | undefined;
let pgliteDb: Promise<SQLDatabase> | undefined;
testSecurityEventStore("SQLAuthEventStore (PGlite)", async (retention) => {
  pgliteDb ??= (async () => {
    pglite = new PGlite();
    const db = drizzlePglite(pglite);
    await migrate(db);
    return db;
  })();
  return new SQLAuthEventStore(await pgliteDb, retention);
}, { close: () => pglite?.close() });

const PG = {
  host: "127.0.0.1",
  port: 5432,
  user: "postgres",
  database: "test",
  onnotice: () => {},
};
const schema = `portcullis_ev_${crypto.randomUUID().replaceAll("-", "")}`;
let pg: ReturnType<typeof postgres> | undefined;
let pgDb: Promise<SQLDatabase> | undefined;
testSecurityEventStore(
  "SQLAuthEventStore (PostgreSQL via postgres)",
  async (retention) => {
    pgDb ??= (async () => {
      const admin = postgres({ ...PG, max: 1 });
      await admin.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await admin.end();
      pg = postgres({ ...PG, max: 4, connection: { search_path: schema } });
      const db = drizzlePostgres(pg);
      await migrate(db);
      return db;
    })();
    return new SQLAuthEventStore(await pgDb, retention);
  },
  {
    available: () => requireTcp("PostgreSQL", 5432),
    close: async () => {
      await pg?.end();
      if (pg === undefined) return;
      const admin = postgres({ ...PG, max: 1 });
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  },
);

const MY = {
  host: "127.0.0.1",
  port: 3306,
  user: "root",
  password: "",
  database: "test",
};
const tablePrefix = `pe${crypto.randomUUID().slice(0, 8)}_`;
let pool: ReturnType<typeof mysql.createPool> | undefined;
let myDb: Promise<SQLDatabase> | undefined;
testSecurityEventStore(
  "SQLAuthEventStore (MariaDB via mysql2)",
  async (retention) => {
    myDb ??= (async () => {
      pool = mysql.createPool({ ...MY, connectionLimit: 4 });
      const db = drizzleMysql({ client: pool });
      await migrate(db, { tablePrefix });
      return db;
    })();
    return new SQLAuthEventStore(await myDb, { tablePrefix, ...retention });
  },
  {
    available: () => requireTcp("MariaDB", 3306),
    close: async () => {
      if (pool === undefined) return;
      await pool.query(
        `DROP TABLE IF EXISTS ${
          ownedTables(tablePrefix).map((t) => `\`${t}\``).join(", ")
        }`,
      );
      await pool.end();
    },
  },
);
