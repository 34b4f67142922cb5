import assert from "node:assert/strict";
import fc from "fast-check";
import { BcryptHasher } from "../../packages/hashers/bcrypt.ts";
import { AuthError } from "../../lib/auth_error.ts";
import vectors from "../vectors/bcrypt_openwall.json" with { type: "json" };

// Cost 4 keeps ordinary tests fast; the policy floor of 10 applies to
// minting only, so verification tests accept the vectors' cost 5 and 6.
const verifier = new BcryptHasher();

Deno.test("item 6: every openwall vector with a UTF-8 password verifies ($2a$, $2b$, $2y$)", async () => {
  let checked = 0;
  for (const v of vectors.tests) {
    if (v.text === undefined || v.over72) continue;
    assert.equal(await verifier.verify(v.text, v.hash), true, v.hash);
    assert.equal(await verifier.verify(v.text + "x", v.hash), false, v.hash);
    checked++;
  }
  assert.equal(checked, 14);
});

Deno.test("item 6: byte-string vectors (\\xa3, \\xff\\xa3345, \\xa3ab, \\xaa×72…) are unreachable through a string API", async () => {
  // bcryptjs hashes the UTF-8 of a JavaScript string, and these passwords
  // are not valid UTF-8, so no string reaches them. The closest strings
  // (U+00A3 is C2 A3 in UTF-8) must not verify.
  const bytesOnly = vectors.tests.filter((v) => v.hex !== undefined);
  assert.equal(bytesOnly.length, 4);
  for (const v of bytesOnly) {
    const latin1 = String.fromCharCode(
      ...v.hex!.match(/../g)!.map((h) => parseInt(h, 16)),
    );
    assert.equal(await verifier.verify(latin1, v.hash), false, v.hash);
  }
});

Deno.test("item 6: $2x$, $2$ and costs outside 4–31 are rejected with false", async () => {
  for (const v of vectors.rejected) {
    const latin1 = String.fromCharCode(
      ...v.hex.match(/../g)!.map((h) => parseInt(h, 16)),
    );
    assert.equal(await verifier.verify(latin1, v.hash), false);
  }
  const good = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
  assert.equal(await verifier.verify("U*U", good), true);
  const bad = [
    good.replace("$2a$", "$2x$"),
    good.replace("$2a$", "$2$"),
    good.replace("$2a$", "$2c$"),
    good.replace("$05$", "$03$"),
    good.replace("$05$", "$32$"),
    good.replace("$05$", "$5$"),
    good.slice(0, -1),
    good + "a",
    good.replace("CCCC", "CC_C"),
    " " + good,
  ];
  for (const stored of bad) {
    assert.equal(await verifier.verify("U*U", stored), false, stored);
    assert.equal(verifier.needsRehash(stored), true, stored);
  }
});

Deno.test("item 7 / V15: verify of a password over 72 bytes never matches the hash of its 72-byte prefix", async () => {
  const long = vectors.tests.find((v) => v.over72)!;
  const prefix = long.text!.slice(0, 72);
  assert.equal(await verifier.verify(prefix, long.hash), true);
  assert.equal(await verifier.verify(long.text!, long.hash), false);
});

Deno.test("item 7: hash refuses passwords over 72 UTF-8 bytes with INVALID_PASSWORD, never truncating", async () => {
  const hasher = new BcryptHasher();
  await assert.rejects(
    () => hasher.hash("a".repeat(73)),
    (err: unknown) =>
      err instanceof AuthError && err.code === "INVALID_PASSWORD" &&
      /72 bytes: received 73 bytes/.test(err.message),
  );
  // 24 × "€" is 72 bytes; 25 is 75 bytes though only 25 code points.
  await assert.rejects(() => hasher.hash("€".repeat(25)), AuthError);
  await assert.rejects(() => hasher.hash("abc\0def12"), AuthError);
});

Deno.test("item 6: hash mints $2b$ at cost 10 by default and verifies", async () => {
  const hasher = new BcryptHasher();
  const stored = await hasher.hash("€".repeat(24));
  assert.match(stored, /^\$2b\$10\$[./A-Za-z0-9]{53}$/);
  assert.equal(await hasher.verify("€".repeat(24), stored), true);
  assert.equal(await hasher.verify("€".repeat(23), stored), false);
  assert.equal(hasher.needsRehash(stored), false);
  assert.equal(new BcryptHasher({ cost: 11 }).needsRehash(stored), true);
});

Deno.test("item 6: cost below 10 cannot be configured for minting", () => {
  assert.throws(() => new BcryptHasher({ cost: 9 }), RangeError);
  assert.throws(() => new BcryptHasher({ cost: 32 }), RangeError);
  assert.throws(() => new BcryptHasher({ minCost: 3 }), RangeError);
});

Deno.test("item 4: property: random strings never throw and never verify as bcrypt", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.stringMatching(/^\$2[abxy]?\$[0-9]{1,3}\$[./A-Za-z0-9$]{0,60}$/),
      ),
      async (s) => {
        assert.equal(await verifier.verify("password", s), false);
        verifier.needsRehash(s);
      },
    ),
    { numRuns: 200 },
  );
});
