/**
 * Checks every SQL dialect runs besides the shared conformance suites:
 * idempotent migrations, errors that hold no email or hash, and the
 * plaintext scanner with its positive control.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  migrate,
  SQLCredentialStore,
  type SQLDatabase,
  SQLVerificationTokenStore,
} from "../../stores/sql/mod.ts";
import { AuthError } from "../../lib/auth_error.ts";
import { scanForPlaintext } from "./sql_scan.ts";

/**
 * Every table `migrate` makes for a prefix, children before `users`, for a
 * test's clean-up (`DROP TABLE IF EXISTS` in this order).
 *
 * @param prefix The table prefix.
 * @returns The table names.
 */
export function ownedTables(prefix = ""): string[] {
  return [
    "api_keys",
    "account_bans",
    "recovery_codes",
    "totp_credentials",
    "passkeys",
    "identities",
    "auth_events",
    "verification_tokens",
    "users",
    "portcullis_migrations",
  ].map((name) => prefix + name);
}

/** A migrated database for one test, and how to let go of it. */
export interface OpenedDatabase {
  /** The drizzle database. */
  db: SQLDatabase;
  /** The table prefix the tables were made with. */
  tablePrefix: string;
  /** Closes the connection (tables may stay; the file's last test drops them). */
  close(): Promise<void> | void;
}

/**
 * Registers the extra SQL-store tests for one dialect and driver.
 *
 * @param name The driver's name, for test names.
 * @param open Opens and migrates a database; every call may share tables.
 * @param available Skip when this answers false (service missing).
 */
export function testSQLExtras(
  name: string,
  open: () => Promise<OpenedDatabase>,
  available: () => Promise<boolean> = () => Promise.resolve(true),
): void {
  const test = (title: string, fn: (o: OpenedDatabase) => Promise<void>) =>
    Deno.test({
      name: `${name}: ${title}`,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: async () => {
        if (!(await available())) return;
        const opened = await open();
        try {
          await fn(opened);
        } finally {
          await opened.close();
        }
      },
    });

  test("migrate() runs again without error", async ({ db, tablePrefix }) => {
    await migrate(db, { tablePrefix });
    await migrate(db, { tablePrefix });
  });

  test(
    "a repeated id is STORE_UNAVAILABLE, not emailTaken, and its message holds no email or hash",
    async ({ db, tablePrefix }) => {
      const store = new SQLCredentialStore(db, { tablePrefix });
      const id = `user_${crypto.randomUUID()}`;
      const first = await store.create({
        id,
        email: `first-${crypto.randomUUID()}@example.com`,
        passwordHash: "$h",
        createdAt: 1,
      });
      assert.deepEqual(first, { kind: "created" });
      const email = `second-${crypto.randomUUID()}@example.com`;
      const err = await store.create({
        id,
        email,
        passwordHash: "$pbkdf2-sha256$very-secret-hash",
        createdAt: 2,
      }).then(() => null, (e) => e);
      assert.ok(err instanceof AuthError, String(err));
      assert.equal(err.code, "STORE_UNAVAILABLE");
      assert.ok(!err.message.includes(email), err.message);
      assert.ok(!err.message.includes("very-secret-hash"), err.message);
      assert.equal(await store.findByEmail(email), null);
    },
  );

  test(
    "markVerified() refuses a time that is not a positive integer",
    async ({ db, tablePrefix }) => {
      const store = new SQLCredentialStore(db, { tablePrefix });
      for (const at of [0, -5, 1.5, Number.NaN]) {
        await assert.rejects(
          store.markVerified("u", "e@example.com", at),
          RangeError,
        );
      }
    },
  );

  test(
    "deleteExpired() removes only tokens that expired before the time given",
    async ({ db, tablePrefix }) => {
      const tokens = new SQLVerificationTokenStore(db, { tablePrefix });
      const base = {
        purpose: "verify-email",
        email: "a@example.com",
        createdAt: 1,
      };
      const old = {
        ...base,
        tokenHash: crypto.randomUUID(),
        subject: crypto.randomUUID(),
        expiresAt: 1_000,
      };
      const fresh = {
        ...base,
        tokenHash: crypto.randomUUID(),
        subject: crypto.randomUUID(),
        expiresAt: 4_000_000_000_000,
      };
      await tokens.put(old);
      await tokens.put(fresh);
      await tokens.deleteExpired(2_000);
      assert.equal(await tokens.consume(old.tokenHash, "verify-email"), null);
      assert.deepEqual(
        await tokens.consume(fresh.tokenHash, "verify-email"),
        fresh,
      );
    },
  );

  test(
    "scanForPlaintext() finds no password, and does find a stored hash (positive control)",
    async ({ db, tablePrefix }) => {
      const password = `correct horse ${crypto.randomUUID()}`;
      const hash = `$pbkdf2-sha256$i=600000$${crypto.randomUUID()}`;
      const rawToken = `token-${crypto.randomUUID()}`;
      const id = `user_${crypto.randomUUID()}`;
      const email = `scan-${crypto.randomUUID()}@example.com`;
      const store = new SQLCredentialStore(db, { tablePrefix });
      await store.create({ id, email, passwordHash: hash, createdAt: 1 });
      await new SQLVerificationTokenStore(db, { tablePrefix }).put({
        tokenHash: await sha256Hex(rawToken),
        purpose: "verify-email",
        subject: id,
        email,
        expiresAt: 2,
        createdAt: 1,
      });
      assert.deepEqual(
        await scanForPlaintext(db, [password, rawToken], { tablePrefix }),
        [],
      );
      const hits = await scanForPlaintext(db, [hash], { tablePrefix });
      assert.deepEqual(hits, [{
        table: `${tablePrefix}users`,
        column: "password_hash",
        needle: 0,
        encoding: "text",
      }]);
    },
  );
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return Array.from(
    new Uint8Array(digest),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}
