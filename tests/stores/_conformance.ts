/**
 * The shared suites every store passes (STYLE.md §11). A store's own test
 * file calls one of these with a factory, plus whatever is special to it.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { KeyValueStore } from "../../lib/kv/key_value_store.ts";
import type { CredentialStore } from "../../lib/authn/credential_store.ts";
import type {
  VerificationTokenRecord,
  VerificationTokenStore,
} from "../../lib/verification/verification_token_store.ts";

/** Options of {@linkcode testKeyValueStore}. */
export interface KVConformanceOptions {
  /** Skip the whole suite when this answers false (service missing). */
  available?: () => Promise<boolean>;
  /**
   * Waits long enough for an entry with `ttlSeconds: 1` to be gone. Stores
   * with an injectable clock advance it; others sleep.
   */
  expire?: () => Promise<void>;
  /** Called once after the suite. */
  close?: () => Promise<void> | void;
}

/**
 * Registers the key-value conformance tests for one store.
 *
 * @param name The store's name, for test names.
 * @param make Makes a fresh store; keys may be shared with earlier runs, so
 * the suite uses random keys.
 * @param options See {@linkcode KVConformanceOptions}.
 */
export function testKeyValueStore(
  name: string,
  make: () => Promise<KeyValueStore> | KeyValueStore,
  options: KVConformanceOptions = {},
): void {
  Deno.test({
    name: `${name} passes the key-value conformance suite`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      if (options.available && !(await options.available())) return;
      const kv = await make();
      const p = `conf:${crypto.randomUUID()}:`;
      try {
        await t.step(
          "getMany of missing keys answers null for each",
          async () => {
            assert.deepEqual(await kv.getMany([p + "a", p + "b"]), [
              null,
              null,
            ]);
          },
        );
        await t.step("getMany of no keys answers an empty list", async () => {
          assert.deepEqual(await kv.getMany([]), []);
        });
        await t.step(
          "put then getMany reads values back in key order",
          async () => {
            await kv.put(p + "x", "1");
            await kv.put(p + "y", "two words | and ünïcode ✓");
            assert.deepEqual(
              await kv.getMany([p + "y", p + "missing", p + "x"]),
              [
                "two words | and ünïcode ✓",
                null,
                "1",
              ],
            );
          },
        );
        await t.step("put overwrites", async () => {
          await kv.put(p + "x", "3");
          assert.deepEqual(await kv.getMany([p + "x"]), ["3"]);
        });
        await t.step(
          "delete removes, and deleting a missing key is fine",
          async () => {
            await kv.delete(p + "x");
            await kv.delete(p + "never-set");
            assert.deepEqual(await kv.getMany([p + "x"]), [null]);
          },
        );
        await t.step(
          "keys with separators and unicode are distinct",
          async () => {
            await kv.put(p + "a:b", "colon");
            await kv.put(p + "a|b", "pipe");
            await kv.put(p + "ä", "umlaut");
            assert.deepEqual(
              await kv.getMany([p + "a:b", p + "a|b", p + "ä", p + "a"]),
              [
                "colon",
                "pipe",
                "umlaut",
                null,
              ],
            );
          },
        );
        await t.step(
          "an entry with a time to live is readable before it expires",
          async () => {
            await kv.put(p + "ttl", "soon gone", { ttlSeconds: 3600 });
            assert.deepEqual(await kv.getMany([p + "ttl"]), ["soon gone"]);
          },
        );
        if (options.expire) {
          await t.step(
            "an entry is never read after its time to live",
            async () => {
              await kv.put(p + "short", "v", { ttlSeconds: 1 });
              await kv.put(p + "long", "w", { ttlSeconds: 3600 });
              await options.expire!();
              assert.deepEqual(await kv.getMany([p + "short", p + "long"]), [
                null,
                "w",
              ]);
            },
          );
        }
        if (typeof kv.increment === "function") {
          await t.step(
            "increment counts atomically from 1, even under concurrency",
            async () => {
              assert.equal(await kv.increment!(p + "n", 3600), 1);
              assert.equal(await kv.increment!(p + "n", 3600), 2);
              const results = await Promise.all(
                Array.from({ length: 20 }, () => kv.increment!(p + "c", 3600)),
              );
              assert.deepEqual(
                [...results].sort((a, b) => a - b),
                Array.from({ length: 20 }, (_, i) => i + 1),
              );
              assert.deepEqual(await kv.getMany([p + "c"]), ["20"]);
            },
          );
          if (options.expire) {
            await t.step("an expired counter starts again at 1", async () => {
              await kv.increment!(p + "w", 1);
              await kv.increment!(p + "w", 1);
              await options.expire!();
              assert.equal(await kv.increment!(p + "w", 1), 1);
            });
          }
        }
        await t.step("many keys in one call", async () => {
          const keys = Array.from({ length: 50 }, (_, i) => `${p}many:${i}`);
          await Promise.all(keys.map((k, i) => kv.put(k, String(i))));
          const got = await kv.getMany(keys);
          assert.deepEqual(got, keys.map((_, i) => String(i)));
        });
      } finally {
        await options.close?.();
      }
    },
  });
}

/** Options of {@linkcode testCredentialStore} and {@linkcode testVerificationTokenStore}. */
export interface StoreConformanceOptions {
  /** Skip the whole suite when this answers false (service missing). */
  available?: () => Promise<boolean>;
  /** Called once after the suite. */
  close?: () => Promise<void> | void;
  /** How many concurrent calls the race steps make; 50 unless told. */
  concurrency?: number;
}

/** A fresh, random, already normalised email; rows may outlive a run. */
function randomEmail(tag = "u"): string {
  return `${tag}-${crypto.randomUUID()}@example.com`;
}

/** A fresh, random subject id. */
function randomId(): string {
  return `user_${crypto.randomUUID()}`;
}

/**
 * Registers the credential-store conformance tests for one store
 * (`CredentialStore`, as docs/stores.md describes it).
 *
 * @param name The store's name, for test names.
 * @param make Makes the store; the tables may hold rows of earlier runs, so
 * the suite uses random ids and emails.
 * @param options See {@linkcode StoreConformanceOptions}.
 */
export function testCredentialStore(
  name: string,
  make: () => Promise<CredentialStore> | CredentialStore,
  options: StoreConformanceOptions = {},
): void {
  const n = options.concurrency ?? 50;
  Deno.test({
    name: `${name} passes the credential-store conformance suite`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      if (options.available && !(await options.available())) return;
      const store = await make();
      try {
        await t.step(
          "findByEmail() and findById() answer null when absent",
          async () => {
            assert.equal(await store.findByEmail(randomEmail()), null);
            assert.equal(await store.findById(randomId()), null);
          },
        );

        await t.step(
          "create() stores every field; verifiedAt starts at 0",
          async () => {
            const user = {
              id: randomId(),
              email: randomEmail(),
              passwordHash:
                "$pbkdf2-sha256$i=600000$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
              // Milliseconds beyond 2^32: a 32-bit column would break here.
              createdAt: 1_767_225_600_123,
            };
            assert.deepEqual(await store.create(user), { kind: "created" });
            const expected = { ...user, verifiedAt: 0 };
            assert.deepEqual(await store.findByEmail(user.email), expected);
            assert.deepEqual(await store.findById(user.id), expected);
          },
        );

        await t.step(
          "a returned record is a copy: changing it changes nothing stored",
          async () => {
            const id = randomId();
            const email = randomEmail();
            await store.create({ id, email, passwordHash: "$h", createdAt: 1 });
            const got = (await store.findById(id))!;
            got.passwordHash = "$changed";
            got.verifiedAt = 99;
            assert.equal((await store.findById(id))!.passwordHash, "$h");
            assert.equal((await store.findByEmail(email))!.verifiedAt, 0);
          },
        );

        await t.step(
          "create() with a taken email answers emailTaken, never throws, and keeps the first user",
          async () => {
            const email = randomEmail();
            const first = randomId();
            await store.create({
              id: first,
              email,
              passwordHash: "$first",
              createdAt: 1,
            });
            const again = await store.create({
              id: randomId(),
              email,
              passwordHash: "$second",
              createdAt: 2,
            });
            assert.deepEqual(again, { kind: "emailTaken" });
            const stored = (await store.findByEmail(email))!;
            assert.equal(stored.id, first);
            assert.equal(stored.passwordHash, "$first");
          },
        );

        await t.step(
          "emails match exactly: accents and case are distinct addresses",
          async () => {
            // A case- or accent-insensitive collation (MySQL's default) would
            // merge these and hand one person's row to another.
            const tag = crypto.randomUUID();
            const plain = `jose-${tag}@example.com`;
            const accent = `josé-${tag}@example.com`;
            const upper = `JOSE-${tag}@example.com`;
            const ids = [randomId(), randomId(), randomId()];
            for (const [i, email] of [plain, accent, upper].entries()) {
              assert.deepEqual(
                await store.create({
                  id: ids[i],
                  email,
                  passwordHash: `$${i}`,
                  createdAt: 1,
                }),
                { kind: "created" },
                email,
              );
            }
            assert.equal((await store.findByEmail(plain))!.id, ids[0]);
            assert.equal((await store.findByEmail(accent))!.id, ids[1]);
            assert.equal((await store.findByEmail(upper))!.id, ids[2]);
            assert.equal(
              await store.findByEmail(`jöse-${tag}@example.com`),
              null,
            );
          },
        );

        await t.step(
          `${n} concurrent creations of one email end in exactly one created`,
          async () => {
            const email = randomEmail("race");
            const ids = Array.from({ length: n }, randomId);
            const results = await Promise.all(
              ids.map((id, i) =>
                store.create({
                  id,
                  email,
                  passwordHash: `$race${i}`,
                  createdAt: i,
                })
              ),
            );
            const created = results.flatMap((r, i) =>
              r.kind === "created" ? [i] : []
            );
            assert.equal(created.length, 1, JSON.stringify(results));
            assert.equal(
              results.filter((r) => r.kind === "emailTaken").length,
              n - 1,
            );
            const winner = created[0];
            const stored = (await store.findByEmail(email))!;
            assert.equal(stored.id, ids[winner]);
            assert.equal(stored.passwordHash, `$race${winner}`);
            for (const [i, id] of ids.entries()) {
              if (i !== winner) assert.equal(await store.findById(id), null);
            }
          },
        );

        await t.step(
          `${n} concurrent creations of distinct emails are all created`,
          async () => {
            const results = await Promise.all(
              Array.from({ length: n }, (_, i) =>
                store.create({
                  id: randomId(),
                  email: randomEmail("many"),
                  passwordHash: `$m${i}`,
                  createdAt: i,
                })),
            );
            assert.ok(results.every((r) => r.kind === "created"));
          },
        );

        await t.step(
          "updatePasswordHash() without expected replaces the hash",
          async () => {
            const id = randomId();
            const email = randomEmail();
            await store.create({
              id,
              email,
              passwordHash: "$old",
              createdAt: 5,
            });
            assert.equal(await store.updatePasswordHash(id, "$new"), true);
            const got = (await store.findById(id))!;
            assert.equal(got.passwordHash, "$new");
            assert.equal(got.email, email);
            assert.equal(got.createdAt, 5);
            assert.equal(
              await store.updatePasswordHash(randomId(), "$x"),
              false,
            );
          },
        );

        await t.step(
          "updatePasswordHash() with expected is a compare-and-set",
          async () => {
            const id = randomId();
            await store.create({
              id,
              email: randomEmail(),
              passwordHash: "$v1",
              createdAt: 1,
            });
            assert.equal(
              await store.updatePasswordHash(id, "$v2", "$v1"),
              true,
            );
            assert.equal(
              await store.updatePasswordHash(id, "$v3", "$v1"),
              false,
              "a stale expected hash must not write",
            );
            assert.equal((await store.findById(id))!.passwordHash, "$v2");
            assert.equal(
              await store.updatePasswordHash(randomId(), "$v3", "$v2"),
              false,
            );
          },
        );

        await t.step(
          "concurrent compare-and-set updates from one hash: exactly one wins",
          async () => {
            const id = randomId();
            await store.create({
              id,
              email: randomEmail(),
              passwordHash: "$start",
              createdAt: 1,
            });
            const results = await Promise.all(
              Array.from(
                { length: 10 },
                (_, i) => store.updatePasswordHash(id, `$next${i}`, "$start"),
              ),
            );
            const winners = results.flatMap((ok, i) => ok ? [i] : []);
            assert.equal(winners.length, 1, JSON.stringify(results));
            assert.equal(
              (await store.findById(id))!.passwordHash,
              `$next${winners[0]}`,
            );
          },
        );

        await t.step(
          "markVerified() stamps only while the stored email still matches",
          async () => {
            const id = randomId();
            const email = randomEmail();
            await store.create({ id, email, passwordHash: "$h", createdAt: 1 });
            assert.equal(
              await store.markVerified(id, randomEmail("other"), 1_000),
              false,
              "a link sent to another address must not verify this one",
            );
            assert.equal((await store.findById(id))!.verifiedAt, 0);
            assert.equal(
              await store.markVerified(randomId(), email, 1_000),
              false,
            );
            const at = 1_767_225_600_456;
            assert.equal(await store.markVerified(id, email, at), true);
            const got = (await store.findByEmail(email))!;
            assert.equal(got.verifiedAt, at);
            assert.equal(got.passwordHash, "$h");
          },
        );

        await t.step(
          "updateEmail() moves a user to a new address and sets its verification",
          async () => {
            const id = randomId();
            const old = randomEmail("old");
            const next = randomEmail("new");
            await store.create({
              id,
              email: old,
              passwordHash: "$h",
              createdAt: 7,
            });
            await store.markVerified(id, old, 1_000);
            assert.deepEqual(await store.updateEmail(id, next), {
              kind: "updated",
            });
            assert.equal(await store.findByEmail(old), null);
            const moved = (await store.findByEmail(next))!;
            assert.deepEqual(moved, {
              id,
              email: next,
              passwordHash: "$h",
              verifiedAt: 0,
              createdAt: 7,
            });
            const third = randomEmail("third");
            const at = 1_767_225_600_999;
            assert.deepEqual(
              await store.updateEmail(id, third, { verifiedAt: at }),
              { kind: "updated" },
            );
            assert.equal((await store.findById(id))!.verifiedAt, at);
            assert.equal((await store.findById(id))!.email, third);
            // The freed address can be registered again.
            assert.deepEqual(
              await store.create({
                id: randomId(),
                email: old,
                passwordHash: "$o",
                createdAt: 8,
              }),
              { kind: "created" },
            );
          },
        );

        await t.step(
          "updateEmail() to a taken address answers emailTaken and changes nothing; unknown ids and stale expectations answer notFound",
          async () => {
            const a = randomId();
            const b = randomId();
            const emailA = randomEmail("a");
            const emailB = randomEmail("b");
            await store.create({
              id: a,
              email: emailA,
              passwordHash: "$a",
              createdAt: 1,
            });
            await store.create({
              id: b,
              email: emailB,
              passwordHash: "$b",
              createdAt: 1,
            });
            assert.deepEqual(await store.updateEmail(a, emailB), {
              kind: "emailTaken",
            });
            assert.equal((await store.findById(a))!.email, emailA);
            assert.equal((await store.findByEmail(emailB))!.id, b);
            assert.deepEqual(
              await store.updateEmail(randomId(), randomEmail()),
              { kind: "notFound" },
            );
            assert.deepEqual(
              await store.updateEmail(a, randomEmail(), {
                expectedEmail: randomEmail("stale"),
              }),
              { kind: "notFound" },
            );
            assert.equal((await store.findById(a))!.email, emailA);
            assert.deepEqual(
              await store.updateEmail(a, emailA, { expectedEmail: emailA }),
              { kind: "updated" },
              "moving to the address one already has is no conflict",
            );
          },
        );

        await t.step(
          `${n} users racing to updateEmail() to one address: exactly one wins`,
          async () => {
            const target = randomEmail("prize");
            const users = Array.from({ length: n }, () => ({
              id: randomId(),
              email: randomEmail("racer"),
            }));
            for (const u of users) {
              await store.create({ ...u, passwordHash: "$r", createdAt: 1 });
            }
            const results = await Promise.all(
              users.map((u) => store.updateEmail(u.id, target)),
            );
            const winners = results.flatMap((r, i) =>
              r.kind === "updated" ? [i] : []
            );
            assert.equal(winners.length, 1, JSON.stringify(results));
            assert.equal(
              results.filter((r) => r.kind === "emailTaken").length,
              n - 1,
            );
            assert.equal(
              (await store.findByEmail(target))!.id,
              users[winners[0]].id,
            );
            for (const [i, u] of users.entries()) {
              if (i === winners[0]) continue;
              assert.equal((await store.findById(u.id))!.email, u.email);
            }
          },
        );

        await t.step(
          "a registration and an email change racing for one address: exactly one wins",
          async () => {
            for (let round = 0; round < 5; round++) {
              const target = randomEmail("contest");
              const mover = randomId();
              await store.create({
                id: mover,
                email: randomEmail("mover"),
                passwordHash: "$m",
                createdAt: 1,
              });
              const [created, moved] = await Promise.all([
                store.create({
                  id: randomId(),
                  email: target,
                  passwordHash: "$n",
                  createdAt: 2,
                }),
                store.updateEmail(mover, target),
              ]);
              const wins = Number(created.kind === "created") +
                Number(moved.kind === "updated");
              assert.equal(wins, 1, JSON.stringify([created, moved]));
            }
          },
        );

        await t.step(
          "deleteUser() removes the user once; the address registers again",
          async () => {
            const id = randomId();
            const email = randomEmail("gone");
            await store.create({ id, email, passwordHash: "$g", createdAt: 1 });
            const keep = randomId();
            await store.create({
              id: keep,
              email: randomEmail("keep"),
              passwordHash: "$k",
              createdAt: 1,
            });
            assert.equal(await store.deleteUser(id), true);
            assert.equal(await store.findById(id), null);
            assert.equal(await store.findByEmail(email), null);
            assert.equal(await store.deleteUser(id), false);
            assert.equal(await store.deleteUser(randomId()), false);
            assert.ok(await store.findById(keep), "other users stay");
            assert.deepEqual(
              await store.create({
                id: randomId(),
                email,
                passwordHash: "$again",
                createdAt: 2,
              }),
              { kind: "created" },
            );
            assert.equal(await store.updatePasswordHash(id, "$x"), false);
          },
        );
      } finally {
        await options.close?.();
      }
    },
  });
}

/**
 * Registers the single-use-token conformance tests for one store
 * (`VerificationTokenStore`, SECURITY.md items 42 and 43).
 *
 * @param name The store's name, for test names.
 * @param make Makes the store; rows of earlier runs may exist, so the suite
 * uses random hashes and subjects.
 * @param options See {@linkcode StoreConformanceOptions}.
 */
export function testVerificationTokenStore(
  name: string,
  make: () => Promise<VerificationTokenStore> | VerificationTokenStore,
  options: StoreConformanceOptions = {},
): void {
  const n = options.concurrency ?? 50;
  const PURPOSE = "verify-email";
  const record = (
    over: Partial<VerificationTokenRecord> = {},
  ): VerificationTokenRecord => ({
    tokenHash: randomHash(),
    purpose: PURPOSE,
    subject: randomId(),
    email: randomEmail(),
    expiresAt: 1_767_312_000_789,
    createdAt: 1_767_225_600_789,
    ...over,
  });
  Deno.test({
    name: `${name} passes the single-use-token conformance suite`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      if (options.available && !(await options.available())) return;
      const store = await make();
      try {
        await t.step("consume() of an unknown hash answers null", async () => {
          assert.equal(await store.consume(randomHash(), PURPOSE), null);
        });

        await t.step(
          "put() then consume() returns the record once, then null",
          async () => {
            const r = record();
            await store.put(r);
            assert.deepEqual(await store.consume(r.tokenHash, PURPOSE), r);
            assert.equal(await store.consume(r.tokenHash, PURPOSE), null);
          },
        );

        await t.step(
          "consume() with another purpose answers null and leaves the token",
          async () => {
            const r = record();
            await store.put(r);
            assert.equal(await store.consume(r.tokenHash, "magic-link"), null);
            assert.deepEqual(await store.consume(r.tokenHash, PURPOSE), r);
          },
        );

        await t.step(
          "put() removes earlier tokens of the same subject and purpose only",
          async () => {
            const subject = randomId();
            const first = record({ subject, createdAt: 1, expiresAt: 10 });
            const otherPurpose = record({ subject, purpose: "magic-link" });
            const otherSubject = record();
            await store.put(first);
            await store.put(otherPurpose);
            await store.put(otherSubject);
            // The same millisecond as `first`: a frozen clock still replaces.
            const second = record({ subject, createdAt: 1, expiresAt: 10 });
            await store.put(second);
            assert.equal(await store.consume(first.tokenHash, PURPOSE), null);
            assert.deepEqual(
              await store.consume(second.tokenHash, PURPOSE),
              second,
            );
            assert.deepEqual(
              await store.consume(otherPurpose.tokenHash, "magic-link"),
              otherPurpose,
            );
            assert.deepEqual(
              await store.consume(otherSubject.tokenHash, PURPOSE),
              otherSubject,
            );
          },
        );

        await t.step(
          "deleteFor() removes a subject's tokens of one purpose only",
          async () => {
            const subject = randomId();
            const a = record({ subject });
            const b = record({ subject, purpose: "magic-link" });
            await store.put(a);
            await store.put(b);
            await store.deleteFor(subject, PURPOSE);
            await store.deleteFor(randomId(), PURPOSE); // nothing there: fine
            assert.equal(await store.consume(a.tokenHash, PURPOSE), null);
            assert.deepEqual(await store.consume(b.tokenHash, "magic-link"), b);
          },
        );

        await t.step(
          "an expired token is still returned once, with its expiresAt for the caller to check",
          async () => {
            const r = record({ createdAt: 1_000, expiresAt: 2_000 });
            await store.put(r);
            const got = await store.consume(r.tokenHash, PURPOSE);
            assert.deepEqual(got, r);
            assert.ok(got!.expiresAt < Date.now());
            assert.equal(await store.consume(r.tokenHash, PURPOSE), null);
          },
        );

        await t.step(
          "two concurrent consume() calls: exactly one gets the record",
          async () => {
            const r = record();
            await store.put(r);
            const results = await Promise.all([
              store.consume(r.tokenHash, PURPOSE),
              store.consume(r.tokenHash, PURPOSE),
            ]);
            assert.equal(results.filter((x) => x !== null).length, 1);
            assert.deepEqual(results.find((x) => x !== null), r);
          },
        );

        await t.step(
          `${n} concurrent consume() calls of one token: exactly one succeeds`,
          async () => {
            const r = record();
            await store.put(r);
            const results = await Promise.all(
              Array.from(
                { length: n },
                () => store.consume(r.tokenHash, PURPOSE),
              ),
            );
            assert.equal(results.filter((x) => x !== null).length, 1);
          },
        );

        await t.step(
          "find() reads a record without consuming it, and only for its purpose",
          async () => {
            const r = record({ purpose: "password-reset" });
            await store.put(r);
            assert.equal(
              await store.find(randomHash(), "password-reset"),
              null,
            );
            assert.equal(await store.find(r.tokenHash, PURPOSE), null);
            assert.deepEqual(
              await store.find(r.tokenHash, "password-reset"),
              r,
            );
            assert.deepEqual(
              await store.find(r.tokenHash, "password-reset"),
              r,
            );
            assert.equal(
              await store.consume(r.tokenHash, "email-change"),
              null,
            );
            assert.deepEqual(
              await store.consume(r.tokenHash, "password-reset"),
              r,
            );
            assert.equal(await store.find(r.tokenHash, "password-reset"), null);
          },
        );

        await t.step(
          "records keep unicode emails and subjects exactly",
          async () => {
            const r = record({
              subject: `user_ünï_${crypto.randomUUID()}`,
              email: `josé-${crypto.randomUUID()}@exämple.com`,
            });
            await store.put(r);
            assert.deepEqual(await store.consume(r.tokenHash, PURPOSE), r);
          },
        );
      } finally {
        await options.close?.();
      }
    },
  });
}

/** A random lower-case hex SHA-256-sized string. */
function randomHash(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
