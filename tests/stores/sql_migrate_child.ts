/**
 * One instance starting up, for tests/stores/sql_concurrent_migrate_test.ts:
 * opens the database named on the command line, waits for the common start
 * time, runs `migrate()`, and prints one JSON line with what it saw.
 *
 *     deno run -A sql_migrate_child.ts <sqlite|postgresql|mysql> <target> <startAt>
 *
 * `target` is a file path (SQLite), a schema (PostgreSQL on 127.0.0.1:5432)
 * or a database (MariaDB on 127.0.0.1:3306).
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { drizzle as libsql } from "drizzle-orm/libsql";
import postgres from "postgres";
import { drizzle as pgjs } from "drizzle-orm/postgres-js";
import mysql from "mysql2/promise";
import { drizzle as mysqlDrizzle } from "drizzle-orm/mysql2";
import { migrate, type SQLDatabase } from "../../stores/sql/mod.ts";

const [dialect, target, startAt] = Deno.args;
let db: SQLDatabase;
let close: () => Promise<void>;
if (dialect === "sqlite") {
  const client = createClient({ url: `file:${target}` });
  db = libsql(client);
  close = () => Promise.resolve(client.close());
} else if (dialect === "postgresql") {
  const client = postgres({
    host: "127.0.0.1",
    port: 5432,
    user: "postgres",
    database: "test",
    max: 4,
    onnotice: () => {},
    connection: { search_path: target },
  });
  db = pgjs(client);
  close = () => client.end();
} else {
  const pool = mysql.createPool({
    host: "127.0.0.1",
    port: 3306,
    user: "root",
    database: target,
    connectionLimit: 4,
  });
  db = mysqlDrizzle(pool);
  close = () => pool.end();
}
await new Promise((r) =>
  setTimeout(r, Math.max(0, Number(startAt) - Date.now()))
);
const started = Date.now();
try {
  await migrate(db);
  console.log(JSON.stringify({ ok: true, started, ended: Date.now() }));
} catch (err) {
  console.log(
    JSON.stringify({
      ok: false,
      error: String(err),
      cause: String((err as Error).cause),
    }),
  );
} finally {
  await close();
}
