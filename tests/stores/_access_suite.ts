/**
 * The access stores of `@portcullis/sql` (API keys, bans, the user
 * directory, the events' actor) on one SQL backend: the suite each dialect
 * passes (issue 28).
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  SQLApiKeyStore,
  SQLAuthEventStore,
  SQLBanStore,
  SQLCredentialStore,
  type SQLDatabase,
  SQLUserDirectory,
} from "../../stores/sql/mod.ts";

/**
 * Registers the suite for one backend.
 *
 * @param name The backend's name.
 * @param open The migrated database (shared by the suite's tests).
 * @param available Whether the backend answers (a missing service).
 */
export function testAccessStores(
  name: string,
  open: () => Promise<SQLDatabase>,
  available?: () => Promise<boolean>,
): void {
  const test = (title: string, fn: (db: SQLDatabase) => Promise<void>) =>
    Deno.test({
      name: `access stores (${name}): ${title}`,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: async () => {
        if (available && !(await available())) return;
        await fn(await open());
      },
    });
  const tag = () => crypto.randomUUID().slice(0, 8);
  async function user(db: SQLDatabase, email?: string): Promise<string> {
    const id = `u_${tag()}`;
    await new SQLCredentialStore(db).create({
      id,
      email: email ?? `${id}@example.com`,
      passwordHash: "$x",
      createdAt: 1,
    });
    return id;
  }
  const keyId = () =>
    Array.from(
      crypto.getRandomValues(new Uint8Array(16)),
      (b) => "abcdefghijklmnopqrstuvwxyz234567"[b % 32],
    ).join("");

  test("an API key is found by its id in one query, with its hash, scopes and times; an unknown id is null; an id is unique", async (db) => {
    const keys = new SQLApiKeyStore(db);
    const u = await user(db);
    const id = keyId();
    const key = {
      id,
      subject: u,
      name: "CI job",
      hash: "a".repeat(64),
      scopes: ["notes:view", "notes:edit"],
      createdAt: 1_700_000_000_000,
      expiresAt: 1_800_000_000_000,
      lastUsedAt: 0,
    };
    assert.equal(await keys.add(key), true);
    assert.equal(await keys.add({ ...key, subject: u }), false);
    assert.deepEqual(await keys.findApiKey(id), {
      subject: u,
      hash: key.hash,
      scopes: key.scopes,
      createdAt: key.createdAt,
      expiresAt: key.expiresAt,
      lastUsedAt: 0,
    });
    assert.equal(await keys.findApiKey(keyId()), null);
    const listed = await keys.listFor(u);
    assert.equal(listed.length, 1);
    assert.equal(
      (listed[0] as unknown as Record<string, unknown>).hash,
      undefined,
    );
    assert.deepEqual(listed[0].scopes, key.scopes);
  });

  test("last use only moves forward; a key is revoked only by its owner; all of a user's keys go at once", async (db) => {
    const keys = new SQLApiKeyStore(db);
    const u = await user(db);
    const other = await user(db);
    const ids = [keyId(), keyId(), keyId()];
    for (const [i, id] of ids.entries()) {
      await keys.add({
        id,
        subject: u,
        name: `k${i}`,
        hash: "b".repeat(64),
        scopes: [],
        createdAt: 10 + i,
        expiresAt: 1e13,
        lastUsedAt: 0,
      });
    }
    await keys.recordApiKeyUse(ids[0], 500);
    await keys.recordApiKeyUse(ids[0], 400);
    assert.equal((await keys.findApiKey(ids[0]))?.lastUsedAt, 500);
    assert.deepEqual((await keys.listFor(u)).map((k) => k.name), [
      "k2",
      "k1",
      "k0",
    ]);
    assert.deepEqual((await keys.findApiKey(ids[0]))?.scopes, []);
    assert.equal(await keys.remove(other, ids[0]), false);
    assert.equal(await keys.remove(u, ids[0]), true);
    assert.equal(await keys.remove(u, ids[0]), false);
    assert.equal(await keys.removeAllFor(u), 2);
    assert.deepEqual(await keys.listFor(u), []);
  });

  test("a ban hides every key of its user from the request path, and an unban brings them back; deleting the user removes keys and ban (cascade)", async (db) => {
    const keys = new SQLApiKeyStore(db);
    const bans = new SQLBanStore(db);
    const users = new SQLCredentialStore(db);
    const u = await user(db);
    const id = keyId();
    await keys.add({
      id,
      subject: u,
      name: "k",
      hash: "c".repeat(64),
      scopes: ["x"],
      createdAt: 1,
      expiresAt: 1e13,
      lastUsedAt: 0,
    });
    assert.equal(
      await bans.ban({
        subject: u,
        reason: "spam",
        bannedBy: "op",
        bannedAt: 7,
      }),
      true,
    );
    assert.equal(
      await bans.ban({
        subject: u,
        reason: "again",
        bannedBy: "op",
        bannedAt: 8,
      }),
      false,
    );
    assert.deepEqual(await bans.find(u), {
      subject: u,
      reason: "spam",
      bannedBy: "op",
      bannedAt: 7,
    });
    assert.equal(await keys.findApiKey(id), null);
    assert.equal((await keys.listFor(u)).length, 1, "kept for the unban");
    assert.equal(await bans.unban(u), true);
    assert.equal(await bans.unban(u), false);
    assert.ok(await keys.findApiKey(id));
    await bans.ban({ subject: u, reason: "r", bannedBy: "op", bannedAt: 9 });
    assert.equal(await users.deleteUser(u), true);
    assert.equal(await bans.find(u), null);
    assert.deepEqual(await keys.listFor(u), []);
    // A ban of nobody is refused, not an error.
    assert.equal(
      await bans.ban({
        subject: `nobody_${tag()}`,
        reason: "r",
        bannedBy: "op",
        bannedAt: 1,
      }),
      false,
    );
  });

  test("the directory searches addresses for the text itself (no wildcards), pages by address, and marks bans", async (db) => {
    const t = tag();
    const dir = new SQLUserDirectory(db);
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      const email = `dir${i}_${t}@example.com`;
      made.push(await user(db, email));
    }
    const odd = await user(db, `dir%x_${t}@example.com`);
    await new SQLBanStore(db).ban({
      subject: made[3],
      reason: "r",
      bannedBy: "op",
      bannedAt: 1,
    });
    const first = await dir.search({ contains: `_${t}@`, limit: 3 });
    assert.equal(first.users.length, 3);
    assert.equal(first.next, first.users[2].email);
    const all = [...first.users];
    let next: string | null = first.next;
    while (next !== null) {
      const page = await dir.search({
        contains: `_${t}@`,
        after: next,
        limit: 3,
      });
      all.push(...page.users);
      next = page.next;
    }
    assert.equal(all.length, 8);
    assert.deepEqual(all.map((u) => u.email), all.map((u) => u.email).sort());
    assert.deepEqual(all.filter((u) => u.banned).map((u) => u.id), [made[3]]);
    assert.deepEqual(
      (await dir.search({ contains: `%x_${t}` })).users.map((u) => u.id),
      [odd],
    );
    assert.deepEqual((await dir.search({ contains: `dir_x${t}` })).users, []);
    assert.deepEqual(
      (await dir.search({ contains: `DIR0_${t.toUpperCase()}` })).users.map((
        u,
      ) => u.id),
      [made[0]],
      "the search folds case",
    );
    await assert.rejects(() => dir.search({ limit: 0 }), RangeError);
    await assert.rejects(() => dir.search({ limit: 101 }), RangeError);
  });

  test("a security event keeps its actor and its note", async (db) => {
    const events = new SQLAuthEventStore(db);
    const u = `s_${tag()}`;
    await events.append({
      type: "operator_acted",
      subject: u,
      at: 5,
      userAgent: null,
      actor: "op_1",
      detail: "POST /api/notes → 201",
    });
    await events.append({ type: "login", subject: u, at: 6, userAgent: null });
    assert.deepEqual(await events.list(u), [
      { type: "login", subject: u, at: 6, userAgent: null },
      {
        type: "operator_acted",
        subject: u,
        at: 5,
        userAgent: null,
        actor: "op_1",
        detail: "POST /api/notes → 201",
      },
    ]);
  });
}
