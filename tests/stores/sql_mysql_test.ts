import mysql from "mysql2/promise";
import { drizzle } from "drizzle-orm/mysql2";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "../../stores/sql/mod.ts";
import { requireTcp } from "../support/services.ts";
import {
  testCredentialStore,
  testVerificationTokenStore,
} from "./_conformance.ts";
import {
  type OpenedDatabase,
  ownedTables,
  testSQLExtras,
} from "./sql_extras.ts";

// A real MariaDB (or MySQL) on 127.0.0.1:3306, database `test`. Each run
// uses a random table prefix, so reruns never collide; the last test drops
// this run's tables.
const CONNECTION = {
  host: "127.0.0.1",
  port: 3306,
  user: "root",
  password: "",
  database: "test",
};
const tablePrefix = `pc${crypto.randomUUID().slice(0, 8)}_`;

let reachable: Promise<boolean> | undefined;
const available = (): Promise<boolean> =>
  reachable ??= requireTcp("MariaDB", 3306);

let migrated = false;

async function open(): Promise<OpenedDatabase> {
  // Ten connections, so the race steps really race in the server.
  const pool = mysql.createPool({ ...CONNECTION, connectionLimit: 10 });
  const db = drizzle({ client: pool });
  await migrate(db, { tablePrefix });
  migrated = true;
  return { db, tablePrefix, close: () => pool.end() };
}

let users: OpenedDatabase | undefined;
testCredentialStore(
  "SQLCredentialStore (MariaDB via mysql2)",
  async () =>
    new SQLCredentialStore((users = await open()).db, { tablePrefix }),
  { available, close: () => users?.close() },
);

let tokens: OpenedDatabase | undefined;
testVerificationTokenStore(
  "SQLVerificationTokenStore (MariaDB via mysql2)",
  async () =>
    new SQLVerificationTokenStore((tokens = await open()).db, { tablePrefix }),
  { available, close: () => tokens?.close() },
);

testSQLExtras("MariaDB", open, available);

Deno.test("MariaDB: drop this run's tables", async () => {
  if (!migrated) return;
  const conn = await mysql.createConnection(CONNECTION);
  try {
    await conn.query(
      `DROP TABLE IF EXISTS ${
        ownedTables(tablePrefix).map((t) => `\`${t}\``).join(", ")
      }`,
    );
  } finally {
    await conn.end();
  }
});
