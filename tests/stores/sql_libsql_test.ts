import assert from "node:assert/strict";
import { type Client, createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  detectDialect,
  migrate,
  SQLCredentialStore,
  SQLMigrationError,
  SQLVerificationTokenStore,
} from "../../stores/sql/mod.ts";
import { AuthError } from "../../lib/auth_error.ts";
import {
  testCredentialStore,
  testVerificationTokenStore,
} from "./_conformance.ts";
import { scanForPlaintext } from "./sql_scan.ts";

const dir = await Deno.makeTempDir({ prefix: "portcullis-libsql-" });
const fileUrl = `file:${dir}/auth.db`;

/** Opens a libSQL database, migrated; `close()` closes the client. */
function opener(url: string, tablePrefix = "") {
  let client: Client | undefined;
  return {
    async open() {
      client = createClient({ url });
      const db = drizzle(client);
      await migrate(db, { tablePrefix });
      return db;
    },
    close() {
      client?.close();
    },
  };
}

for (
  const [label, url, prefix] of [
    ["libSQL file", fileUrl, ""],
    ["libSQL :memory:", ":memory:", ""],
    ["libSQL file, prefix auth_", fileUrl, "auth_"],
  ] as const
) {
  const users = opener(url, prefix);
  testCredentialStore(
    `SQLCredentialStore (${label})`,
    async () =>
      new SQLCredentialStore(await users.open(), { tablePrefix: prefix }),
    { close: users.close },
  );
  const tokens = opener(url, prefix);
  testVerificationTokenStore(
    `SQLVerificationTokenStore (${label})`,
    async () =>
      new SQLVerificationTokenStore(await tokens.open(), {
        tablePrefix: prefix,
      }),
    { close: tokens.close },
  );
}

Deno.test("libSQL: users survive closing and reopening the file", async () => {
  const url = `file:${dir}/reopen.db`;
  const first = createClient({ url });
  await migrate(drizzle(first));
  await new SQLCredentialStore(drizzle(first)).create({
    id: "u1",
    email: "a@example.com",
    passwordHash: "$h",
    createdAt: 7,
  });
  first.close();
  const second = createClient({ url });
  try {
    const got = await new SQLCredentialStore(drizzle(second)).findById("u1");
    assert.equal(got?.email, "a@example.com");
  } finally {
    second.close();
  }
});

Deno.test("libSQL: migrate() is idempotent and the prefix names the tables", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const db = drizzle(client);
    await migrate(db);
    await migrate(db);
    await migrate(db, { tablePrefix: "auth_" });
    const names = (await client.execute(
      "SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )).rows.map((r) => r.name);
    // Migration 0003 (sign-in methods) adds its tables next to 0001's.
    const signIn = [
      "identities",
      "identities_user_idx",
      "passkeys",
      "passkeys_user_idx",
      "recovery_codes",
      "totp_credentials",
    ];
    // Migration 0002 (API keys, bans) adds two tables and an index.
    assert.deepEqual(names, [
      "account_bans",
      "api_keys",
      "api_keys_user_idx",
      "auth_account_bans",
      "auth_api_keys",
      "auth_api_keys_user_idx",
      "auth_auth_events",
      "auth_auth_events_subject_at_idx",
      "auth_events",
      "auth_events_subject_at_idx",
      ...signIn.slice(0, 4).map((n) => `auth_${n}`),
      "auth_portcullis_migrations",
      ...signIn.slice(4).map((n) => `auth_${n}`),
      "auth_users",
      "auth_users_email_unique",
      "auth_verification_tokens",
      "auth_verification_tokens_subject_purpose_idx",
      ...signIn.slice(0, 4),
      "portcullis_migrations",
      ...signIn.slice(4),
      "users",
      "users_email_unique",
      "verification_tokens",
      "verification_tokens_subject_purpose_idx",
    ]);
  } finally {
    client.close();
  }
});

Deno.test("libSQL: verified_at defaults to 0 and a repeated id is an error, not emailTaken", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const db = drizzle(client);
    await migrate(db);
    await client.execute(
      "INSERT INTO users (id, email, password_hash, created_at) VALUES ('raw', 'raw@example.com', '$h', 1)",
    );
    const store = new SQLCredentialStore(db);
    assert.equal((await store.findById("raw"))?.verifiedAt, 0);
    const err = await store.create({
      id: "raw",
      email: "other@example.com",
      passwordHash: "$secret-hash",
      createdAt: 2,
    }).then(() => null, (e) => e);
    assert.ok(err instanceof AuthError, String(err));
    assert.equal(err.code, "STORE_UNAVAILABLE");
    assert.doesNotMatch(err.message, /other@example\.com|secret-hash/);
  } finally {
    client.close();
  }
});

Deno.test("libSQL: a store over a database nobody migrated throws SQLMigrationError naming the missing migrations", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const store = new SQLCredentialStore(drizzle(client));
    const err = await store.create({
      id: "u1",
      email: "who@example.com",
      passwordHash: "$pbkdf2-sha256$secret",
      createdAt: 1,
    }).then(() => null, (e) => e);
    assert.ok(err instanceof SQLMigrationError, String(err));
    assert.equal(err.code, "MIGRATIONS_PENDING");
    assert.deepEqual(err.migrations, [
      "0000_v0_2_0",
      "0001_credential_foreign_keys",
      "0002_api_keys_and_bans",
      "0003_passkey_backup_state",
    ]);
    assert.match(err.message, /migrate\(db\)/);
    assert.doesNotMatch(err.message, /who@example\.com|pbkdf2/);
    await assert.rejects(
      new SQLVerificationTokenStore(drizzle(client)).consume("ab", "p"),
      SQLMigrationError,
    );
  } finally {
    client.close();
  }
});

Deno.test("libSQL: a failing query throws STORE_UNAVAILABLE without the email or hash", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const db = drizzle(client);
    await migrate(db);
    await client.execute("DROP TABLE users");
    const err = await new SQLCredentialStore(db).create({
      id: "u1",
      email: "who@example.com",
      passwordHash: "$pbkdf2-sha256$secret",
      createdAt: 1,
    }).then(() => null, (e) => e);
    assert.ok(err instanceof AuthError);
    assert.equal(err.code, "STORE_UNAVAILABLE");
    assert.match(err.message, /no such table/);
    assert.doesNotMatch(err.message, /who@example\.com|pbkdf2/);
  } finally {
    client.close();
  }
});

Deno.test("libSQL: scanForPlaintext() finds a stored secret and nothing else", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const db = drizzle(client);
    await migrate(db);
    const password = "correct horse battery staple";
    const hash = "$pbkdf2-sha256$i=600000$c2FsdA$aGFzaA";
    await new SQLCredentialStore(db).create({
      id: "u1",
      email: "a@example.com",
      passwordHash: hash,
      createdAt: 1,
    });
    await new SQLVerificationTokenStore(db).put({
      tokenHash: "ab".repeat(32),
      purpose: "verify-email",
      subject: "u1",
      email: "a@example.com",
      expiresAt: 2,
      createdAt: 1,
    });
    assert.deepEqual(
      await scanForPlaintext(db, [password, "raw-token-value"]),
      [],
    );
    // Positive controls: the scanner does see what is stored.
    assert.deepEqual(await scanForPlaintext(db, [hash]), [
      { table: "users", column: "password_hash", needle: 0, encoding: "text" },
    ]);
    await client.execute({
      sql: "CREATE TABLE leak (v BLOB)",
    });
    await client.execute({
      sql: "INSERT INTO leak (v) VALUES (?)",
      args: [new TextEncoder().encode(password)],
    });
    const hits = await scanForPlaintext(db, [password]);
    assert.ok(hits.some((h) => h.table === "leak"), JSON.stringify(hits));
  } finally {
    client.close();
  }
});

Deno.test("detectDialect() refuses what is not a drizzle database", () => {
  assert.throws(() => detectDialect({} as never), TypeError);
  assert.throws(() => new SQLCredentialStore(null as never), TypeError);
  const client = createClient({ url: ":memory:" });
  try {
    assert.equal(detectDialect(drizzle(client)), "sqlite");
    assert.throws(
      () => new SQLCredentialStore(drizzle(client), { tablePrefix: "a-b" }),
      TypeError,
    );
  } finally {
    client.close();
  }
});

Deno.test({
  name: "libSQL: remove the temporary directory",
  fn: async () => {
    await Deno.remove(dir, { recursive: true });
  },
});
