import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "../../stores/sql/mod.ts";
import {
  testCredentialStore,
  testVerificationTokenStore,
} from "./_conformance.ts";
import { type OpenedDatabase, testSQLExtras } from "./sql_extras.ts";

// One in-memory PGlite for the whole file (starting one takes about 1.5 s);
// the suites use random ids, and the last test closes it.
let client: PGlite | undefined;

async function open(): Promise<OpenedDatabase> {
  client ??= new PGlite();
  const db = drizzle(client);
  await migrate(db);
  return { db, tablePrefix: "", close: () => {} };
}

testCredentialStore(
  "SQLCredentialStore (PGlite)",
  async () => new SQLCredentialStore((await open()).db),
);
testVerificationTokenStore(
  "SQLVerificationTokenStore (PGlite)",
  async () => new SQLVerificationTokenStore((await open()).db),
);
testSQLExtras("PGlite", open);

Deno.test("PGlite: close the database", async () => {
  await client?.close();
});
