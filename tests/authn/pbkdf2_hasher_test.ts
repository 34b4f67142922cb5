import assert from "node:assert/strict";
import fc from "fast-check";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import { selfTestHasher } from "../../lib/authn/hasher_self_test.ts";
import { AuthError } from "../../lib/auth_error.ts";
import { PasswordAuthenticator } from "../../lib/authn/password_authenticator.ts";
import { MemoryCredentialStore } from "../../lib/authn/memory_credential_store.ts";
import wycheproof from "../vectors/pbkdf2_hmacsha256_wycheproof.json" with {
  type: "json",
};
import local from "../vectors/pbkdf2_hmacsha256_local.json" with {
  type: "json",
};
import {
  fixedBytes,
  hex,
  unhex,
  webCryptoPbkdf2,
  workersLikeSubtle,
} from "./_helpers.ts";

const enc = new TextEncoder();

Deno.test("item 2: WebCrypto agrees with the Wycheproof cases (sample)", async () => {
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

Deno.test("item 2: the 600000-iteration vector 669cfe52…5178 through WebCrypto", async () => {
  const [pw, salt, c, len, dk] = local.fullStrength;
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

Deno.test("item 47: a WebCrypto refusal surfaces as thrown and the self-test fails loudly", async () => {
  const hasher = new Pbkdf2Hasher({ subtle: workersLikeSubtle() });
  await assert.rejects(() => hasher.hash("x"), { name: "NotSupportedError" });
  await assert.rejects(
    () => selfTestHasher(hasher),
    (err: unknown) =>
      err instanceof AuthError && err.code === "RUNTIME_UNSUPPORTED" &&
      /refused/.test(err.message),
  );
});

Deno.test("item 47: selfTestHasher reports the time and enforces a budget", async () => {
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

Deno.test("item 47: selfTestHasher fails when a fresh hash is already below policy", async () => {
  const fake = {
    hash: () => Promise.resolve("h"),
    verify: (p: string) => Promise.resolve(!p.endsWith("!")),
    needsRehash: () => true,
  };
  await assert.rejects(() => selfTestHasher(fake), /needs a rehash/);
});

Deno.test("item 1: hash() mints $pbkdf2-sha256$i=600000$<22 chars>$<43 chars> with a 16-byte salt by default", async () => {
  const hasher = new Pbkdf2Hasher();
  assert.equal(hasher.iterations, 600_000);
  const stored = await hasher.hash("pässwörd ✓");
  assert.match(
    stored,
    /^\$pbkdf2-sha256\$i=600000\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
  );
  assert.equal(hasher.needsRehash(stored), false);
  assert.notEqual(await hasher.hash("pässwörd ✓"), stored); // fresh salt
});

Deno.test("item 10: the password is hashed exactly as received (no trim, no case-fold, no normalisation)", async () => {
  const hasher = new Pbkdf2Hasher({ iterations: 1000 });
  const stored = await hasher.hash(" Secret\u00e9 ");
  assert.equal(await hasher.verify(" Secret\u00e9 ", stored), true);
  assert.equal(await hasher.verify("Secret\u00e9", stored), false);
  assert.equal(await hasher.verify(" secret\u00e9 ", stored), false);
  assert.equal(await hasher.verify(" Secrete\u0301 ", stored), false);
});

Deno.test("item 1: the stored hash equals PBKDF2 of the UTF-8 password with the stored salt", async () => {
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

Deno.test("item 3: needsRehash is true below policy iterations and for other algorithms", async () => {
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

Deno.test("item 4: the PHC parser rejects unknown ids, bounds, bad base64 and wrong lengths with false", async () => {
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

Deno.test("item 4: property: random strings never throw and never verify", async () => {
  const hasher = new Pbkdf2Hasher({ iterations: 1000, minIterations: 1 });
  await fc.assert(
    fc.asyncProperty(fc.string({ maxLength: 120 }), async (s) => {
      assert.equal(await hasher.verify("password1", s), false);
      assert.equal(typeof hasher.needsRehash(s), "boolean");
    }),
    { numRuns: 300 },
  );
});

Deno.test("item 4: property: PHC-shaped strings with random fields never throw and never verify", async () => {
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

Deno.test("V15: property: two passwords sharing a 72-byte prefix never both verify against a new PBKDF2 hash", async () => {
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

Deno.test("item 1: a pepper changes the hash and is needed to verify", async () => {
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
  const dk = await webCryptoPbkdf2(mac, new Uint8Array(16).fill(3), 1000, 32);
  assert.equal(
    hex(
      Uint8Array.from(atob(stored.split("$")[4] + "="), (c) => c.charCodeAt(0)),
    ),
    dk,
  );
});

Deno.test("item 1: misconfiguration throws RangeError with a clear message", () => {
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
    () => new Pbkdf2Hasher({ pbkdf2: "wasm" as any }),
    TypeError,
  );
});

Deno.test("the pbkdf2 option derives in place of WebCrypto, with the peppered input and the stored parameters", async () => {
  const calls: [string, number, number][] = [];
  const hasher = new Pbkdf2Hasher({
    iterations: 1000,
    pepper: "p".repeat(32),
    subtle: workersLikeSubtle(),
    randomBytes: fixedBytes(3),
    pbkdf2: (password, salt, iterations, length) => {
      calls.push([hex(salt), iterations, length]);
      return Promise.resolve(
        new Uint8Array(length).fill(password.length + iterations % 251),
      );
    },
  });
  const stored = await hasher.hash("password1");
  assert.deepEqual(calls, [["03".repeat(16), 1000, 32]]);
  assert.equal(await hasher.verify("password1", stored), true);
  // The input is HMAC-SHA256(pepper, password): 32 bytes, whatever the password.
  assert.equal(await hasher.verify("another password", stored), true);
  assert.equal(calls.length, 3);
});

/** Runs `body` while `navigator.userAgent` reads as Cloudflare Workers' does. */
function asWorkers<T>(body: () => T): T {
  Object.defineProperty(navigator, "userAgent", {
    value: "Cloudflare-Workers",
    configurable: true,
  });
  try {
    return body();
  } finally {
    delete (navigator as { userAgent?: string }).userAgent;
  }
}

Deno.test("on Cloudflare Workers the default hasher fails at construction and names @portcullis/hashers", () => {
  const refused = (err: unknown) => {
    assert.ok(err instanceof AuthError);
    assert.equal(err.code, "RUNTIME_UNSUPPORTED");
    assert.equal(err.reason, "webCryptoRefusesCost");
    assert.match(
      err.message,
      /^Pbkdf2Hasher cannot hash at 600000 iterations on Cloudflare Workers, whose WebCrypto refuses PBKDF2 above 100000: add @portcullis\/hashers \(npx jsr add @portcullis\/hashers\) and pass new Pbkdf2WasmHasher/,
    );
    return true;
  };
  asWorkers(() => {
    assert.throws(() => new Pbkdf2Hasher(), refused);
    // The password authenticator's default hasher: at start-up, not at login.
    assert.throws(
      () =>
        new PasswordAuthenticator({ credentials: new MemoryCredentialStore() }),
      refused,
    );
    // At or below the cap, or with a PBKDF2 of its own, it starts.
    assert.equal(new Pbkdf2Hasher({ iterations: 100_000 }).iterations, 100_000);
    const own = new Pbkdf2Hasher({
      pbkdf2: (_p, _s, _i, length) => Promise.resolve(new Uint8Array(length)),
    });
    assert.equal(own.iterations, 600_000);
  });
  assert.notEqual(navigator.userAgent, "Cloudflare-Workers");
  assert.equal(new Pbkdf2Hasher().iterations, 600_000);
});
