/**
 * OneTimeTokens (SECURITY.md items 42–44) over the memory store and the
 * libSQL store.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  hashOneTimeToken,
  OneTimeTokens,
} from "../../lib/verification/one_time_tokens.ts";
import { MemoryVerificationTokenStore } from "../../lib/verification/memory_verification_token_store.ts";
import type { VerificationTokenStore } from "../../lib/verification/verification_token_store.ts";
import { migrate, SQLVerificationTokenStore } from "../../stores/sql/mod.ts";

const stores: [
  string,
  () => Promise<{ store: VerificationTokenStore; close: () => void }>,
][] = [
  [
    "memory",
    () =>
      Promise.resolve({
        store: new MemoryVerificationTokenStore(),
        close: () => {},
      }),
  ],
  ["libSQL", async () => {
    const client = createClient({ url: ":memory:" });
    const db = drizzle(client);
    await migrate(db);
    return {
      store: new SQLVerificationTokenStore(db),
      close: () => client.close(),
    };
  }],
];

for (const [name, open] of stores) {
  Deno.test(`OneTimeTokens (${name}): issue stores only the SHA-256 of a 256-bit token`, async () => {
    const { store, close } = await open();
    const seen: unknown[] = [];
    const spy: VerificationTokenStore = {
      put: (r) => (seen.push(r), store.put(r)),
      consume: (h, p) => store.consume(h, p),
      find: (h, p) => store.find(h, p),
      deleteFor: (s, p) => store.deleteFor(s, p),
    };
    const tokens = new OneTimeTokens({ store: spy, now: () => 1000 });
    const token = await tokens.issue({
      subject: "u1",
      email: "a@example.com",
      purpose: "verify-email",
    });
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(seen, [{
      tokenHash: await hashOneTimeToken(token),
      purpose: "verify-email",
      subject: "u1",
      email: "a@example.com",
      createdAt: 1000,
      expiresAt: 1000 + 24 * 3600 * 1000,
    }]);
    assert.ok(!JSON.stringify(seen).includes(token));
    close();
  });

  Deno.test(`OneTimeTokens (${name}): redeem works once; expired, wrong purpose, older and mismatched tokens answer null`, async () => {
    const { store, close } = await open();
    let t = 0;
    const tokens = new OneTimeTokens({ store, now: () => t });
    const input = {
      subject: "u1",
      email: "a@example.com",
      purpose: "verify-email",
    };
    const a = await tokens.issue(input);
    assert.equal(await tokens.redeem(a, "magic-link"), null, "other purpose");
    assert.deepEqual(await tokens.redeem(a, "verify-email"), {
      subject: "u1",
      email: "a@example.com",
    });
    assert.equal(await tokens.redeem(a, "verify-email"), null, "used");

    const b = await tokens.issue(input);
    t = 24 * 3600 * 1000;
    assert.equal(
      await tokens.redeem(b, "verify-email"),
      null,
      "expired at exactly 24 h",
    );

    const older = await tokens.issue(input);
    const newer = await tokens.issue(input);
    assert.equal(await tokens.redeem(older, "verify-email"), null, "older");
    assert.ok(await tokens.redeem(newer, "verify-email"));

    const c = await tokens.issue(input);
    assert.equal(
      await tokens.redeem(c, "verify-email", {
        currentEmail: () => Promise.resolve("b@example.com"),
      }),
      null,
      "email changed since the link was sent",
    );
    for (
      const bad of [
        "",
        "x",
        "A".repeat(44),
        "A".repeat(42) + "=",
        42 as unknown as string,
      ]
    ) {
      assert.equal(await tokens.redeem(bad, "verify-email"), null);
    }
    close();
  });

  Deno.test(`OneTimeTokens (${name}): of concurrent redemptions exactly one succeeds`, async () => {
    const { store, close } = await open();
    const tokens = new OneTimeTokens({ store });
    const token = await tokens.issue({
      subject: "u1",
      email: "a@example.com",
      purpose: "verify-email",
    });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => tokens.redeem(token, "verify-email")),
    );
    assert.equal(results.filter((r) => r !== null).length, 1);
    close();
  });
}

Deno.test("OneTimeTokens: misuse throws clear errors", async () => {
  assert.throws(() => new OneTimeTokens({} as never), TypeError);
  assert.throws(
    () =>
      new OneTimeTokens({
        store: new MemoryVerificationTokenStore(),
        ttlMs: 0,
      }),
    RangeError,
  );
  const tokens = new OneTimeTokens({
    store: new MemoryVerificationTokenStore(),
  });
  await assert.rejects(
    tokens.issue({
      subject: "",
      email: "a@example.com",
      purpose: "verify-email",
    }),
    TypeError,
  );
  await assert.rejects(
    tokens.issue({
      subject: "u",
      email: "a@example.com",
      purpose: "Bad Purpose",
    }),
    TypeError,
  );
  const short = new OneTimeTokens({
    store: new MemoryVerificationTokenStore(),
    randomBytes: () => new Uint8Array(8),
  });
  await assert.rejects(
    short.issue({
      subject: "u",
      email: "a@example.com",
      purpose: "verify-email",
    }),
    RangeError,
  );
});
