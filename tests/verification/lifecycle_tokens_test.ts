/**
 * Password-reset and email-change tokens beside email verification
 * (SECURITY.md items 42 and 43): life per purpose, binding to user and
 * address, atomic consume, and no cross-purpose replay. Over the memory
 * store, libSQL and PGlite.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { PGlite } from "@electric-sql/pglite";
import {
  hashOneTimeToken,
  OneTimeTokens,
} from "../../lib/verification/one_time_tokens.ts";
import {
  EMAIL_CHANGE_PURPOSE,
  EMAIL_VERIFICATION_PURPOSE,
  PASSWORD_RESET_PURPOSE,
} from "../../lib/verification/token_purposes.ts";
import { MemoryVerificationTokenStore } from "../../lib/verification/memory_verification_token_store.ts";
import type {
  VerificationTokenRecord,
  VerificationTokenStore,
} from "../../lib/verification/verification_token_store.ts";
import { migrate, SQLVerificationTokenStore } from "../../stores/sql/mod.ts";

const HOUR = 3600 * 1000;
const PURPOSES = [
  EMAIL_VERIFICATION_PURPOSE,
  PASSWORD_RESET_PURPOSE,
  EMAIL_CHANGE_PURPOSE,
];

const stores: [
  string,
  () => Promise<{ store: VerificationTokenStore; close: () => Promise<void> }>,
][] = [
  ["memory", () =>
    Promise.resolve({
      store: new MemoryVerificationTokenStore(),
      close: () => Promise.resolve(),
    })],
  ["libSQL", async () => {
    const client = createClient({ url: ":memory:" });
    const db = drizzle(client);
    await migrate(db);
    return {
      store: new SQLVerificationTokenStore(db),
      close: () => Promise.resolve(client.close()),
    };
  }],
  ["PGlite", async () => {
    const pg = new PGlite();
    const db = drizzlePglite(pg);
    await migrate(db);
    return {
      store: new SQLVerificationTokenStore(db),
      close: () => pg.close(),
    };
  }],
];

for (const [name, open] of stores) {
  Deno.test(`OneTimeTokens (${name}): a password-reset token lives 1 hour, an email-change token 24 hours`, async () => {
    const { store, close } = await open();
    try {
      let t = 1_000;
      const tokens = new OneTimeTokens({ store, now: () => t });
      const seen: VerificationTokenRecord[] = [];
      const reset = await tokens.issue({
        subject: "u1",
        email: "a@example.com",
        purpose: PASSWORD_RESET_PURPOSE,
      });
      const change = await tokens.issue({
        subject: "u1",
        email: "new@example.com",
        purpose: EMAIL_CHANGE_PURPOSE,
      });
      for (
        const [token, purpose] of [[reset, PASSWORD_RESET_PURPOSE], [
          change,
          EMAIL_CHANGE_PURPOSE,
        ]]
      ) {
        const record = await store.find(await hashOneTimeToken(token), purpose);
        assert.ok(record, purpose);
        seen.push(record!);
      }
      assert.equal(seen[0].expiresAt - seen[0].createdAt, HOUR);
      assert.equal(seen[1].expiresAt - seen[1].createdAt, 24 * HOUR);
      // Only hashes are stored.
      assert.ok(!JSON.stringify(seen).includes(reset));
      assert.ok(!JSON.stringify(seen).includes(change));

      t = 1_000 + HOUR;
      assert.equal(
        await tokens.peek(reset, PASSWORD_RESET_PURPOSE),
        null,
        "a reset link is refused at exactly 1 hour",
      );
      assert.equal(await tokens.redeem(reset, PASSWORD_RESET_PURPOSE), null);
      t = 1_000 + 24 * HOUR - 1;
      assert.deepEqual(await tokens.redeem(change, EMAIL_CHANGE_PURPOSE), {
        subject: "u1",
        email: "new@example.com",
      });
    } finally {
      await close();
    }
  });

  Deno.test(`OneTimeTokens (${name}): no token redeems as another purpose (cross-purpose replay), and the refusal leaves it usable`, async () => {
    const { store, close } = await open();
    try {
      const tokens = new OneTimeTokens({ store });
      for (const purpose of PURPOSES) {
        const token = await tokens.issue({
          subject: "u1",
          email: "a@example.com",
          purpose,
        });
        for (const other of [...PURPOSES, "magic-link"]) {
          if (other === purpose) continue;
          assert.equal(
            await tokens.peek(token, other),
            null,
            `${purpose} peeked as ${other}`,
          );
          assert.equal(
            await tokens.redeem(token, other),
            null,
            `${purpose} redeemed as ${other}`,
          );
        }
        assert.deepEqual(await tokens.redeem(token, purpose), {
          subject: "u1",
          email: "a@example.com",
        });
        assert.equal(await tokens.redeem(token, purpose), null, "used");
      }
    } finally {
      await close();
    }
  });

  Deno.test(`OneTimeTokens (${name}): peek() never consumes; it refuses what redeem() refuses`, async () => {
    const { store, close } = await open();
    try {
      let t = 0;
      const tokens = new OneTimeTokens({ store, now: () => t });
      const token = await tokens.issue({
        subject: "u1",
        email: "a@example.com",
        purpose: PASSWORD_RESET_PURPOSE,
      });
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(await tokens.peek(token, PASSWORD_RESET_PURPOSE), {
          subject: "u1",
          email: "a@example.com",
        });
      }
      assert.equal(
        await tokens.peek(token, PASSWORD_RESET_PURPOSE, {
          currentEmail: () => Promise.resolve("other@example.com"),
        }),
        null,
        "the address changed since the link was sent",
      );
      assert.equal(
        await tokens.peek(token, PASSWORD_RESET_PURPOSE, {
          currentEmail: () => Promise.resolve(null),
        }),
        null,
        "the user is gone",
      );
      for (const bad of ["", "x", "A".repeat(44), token.slice(0, 42) + "="]) {
        assert.equal(await tokens.peek(bad, PASSWORD_RESET_PURPOSE), null);
      }
      assert.ok(
        await tokens.redeem(token, PASSWORD_RESET_PURPOSE, {
          currentEmail: () => Promise.resolve("a@example.com"),
        }),
      );
      assert.equal(await tokens.peek(token, PASSWORD_RESET_PURPOSE), null);
      const late = await tokens.issue({
        subject: "u1",
        email: "a@example.com",
        purpose: PASSWORD_RESET_PURPOSE,
      });
      t = HOUR;
      assert.equal(await tokens.peek(late, PASSWORD_RESET_PURPOSE), null);
    } finally {
      await close();
    }
  });

  Deno.test(`OneTimeTokens (${name}): tokens are bound to their user and address; a new one of a purpose replaces only that purpose's`, async () => {
    const { store, close } = await open();
    try {
      const tokens = new OneTimeTokens({ store });
      const verify = await tokens.issue({
        subject: "u1",
        email: "a@example.com",
        purpose: EMAIL_VERIFICATION_PURPOSE,
      });
      const firstReset = await tokens.issue({
        subject: "u1",
        email: "a@example.com",
        purpose: PASSWORD_RESET_PURPOSE,
      });
      const otherUser = await tokens.issue({
        subject: "u2",
        email: "b@example.com",
        purpose: PASSWORD_RESET_PURPOSE,
      });
      const secondReset = await tokens.issue({
        subject: "u1",
        email: "a@example.com",
        purpose: PASSWORD_RESET_PURPOSE,
      });
      assert.equal(
        await tokens.redeem(firstReset, PASSWORD_RESET_PURPOSE),
        null,
      );
      assert.deepEqual(await tokens.redeem(otherUser, PASSWORD_RESET_PURPOSE), {
        subject: "u2",
        email: "b@example.com",
      });
      assert.deepEqual(
        await tokens.redeem(secondReset, PASSWORD_RESET_PURPOSE),
        { subject: "u1", email: "a@example.com" },
      );
      assert.ok(
        await tokens.redeem(verify, EMAIL_VERIFICATION_PURPOSE),
        "a reset link does not cancel the verification link",
      );
      // An email-change link is bound to the address it was sent to.
      const change = await tokens.issue({
        subject: "u1",
        email: "new@example.com",
        purpose: EMAIL_CHANGE_PURPOSE,
      });
      assert.equal(
        (await tokens.redeem(change, EMAIL_CHANGE_PURPOSE))?.email,
        "new@example.com",
      );
    } finally {
      await close();
    }
  });

  for (const purpose of [PASSWORD_RESET_PURPOSE, EMAIL_CHANGE_PURPOSE]) {
    Deno.test(`OneTimeTokens (${name}): of 20 concurrent redemptions of one ${purpose} token exactly one succeeds`, async () => {
      const { store, close } = await open();
      try {
        const tokens = new OneTimeTokens({ store });
        const token = await tokens.issue({
          subject: "u1",
          email: "a@example.com",
          purpose,
        });
        const results = await Promise.all(
          Array.from({ length: 20 }, () => tokens.redeem(token, purpose)),
        );
        assert.equal(results.filter((r) => r !== null).length, 1);
      } finally {
        await close();
      }
    });
  }
}

Deno.test("OneTimeTokens: purposeTtlMs overrides a purpose's life and refuses nonsense", async () => {
  let t = 0;
  const tokens = new OneTimeTokens({
    store: new MemoryVerificationTokenStore(),
    purposeTtlMs: { [PASSWORD_RESET_PURPOSE]: 15 * 60 * 1000 },
    now: () => t,
  });
  const token = await tokens.issue({
    subject: "u1",
    email: "a@example.com",
    purpose: PASSWORD_RESET_PURPOSE,
  });
  t = 15 * 60 * 1000;
  assert.equal(await tokens.redeem(token, PASSWORD_RESET_PURPOSE), null);
  for (const bad of [0, -1, 1.5, Number.NaN]) {
    assert.throws(
      () =>
        new OneTimeTokens({
          store: new MemoryVerificationTokenStore(),
          purposeTtlMs: { [PASSWORD_RESET_PURPOSE]: bad },
        }),
      RangeError,
    );
  }
  assert.throws(
    () =>
      new OneTimeTokens({
        store: new MemoryVerificationTokenStore(),
        purposeTtlMs: { "Bad Purpose": 1000 },
      }),
    TypeError,
  );
});
