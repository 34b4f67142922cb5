import assert from "node:assert/strict";
import fc from "fast-check";
import { normalizeEmail } from "../../lib/authn/normalize_email.ts";
import { PasswordPolicy } from "../../lib/authn/password_policy.ts";
import { AuthError } from "../../lib/auth_error.ts";

function rejects(input: string): void {
  assert.throws(
    () => normalizeEmail(input),
    (err: unknown) => err instanceof AuthError && err.code === "INVALID_EMAIL",
    JSON.stringify(input),
  );
}

Deno.test("item 44: normalizeEmail applies NFKC, trims and lower-cases", () => {
  assert.equal(normalizeEmail("  Alice@Example.COM \n"), "alice@example.com");
  assert.equal(normalizeEmail("ｂｏｂ@example.com"), "bob@example.com"); // fullwidth letters
  assert.equal(normalizeEmail("zoë@exämple.de"), "zoë@exämple.de");
  assert.equal(
    normalizeEmail("a.b+tag@sub.example.co.uk"),
    "a.b+tag@sub.example.co.uk",
  );
});

Deno.test("V10 / item 44: a fullwidth ＠ becomes a second @ after NFKC and is rejected", () => {
  rejects("attacker＠evil.com@example.com");
  rejects("victim@example.com＠evil.com");
  rejects("a﹫b@example.com"); // small commercial at, U+FE6B
});

Deno.test("V10 / V11 / item 44: lists, quotes, spaces, brackets and controls are rejected", () => {
  for (
    const bad of [
      "",
      "   ",
      "plain",
      "@example.com",
      "a@",
      "a@@example.com",
      "a@b@example.com",
      "a@example.com,b@evil.com",
      "a@example.com;b@evil.com",
      '"a b"@example.com',
      "a'b@example.com",
      "A <a@example.com>",
      "<a@example.com>",
      "a b@example.com",
      "a\u00a0b@example.com",
      "a\tb@example.com",
      "a@example.com\r\nBcc: x@evil.com",
      "a\u0000@example.com",
      "a\u200b@example.com",
      "a(comment)@example.com",
      "a@[127.0.0.1]",
      "a\\b@example.com",
      "a@localhost",
      "a@example..com",
      "a@-example.com",
      "a@example.com.",
      ".a@example.com",
      "a.@example.com",
      "a..b@example.com",
      "a:b@example.com",
      "a@exa_mple.com",
      "a\ud800@example.com",
      "x".repeat(65) + "@example.com",
      "a@" + "b".repeat(250) + ".com",
    ]
  ) rejects(bad);
});

Deno.test("item 44: property: normalizeEmail either throws INVALID_EMAIL or returns one idempotent address with one @", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ maxLength: 80, unit: "grapheme" }),
        fc.emailAddress(),
        fc.tuple(fc.string(), fc.constantFrom("@", "＠", "﹫"), fc.string())
          .map(([a, at, b]) => a + at + b),
      ),
      (s) => {
        let out: string;
        try {
          out = normalizeEmail(s);
        } catch (err) {
          assert.ok(err instanceof AuthError && err.code === "INVALID_EMAIL");
          return;
        }
        assert.equal(out.split("@").length, 2);
        assert.equal(normalizeEmail(out), out);
        assert.ok(out.length <= 254);
        assert.equal(out, out.normalize("NFKC").trim().toLowerCase());
      },
    ),
    { numRuns: 1000 },
  );
});

Deno.test("item 11: the policy asks 15 code points by default (8 with a second factor), accepts spaces, emoji, 64+ characters and no composition rules", () => {
  const policy = new PasswordPolicy();
  assert.equal(policy.minLength, 15);
  assert.equal(policy.minLengthWithSecondFactor, 8);
  for (
    const ok of [
      "a".repeat(15),
      " ".repeat(15),
      "🔑".repeat(15),
      "x".repeat(1024),
      "é".repeat(64),
      "😀".repeat(64),
    ]
  ) {
    policy.check(ok);
  }
  assert.throws(
    () => policy.check("🔑".repeat(14)),
    /too short: 14 characters, at least 15/,
  );
  policy.check("🔑".repeat(8), { secondFactor: true });
  assert.throws(
    () => policy.check("🔑".repeat(7), { secondFactor: true }),
    /too short: 7 characters, at least 8/,
  );
  assert.throws(() => policy.check("short"), AuthError);
  assert.equal(
    new PasswordPolicy({ minLength: 6 }).minLengthWithSecondFactor,
    6,
  );
  assert.throws(
    () => new PasswordPolicy({ minLength: 10, minLengthWithSecondFactor: 11 }),
    RangeError,
  );
  assert.throws(
    () => new PasswordPolicy({ minLengthWithSecondFactor: 0 }),
    RangeError,
  );
});

Deno.test("item 12: the hard cap is 1024 bytes by default and configurable, never below 256", () => {
  const policy = new PasswordPolicy();
  assert.throws(
    () => policy.check("x".repeat(1025)),
    /too long: 1025 bytes, at most 1024/,
  );
  assert.equal(policy.fits("x".repeat(1024)), true);
  assert.equal(policy.fits("x".repeat(1025)), false);
  assert.equal(policy.fits("é".repeat(600)), false); // 1200 bytes
  assert.equal(policy.fits("a\ud800b"), false);
  assert.throws(() => new PasswordPolicy({ maxBytes: 255 }), RangeError);
  assert.throws(() => new PasswordPolicy({ minLength: 0 }), RangeError);
  assert.throws(() => new PasswordPolicy({ minLength: 65 }), RangeError);
  assert.equal(new PasswordPolicy({ minLength: 15 }).minLength, 15);
});

Deno.test("item 10: unpaired surrogates are refused, since they have no UTF-8 form", () => {
  assert.throws(
    () => new PasswordPolicy().check("abcdefgh\udc00"),
    (err: unknown) =>
      err instanceof AuthError && err.code === "INVALID_PASSWORD",
  );
});
