/**
 * The SQL stores on Cloudflare D1 through `drizzle-orm/d1`, against a real
 * D1 implementation: a database from Miniflare 4 (npm `miniflare`, which
 * runs Cloudflare's `workerd` runtime and its local D1 storage).
 */
import { Miniflare } from "miniflare";
import { drizzle } from "drizzle-orm/d1";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "../../stores/sql/mod.ts";
import { missing } from "../support/services.ts";
import {
  testCredentialStore,
  testVerificationTokenStore,
} from "./_conformance.ts";
import { type OpenedDatabase, testSQLExtras } from "./sql_extras.ts";

// One Miniflare (one workerd process) for the whole file; the last test
// disposes of it.
let mf: Miniflare | undefined;
let started: Promise<boolean> | undefined;

function available(): Promise<boolean> {
  started ??= (async () => {
    try {
      mf = new Miniflare({
        modules: true,
        script: "export default { fetch() { return new Response('ok'); } }",
        d1Databases: ["DB"],
      });
      await mf.ready;
      return true;
    } catch (err) {
      return missing(
        `Miniflare (workerd) could not start a local D1 database: ${
          err instanceof Error ? err.message : String(err)
        }`,
      );
    }
  })();
  return started;
}

async function open(): Promise<OpenedDatabase> {
  const d1 = await mf!.getD1Database("DB");
  // deno-lint-ignore no-explicit-any
  const db = drizzle(d1 as any);
  await migrate(db);
  return { db, tablePrefix: "", close: () => {} };
}

testCredentialStore(
  "SQLCredentialStore (Cloudflare D1 on Miniflare)",
  async () => new SQLCredentialStore((await open()).db),
  { available },
);
testVerificationTokenStore(
  "SQLVerificationTokenStore (Cloudflare D1 on Miniflare)",
  async () => new SQLVerificationTokenStore((await open()).db),
  { available },
);
testSQLExtras("Cloudflare D1", open, available);

Deno.test({
  name: "Cloudflare D1: dispose of Miniflare",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await mf?.dispose();
  },
});
