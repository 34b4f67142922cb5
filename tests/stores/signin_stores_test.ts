/**
 * The sign-in stores on every backend: in memory, libSQL, PGlite, and the
 * shared PostgreSQL and MariaDB when they answer; and the access stores
 * (API keys, bans, the user directory) on each SQL one.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { drizzle as libsql } from "drizzle-orm/libsql";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as pglite } from "drizzle-orm/pglite";
import postgres from "postgres";
import { drizzle as pgjs } from "drizzle-orm/postgres-js";
import mysql from "mysql2/promise";
import { drizzle as mysqlDrizzle } from "drizzle-orm/mysql2";
import {
  migrate,
  SQLCredentialStore,
  type SQLDatabase,
  SQLIdentityStore,
  SQLPasskeyStore,
  SQLTotpStore,
} from "../../stores/sql/mod.ts";
import { MemoryTotpStore } from "../../packages/totp/mod.ts";
import { MemoryIdentityStore } from "../../packages/oidc/mod.ts";
import { MemoryPasskeyStore } from "../../packages/passkeys/mod.ts";
import { requireTcp } from "../support/services.ts";
import {
  testIdentityStore,
  testPasskeyStore,
  testTotpStore,
} from "./_signin_conformance.ts";
import { testAccessStores } from "./_access_suite.ts";

interface Backend {
  name: string;
  open: () => Promise<SQLDatabase>;
  available?: () => Promise<boolean>;
  close: () => Promise<void>;
}

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => p ??= fn();
}

const dir = await Deno.makeTempDir({ prefix: "portcullis-signin-" });
const libsqlClient = createClient({ url: `file:${dir}/signin.db` });
let pg: PGlite | undefined;
const schema = `portcullis_signin_${crypto.randomUUID().replaceAll("-", "")}`;
const database = `portcullis_signin_${crypto.randomUUID().slice(0, 8)}`;
let pgClient: ReturnType<typeof postgres> | undefined;
let mysqlPool: mysql.Pool | undefined;

const backends: Backend[] = [
  {
    name: "libSQL file",
    open: once(async () => {
      const db = libsql(libsqlClient);
      await migrate(db);
      return db;
    }),
    close: async () => {
      libsqlClient.close();
      await Deno.remove(dir, { recursive: true });
    },
  },
  {
    name: "PGlite",
    open: once(async () => {
      pg = new PGlite();
      const db = pglite(pg);
      await migrate(db);
      return db;
    }),
    close: async () => {
      await pg?.close();
    },
  },
  {
    name: "PostgreSQL",
    available: once(() => requireTcp("PostgreSQL", 5432)),
    open: once(async () => {
      const conn = {
        host: "127.0.0.1",
        port: 5432,
        user: "postgres",
        database: "test",
        onnotice: () => {},
      };
      const admin = postgres({ ...conn, max: 1 });
      await admin.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await admin.end();
      pgClient = postgres({
        ...conn,
        max: 8,
        connection: { search_path: schema },
      });
      const db = pgjs(pgClient);
      await migrate(db);
      return db;
    }),
    close: async () => {
      if (pgClient === undefined) return;
      await pgClient.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
      await pgClient.end();
    },
  },
  {
    name: "MariaDB",
    available: once(() => requireTcp("MariaDB", 3306)),
    open: once(async () => {
      const admin = await mysql.createConnection({
        host: "127.0.0.1",
        port: 3306,
        user: "root",
      });
      await admin.query(`CREATE DATABASE IF NOT EXISTS \`${database}\``);
      await admin.end();
      mysqlPool = mysql.createPool({
        host: "127.0.0.1",
        port: 3306,
        user: "root",
        database,
        connectionLimit: 8,
      });
      const db = mysqlDrizzle(mysqlPool);
      await migrate(db);
      return db;
    }),
    close: async () => {
      if (mysqlPool === undefined) return;
      await mysqlPool.query(`DROP DATABASE \`${database}\``);
      await mysqlPool.end();
    },
  },
];

testTotpStore("MemoryTotpStore", () => Promise.resolve(new MemoryTotpStore()));
testIdentityStore(
  "MemoryIdentityStore",
  () => Promise.resolve(new MemoryIdentityStore()),
);
testPasskeyStore(
  "MemoryPasskeyStore",
  () => Promise.resolve(new MemoryPasskeyStore()),
);
/**
 * The SQL store with a `users` row made for each subject the suite writes
 * for: every credential references its user (foreign key, cascade), while
 * the shared suites invent subjects as the in-memory stores allow.
 */
function withUsers<T extends object>(db: SQLDatabase, store: T): T {
  const users = new SQLCredentialStore(db);
  const made = new Set<string>();
  const ensure = async (id: string) => {
    if (made.has(id)) return;
    made.add(id);
    await users.create({
      id,
      email: `${id}@example.com`,
      passwordHash: "$x",
      createdAt: 0,
    });
  };
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        for (const arg of args.slice(0, 1)) {
          const subject = typeof arg === "string"
            ? arg
            : (arg as { subject?: unknown } | null)?.subject;
          if (typeof subject === "string") await ensure(subject);
        }
        return await value.apply(target, args);
      };
    },
  });
}

for (const b of backends) {
  testPasskeyStore(
    `SQLPasskeyStore (${b.name})`,
    async () => {
      const db = await b.open();
      return withUsers(db, new SQLPasskeyStore(db));
    },
    { available: b.available },
  );
  testIdentityStore(
    `SQLIdentityStore (${b.name})`,
    async () => {
      const db = await b.open();
      return withUsers(db, new SQLIdentityStore(db));
    },
    { available: b.available },
  );
  testTotpStore(
    `SQLTotpStore (${b.name})`,
    async () => {
      const db = await b.open();
      return withUsers(db, new SQLTotpStore(db));
    },
    { available: b.available },
  );
  // API keys, bans, the user directory, the events' actor (issue 28).
  testAccessStores(b.name, b.open, b.available);
}

Deno.test("sign-in stores: close the databases", async () => {
  for (const b of backends) await b.close();
});
