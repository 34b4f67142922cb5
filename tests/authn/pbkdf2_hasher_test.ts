import assert from "node:assert/strict";
import fc from "fast-check";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import { selfTestHasher } from "../../lib/authn/hasher_self_test.ts";
import { AuthError } from "../../lib/auth_error.ts";
import { pbkdf2Sha256Js } from "../../lib/authn/_pbkdf2_sha256_js.ts";
import wycheproof from "../vectors/pbkdf2_hmacsha256_wycheproof.json" with {
  type: "json",
};
import local from "../vectors/pbkdf2_hmacsha256_local.json" with {
  type: "json",
};
import { fixedBytes, hex, unhex, workersLikeSubtle } from "./_helpers.ts";

const enc = new TextEncoder();

async function webCryptoPbkdf2(
  password: Uint8Array<ArrayBuffer>,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  length: number,
): Promise<string> {
  const key = await crypto.subtle.importKey("raw", password, "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    key,
    length * 8,
  );
  return hex(new Uint8Array(bits));
}

Deno.test("the JavaScript PBKDF2 route passes all 60 Wycheproof pbkdf2_hmacsha256 cases", () => {
  assert.equal(wycheproof.tests.length, 60);
  for (const [id, pw, salt, c, len, dk] of wycheproof.tests) {
    const got = pbkdf2Sha256Js(
      unhex(pw as string),
      unhex(salt as string),
      c as number,
      len as number,
    );
    assert.equal(hex(got), dk, `tcId ${id}`);
  }
});

Deno.test("WebCrypto agrees with the Wycheproof cases the JS route passes (sample)", async () => {
  for (const [id, pw, salt, c, len, dk] of wycheproof.tests.slice(0, 12)) {
    assert.equal(
      await webCryptoPbkdf2(
        unhex(pw as string),
        unhex(salt as string),
        c as number,
        len as number,
      ),
      dk,
      `tcId ${id}`,
    );
  }
});

Deno.test("RFC 7914, Go and local PBKDF2 vectors pass on the JS route", () => {
  for (const [pw, salt, c, len, dk] of local.tests) {
    const got = pbkdf2Sha256Js(
      enc.encode(pw as string),
      enc.encode(salt as string),
      c as number,
      len as number,
    );
    assert.equal(hex(got), dk, `${pw}/${c}`);
  }
});

Deno.test("the 600000-iteration vector 669cfe52…5178 on both routes", async () => {
  const [pw, salt, c, len, dk] = local.fullStrength;
  assert.equal(
    hex(
      pbkdf2Sha256Js(
        enc.encode(pw as string),
        enc.encode(salt as string),
        c as number,
        len as number,
      ),
    ),
    dk,
  );
  assert.equal(
    await webCryptoPbkdf2(
      enc.encode(pw as string),
      enc.encode(salt as string),
      c as number,
      len as number,
    ),
    dk,
  );
});

Deno.test("workerd's 100k PBKDF2 cap: with a Workers-like WebCrypto that refuses 600000, hash() falls back and equals the WebCrypto hash", async () => {
  const subtle = workersLikeSubtle();
  const refusing = new Pbkdf2Hasher({ subtle, randomBytes: fixedBytes(7) });
  const native = new Pbkdf2Hasher({ randomBytes: fixedBytes(7) });
  const a = await refusing.hash("correct horse battery");
  assert.equal(subtle.refused, 1);
  assert.equal(
    refusing.lastRoute,
    "wasm",
    "WASM first, pure JS only when WASM cannot load",
  );
  const b = await native.hash("correct horse battery");
  assert.equal(native.lastRoute, "webcrypto");
  assert.equal(a, b);
  assert.match(a, /^\$pbkdf2-sha256\$i=600000\$/);
  // The refusal is remembered: the next derivation skips WebCrypto.
  assert.equal(await refusing.verify("correct horse battery", a), true);
  assert.equal(await refusing.verify("correct horse batterY", a), false);
  assert.equal(subtle.refused, 1);
});

Deno.test("the stand-in still lets WebCrypto derive at or below 100000", async () => {
  const subtle = workersLikeSubtle();
  const hasher = new Pbkdf2Hasher({ subtle, iterations: 100_000 });
  const stored = await hasher.hash("password123");
  assert.equal(subtle.derived, 1);
  assert.equal(hasher.lastRoute, "webcrypto");
  assert.equal(await hasher.verify("password123", stored), true);
});

Deno.test("route webcrypto surfaces the refusal and the self-test fails loudly", async () => {
  const hasher = new Pbkdf2Hasher({
    subtle: workersLikeSubtle(),
    route: "webcrypto",
  });
  await assert.rejects(() => hasher.hash("x"), { name: "NotSupportedError" });
  await assert.rejects(
    () => selfTestHasher(hasher),
    (err: unknown) =>
      err instanceof AuthError && err.code === "RUNTIME_UNSUPPORTED" &&
      /refused/.test(err.message),
  );
});

Deno.test("selfTestHasher reports the time and enforces a budget", async () => {
  const hasher = new Pbkdf2Hasher({ iterations: 1000 });
  const report = await selfTestHasher(hasher);
  assert.ok(report.milliseconds >= 0);
  let t = 0;
  await assert.rejects(
    () => selfTestHasher(hasher, { maxMilliseconds: 5, now: () => (t += 10) }),
    (err: unknown) =>
      err instanceof AuthError && err.code === "RUNTIME_UNSUPPORTED",
  );
});

Deno.test("selfTestHasher fails when a fresh hash is already below policy", async () => {
  const fake = {
    hash: () => Promise.resolve("h"),
    verify: (p: string) => Promise.resolve(!p.endsWith("!")),
    needsRehash: () => true,
  };
  await assert.rejects(() => selfTestHasher(fake), /needs a rehash/);
});

Deno.test("OWASP Password Storage: hash() mints $pbkdf2-sha256$i=600000$<22 chars>$<43 chars> with a 16-byte salt by default", async () => {
  const hasher = new Pbkdf2Hasher({ route: "webcrypto" });
  assert.equal(hasher.iterations, 600_000);
  const stored = await hasher.hash("pässwörd ✓");
  assert.match(
    stored,
    /^\$pbkdf2-sha256\$i=600000\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
  );
  assert.equal(hasher.needsRehash(stored), false);
  assert.notEqual(await hasher.hash("pässwörd ✓"), stored); // fresh salt
});

Deno.test("the password is hashed exactly as received (no trim, no case-fold, no normalisation)", async () => {
  const hasher = new Pbkdf2Hasher({ iterations: 1000 });
  const stored = await hasher.hash(" Secret\u00e9 ");
  assert.equal(await hasher.verify(" Secret\u00e9 ", stored), true);
  assert.equal(await hasher.verify("Secret\u00e9", stored), false);
  assert.equal(await hasher.verify(" secret\u00e9 ", stored), false);
  assert.equal(await hasher.verify(" Secrete\u0301 ", stored), false);
});

Deno.test("OWASP Password Storage: the stored hash equals PBKDF2 of the UTF-8 password with the stored salt", async () => {
  const hasher = new Pbkdf2Hasher({
    iterations: 4096,
    randomBytes: fixedBytes(0x42),
  });
  const stored = await hasher.hash("password");
  const want = await webCryptoPbkdf2(
    enc.encode("password"),
    new Uint8Array(16).fill(0x42),
    4096,
    32,
  );
  const b64 = stored.split("$")[4];
  const bytes = Uint8Array.from(atob(b64 + "="), (c) => c.charCodeAt(0));
  assert.equal(hex(bytes), want);
});

Deno.test("ASVS 11.2.2: needsRehash is true below policy iterations and for other algorithms", async () => {
  const old = new Pbkdf2Hasher({ iterations: 1000 });
  const stored = await old.hash("password1");
  const now = new Pbkdf2Hasher({ iterations: 2000, minIterations: 1000 });
  assert.equal(now.needsRehash(stored), true);
  assert.equal(await now.verify("password1", stored), true); // stored params
  assert.equal(old.needsRehash(stored), false);
  assert.equal(
    now.needsRehash(
      "$2b$10$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui",
    ),
    true,
  );
  assert.equal(now.needsRehash("garbage"), true);
});

Deno.test("ASVS 16.5.3: the PHC parser rejects unknown ids, bounds, bad base64 and wrong lengths with false", async () => {
  const hasher = new Pbkdf2Hasher({
    iterations: 1000,
    minIterations: 1000,
    maxIterations: 5000,
    randomBytes: fixedBytes(1),
  });
  const good = await hasher.hash("password1");
  assert.equal(await hasher.verify("password1", good), true);
  const [, , , salt, dk] = good.split("$");
  const bad = [
    good.replace("pbkdf2-sha256", "pbkdf2-sha512"),
    good.replace("pbkdf2-sha256", "pbkdf2"),
    good.replace("i=1000", "i=999"),
    good.replace("i=1000", "i=5001"),
    good.replace("i=1000", "i=01000"),
    good.replace("i=1000", "i=1000,l=32"),
    good.replace("i=1000", "i=+1000"),
    good.replace("i=1000", "rounds=1000"),
    good + "=",
    good + "$",
    good.replace(dk, dk.slice(0, -1)),
    good.replace(dk, dk + "A"),
    good.replace(dk, dk.replace(/.$/, "B")), // non-canonical trailing bits
    good.replace(dk, "-" + dk.slice(1)),
    good.replace(salt, salt.slice(0, 8)), // 6-byte salt
    good.replace(salt, salt.replace(/.$/, "=")),
    `$pbkdf2-sha256$1000$${salt}$${dk}`,
    good.replace(/^\$/, ""),
    " " + good,
    good.toUpperCase(),
    "",
  ];
  for (const stored of bad) {
    assert.notEqual(stored, good);
    assert.equal(await hasher.verify("password1", stored), false, stored);
    assert.equal(hasher.needsRehash(stored), true, stored);
  }
});

Deno.test("ASVS 16.5.3: property: random strings never throw and never verify", async () => {
  const hasher = new Pbkdf2Hasher({ iterations: 1000, minIterations: 1 });
  await fc.assert(
    fc.asyncProperty(fc.string({ maxLength: 120 }), async (s) => {
      assert.equal(await hasher.verify("password1", s), false);
      assert.equal(typeof hasher.needsRehash(s), "boolean");
    }),
    { numRuns: 300 },
  );
});

Deno.test("ASVS 16.5.3: property: PHC-shaped strings with random fields never throw and never verify", async () => {
  const hasher = new Pbkdf2Hasher({ iterations: 1000, minIterations: 1 });
  const b64 = fc.stringMatching(/^[A-Za-z0-9+/=.-]{0,90}$/);
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("pbkdf2-sha256", "pbkdf2-sha512", "pbkdf2", ""),
      fc.oneof(fc.nat(3000).map(String), fc.string({ maxLength: 12 })),
      b64,
      b64,
      async (id, i, salt, dk) => {
        const s = `$${id}$i=${i}$${salt}$${dk}`;
        assert.equal(await hasher.verify("password1", s), false);
        hasher.needsRehash(s);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("Okta 2024 advisory: property: two passwords sharing a 72-byte prefix never both verify against a new PBKDF2 hash", async () => {
  const hasher = new Pbkdf2Hasher({ iterations: 100, minIterations: 1 });
  await fc.assert(
    fc.asyncProperty(
      fc.string({ minLength: 72, maxLength: 72 }),
      fc.string({ minLength: 1, maxLength: 20 }),
      fc.string({ minLength: 1, maxLength: 20 }),
      async (prefix, a, b) => {
        fc.pre(a !== b);
        const stored = await hasher.hash(prefix + a);
        assert.equal(await hasher.verify(prefix + a, stored), true);
        assert.equal(await hasher.verify(prefix + b, stored), false);
        assert.equal(await hasher.verify(prefix, stored), false);
      },
    ),
    { numRuns: 50 },
  );
});

Deno.test("OWASP Password Storage: a pepper changes the hash and is needed to verify", async () => {
  const pepper = "p".repeat(32);
  const peppered = new Pbkdf2Hasher({
    iterations: 1000,
    pepper,
    randomBytes: fixedBytes(3),
  });
  const plain = new Pbkdf2Hasher({
    iterations: 1000,
    randomBytes: fixedBytes(3),
  });
  const stored = await peppered.hash("password1");
  assert.notEqual(stored, await plain.hash("password1"));
  assert.equal(await peppered.verify("password1", stored), true);
  assert.equal(await plain.verify("password1", stored), false);
  // The pepper is applied as HMAC-SHA256(pepper, password), documented.
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(pepper),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, enc.encode("password1")),
  );
  const dk = pbkdf2Sha256Js(mac, new Uint8Array(16).fill(3), 1000, 32);
  assert.equal(
    hex(
      Uint8Array.from(atob(stored.split("$")[4] + "="), (c) => c.charCodeAt(0)),
    ),
    hex(dk),
  );
  // Peppered and JS route agree too.
  const js = new Pbkdf2Hasher({
    iterations: 1000,
    pepper,
    route: "javascript",
    randomBytes: fixedBytes(3),
  });
  assert.equal(await js.hash("password1"), stored);
});

Deno.test("OWASP Password Storage: misconfiguration throws RangeError with a clear message", () => {
  assert.throws(() => new Pbkdf2Hasher({ iterations: 0 }), RangeError);
  assert.throws(() => new Pbkdf2Hasher({ iterations: 1.5 }), RangeError);
  assert.throws(
    () => new Pbkdf2Hasher({ iterations: 1000, minIterations: 2000 }),
    /minIterations <= iterations/,
  );
  assert.throws(
    () => new Pbkdf2Hasher({ pepper: "short" }),
    /at least 32 bytes: received 5/,
  );
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => new Pbkdf2Hasher({ route: "asm.js" as any }),
    RangeError,
  );
});
