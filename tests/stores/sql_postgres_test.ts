import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
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
import { type OpenedDatabase, testSQLExtras } from "./sql_extras.ts";

// A real PostgreSQL on 127.0.0.1:5432 (trust auth). Each run works in a
// schema of its own, so reruns and parallel runs never collide; the last
// test drops it.
const CONNECTION = {
  host: "127.0.0.1",
  port: 5432,
  user: "postgres",
  database: "test",
  onnotice: () => {}, // "relation already exists, skipping" on re-migration
};
const schema = `portcullis_${crypto.randomUUID().replaceAll("-", "")}`;

let reachable: Promise<boolean> | undefined;
const available = (): Promise<boolean> =>
  reachable ??= requireTcp("PostgreSQL", 5432);

let created = false;

async function open(): Promise<OpenedDatabase> {
  if (!created) {
    const admin = postgres({ ...CONNECTION, max: 1 });
    await admin.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await admin.end();
    created = true;
  }
  // Ten connections, so the race steps really race in the server.
  const client = postgres({
    ...CONNECTION,
    max: 10,
    connection: { search_path: schema },
  });
  const db = drizzle(client);
  await migrate(db);
  return { db, tablePrefix: "", close: () => client.end() };
}

let users: OpenedDatabase | undefined;
testCredentialStore(
  "SQLCredentialStore (PostgreSQL via postgres)",
  async () => new SQLCredentialStore((users = await open()).db),
  { available, close: () => users?.close() },
);

let tokens: OpenedDatabase | undefined;
testVerificationTokenStore(
  "SQLVerificationTokenStore (PostgreSQL via postgres)",
  async () => new SQLVerificationTokenStore((tokens = await open()).db),
  { available, close: () => tokens?.close() },
);

testSQLExtras("PostgreSQL", open, available);

Deno.test("PostgreSQL: drop this run's schema", async () => {
  if (!created) return;
  const admin = postgres({ ...CONNECTION, max: 1 });
  try {
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await admin.end();
  }
});
