/**
 * `SQLCredentialStore` and `SQLVerificationTokenStore` over HTTP, as on
 * Turso: `@libsql/client/web` and `drizzle-orm/libsql` talking the libSQL
 * remote protocol to the bridge in `tests/support/libsql_http_bridge.ts`,
 * which runs the statements on a real local libSQL database file.
 */
import assert from "node:assert/strict";
import { type Client, createClient } from "@libsql/client/web";
import { drizzle } from "drizzle-orm/libsql";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "../../stores/sql/mod.ts";
import { AuthError } from "../../lib/auth_error.ts";
import {
  testCredentialStore,
  testVerificationTokenStore,
} from "./_conformance.ts";
import {
  type LibsqlHttpBridge,
  type LibsqlHttpBridgeOptions,
  startLibsqlHttpBridge,
} from "../support/libsql_http_bridge.ts";

/** A bridge and a web client to it, migrated; `close()` closes both. */
function opener(tablePrefix = "") {
  let bridge: LibsqlHttpBridge | undefined;
  let client: Client | undefined;
  return {
    async open() {
      bridge = await startLibsqlHttpBridge();
      client = createClient({ url: bridge.url, authToken: bridge.token });
      const db = drizzle(client);
      await migrate(db, { tablePrefix });
      return db;
    },
    async close() {
      const stats = bridge?.stats();
      client?.close();
      await bridge?.close();
      // The suite's traffic did go through the bridge.
      assert.ok((stats?.statements ?? 0) > 50, JSON.stringify(stats));
    },
  };
}

for (const prefix of ["", "auth_"]) {
  const label = prefix ? `, prefix ${prefix}` : "";
  const users = opener(prefix);
  testCredentialStore(
    `SQLCredentialStore (libSQL over HTTP${label})`,
    async () =>
      new SQLCredentialStore(await users.open(), { tablePrefix: prefix }),
    { close: users.close },
  );
  const tokens = opener(prefix);
  testVerificationTokenStore(
    `SQLVerificationTokenStore (libSQL over HTTP${label})`,
    async () =>
      new SQLVerificationTokenStore(await tokens.open(), {
        tablePrefix: prefix,
      }),
    { close: tokens.close },
  );
}

/** Runs `fn` with a fresh bridge and a web client to it. */
function withBridge(
  name: string,
  fn: (bridge: LibsqlHttpBridge, client: Client) => Promise<void>,
  options: LibsqlHttpBridgeOptions = {},
): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      const bridge = await startLibsqlHttpBridge(options);
      const client = createClient({ url: bridge.url, authToken: bridge.token });
      try {
        await fn(bridge, client);
      } finally {
        client.close();
        await bridge.close();
      }
    },
  });
}

withBridge(
  "libSQL over HTTP: migrate() creates the tables, is idempotent, and the prefix names them",
  async (bridge, client) => {
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
    // What went over HTTP is on the file: a local client sees it.
    const user = {
      id: "u1",
      email: "a@example.com",
      passwordHash: "$h",
      createdAt: 7,
    };
    await new SQLCredentialStore(db).create(user);
    const { createClient: createLocal } = await import("@libsql/client");
    const local = createLocal({ url: `file:${bridge.path}` });
    try {
      const rows = (await local.execute("SELECT email FROM users")).rows;
      assert.deepEqual(rows.map((r) => r.email), ["a@example.com"]);
    } finally {
      local.close();
    }
  },
);

withBridge(
  "libSQL over HTTP: a wrong or missing token is refused",
  async (bridge, client) => {
    await migrate(drizzle(client));
    for (const authToken of ["wrong", undefined]) {
      const other = createClient({ url: bridge.url, authToken });
      try {
        const err = await new SQLCredentialStore(drizzle(other))
          .findByEmail("a@example.com")
          .then(() => null, (e) => e);
        assert.ok(err instanceof AuthError, String(err));
        assert.equal(err.code, "STORE_UNAVAILABLE");
        assert.match(err.message, /UNAUTHORIZED/);
        await assert.rejects(
          other.execute("SELECT 1"),
          (e: Error & { code?: string }) => e.code === "UNAUTHORIZED",
        );
        await assert.rejects(migrate(drizzle(other)));
      } finally {
        other.close();
      }
    }
    const raw = await fetch(`${bridge.url}/v2/pipeline`, {
      method: "POST",
      body: JSON.stringify({ requests: [] }),
    });
    assert.equal(raw.status, 401);
    await raw.body?.cancel();
  },
);

withBridge(
  "libSQL over HTTP: a unique violation keeps its SQLite code and message",
  async (_bridge, client) => {
    const db = drizzle(client);
    await migrate(db);
    const store = new SQLCredentialStore(db);
    const user = { id: "u1", email: "a@example.com", passwordHash: "$h" };
    assert.deepEqual(await store.create({ ...user, createdAt: 1 }), {
      kind: "created",
    });
    assert.deepEqual(
      await store.create({ ...user, id: "u2", createdAt: 2 }),
      { kind: "emailTaken" },
    );
    await assert.rejects(
      client.execute({
        sql:
          "INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)",
        args: ["u3", "a@example.com", "$h", 3],
      }),
      (e: Error & { code?: string }) =>
        e.code === "SQLITE_CONSTRAINT_UNIQUE" &&
        /UNIQUE constraint failed: users\.email/.test(e.message),
    );
  },
);

withBridge(
  "libSQL over HTTP: values round-trip with their types",
  async (bridge, client) => {
    const bytes = new Uint8Array([0, 1, 254, 255]);
    const row = (await client.execute({
      sql: "SELECT ? AS i, ? AS f, ? AS t, ? AS b, ? AS n",
      args: [7, 2.5, "é€", bytes, null],
    })).rows[0];
    assert.equal(row.i, 7);
    assert.equal(row.f, 2.5);
    assert.equal(row.t, "é€");
    assert.deepEqual(new Uint8Array(row.b as ArrayBuffer), bytes);
    assert.equal(row.n, null);
    const named = await client.execute({
      sql: "SELECT :name AS named, $other AS other",
      args: { name: "x", other: 3 },
    });
    assert.deepEqual([named.rows[0].named, named.rows[0].other], ["x", 3]);
    const bigint = createClient({
      url: bridge.url,
      authToken: bridge.token,
      intMode: "bigint",
    });
    try {
      const big = await bigint.execute({
        sql: "SELECT ? AS big, 1.0 AS real",
        args: [9007199254740993n],
      });
      assert.equal(big.rows[0].big, 9007199254740993n);
      assert.equal(typeof big.rows[0].real, "number");
    } finally {
      bigint.close();
    }
  },
);

withBridge(
  "libSQL over HTTP: an interactive transaction commits or rolls back, and other streams wait for it",
  async (bridge, client) => {
    await client.execute("CREATE TABLE t (v TEXT)");
    const rolled = await client.transaction("write");
    await rolled.execute("INSERT INTO t VALUES ('rolled back')");
    await rolled.rollback();

    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO t VALUES ('committed')");
    // Another stream's read waits for the transaction rather than failing.
    const other = createClient({ url: bridge.url, authToken: bridge.token });
    try {
      const reading = other.execute("SELECT v FROM t");
      let read = false;
      reading.then(() => read = true, () => read = true);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(read, false);
      assert.equal(
        (await tx.execute("SELECT count(*) AS n FROM t")).rows[0].n,
        1,
      );
      await tx.commit();
      assert.deepEqual((await reading).rows.map((r) => r.v), ["committed"]);
    } finally {
      other.close();
    }
    // A failing statement in a batch rolls the whole batch back.
    await assert.rejects(client.batch([
      "INSERT INTO t VALUES ('in a failed batch')",
      "INSERT INTO nowhere VALUES (1)",
    ]));
    assert.deepEqual(
      (await client.execute("SELECT v FROM t")).rows.map((r) => r.v),
      ["committed"],
    );
  },
);

withBridge(
  "libSQL over HTTP: an idle stream expires, its transaction is rolled back and the lock released",
  async (_bridge, client) => {
    await client.execute("CREATE TABLE t (v TEXT)");
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO t VALUES ('abandoned')");
    await new Promise((r) => setTimeout(r, 400));
    await assert.rejects(
      tx.execute("SELECT 1"),
      (e: Error & { code?: string }) => e.code === "STREAM_EXPIRED",
    );
    tx.close();
    assert.equal(
      (await client.execute("SELECT count(*) AS n FROM t")).rows[0].n,
      0,
    );
  },
  { streamIdleMs: 150 },
);

withBridge(
  "libSQL over HTTP: an unsupported request answers a Hrana error",
  async (bridge) => {
    const resp = await fetch(`${bridge.url}/v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${bridge.token}` },
      body: JSON.stringify({
        requests: [{ type: "describe", sql: "SELECT 1" }, { type: "close" }],
      }),
    });
    assert.equal(resp.status, 200);
    const body = await resp.json();
    assert.equal(body.baton, null);
    assert.equal(body.results[0].type, "error");
    assert.equal(body.results[0].error.code, "UNSUPPORTED");
    assert.deepEqual(body.results[1], {
      type: "ok",
      response: { type: "close" },
    });
    const expired = await fetch(`${bridge.url}/v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${bridge.token}` },
      body: JSON.stringify({ baton: "nope", requests: [{ type: "close" }] }),
    });
    assert.equal(expired.status, 400);
    assert.equal((await expired.json()).code, "STREAM_EXPIRED");
  },
);
