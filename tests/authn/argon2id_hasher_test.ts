import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Argon2idHasher,
  hashWasmArgon2idEngine,
} from "../../packages/hashers/argon2id.ts";
import { nobleArgon2idEngine } from "../../packages/hashers/argon2id_noble.ts";
import vectors from "../vectors/argon2.json" with { type: "json" };
import { fixedBytes, hex, unhex } from "./_helpers.ts";

const rfc = vectors.rfc9106;
const rfcInput = {
  password: unhex(rfc.password),
  salt: unhex(rfc.salt),
  secret: unhex(rfc.secret),
  associatedData: unhex(rfc.associatedData),
  memoryKiB: rfc.memoryKiB,
  iterations: rfc.iterations,
  parallelism: rfc.parallelism,
  hashLength: 32,
};

Deno.test("item 5: the pure-JS engine reproduces the RFC 9106 §5.3 Argon2id tag 0d640df5…e659 (secret and AD)", async () => {
  assert.equal(hex(await nobleArgon2idEngine(rfcInput)), rfc.argon2idTag);
});

Deno.test("item 5: hash-wasm has no associated-data input, so it refuses the RFC 9106 vector instead of ignoring AD", async () => {
  await assert.rejects(() => hashWasmArgon2idEngine(rfcInput), TypeError);
});

Deno.test("item 5: hash-wasm and the pure-JS engine agree with a secret and no AD", async () => {
  const input = { ...rfcInput, associatedData: undefined };
  assert.equal(
    hex(await hashWasmArgon2idEngine(input)),
    hex(await nobleArgon2idEngine(input)),
  );
});

for (
  const [name, engine] of [["hash-wasm", hashWasmArgon2idEngine], [
    "pure-JS",
    nobleArgon2idEngine,
  ]] as const
) {
  Deno.test(`item 5: both PHC vectors of SECURITY §4.4 verify (${name} engine)`, async () => {
    const hasher = new Argon2idHasher({ engine });
    for (const v of vectors.phc) {
      assert.equal(await hasher.verify(v.password, v.hash), true, v.hash);
      assert.equal(await hasher.verify("Password", v.hash), false, v.hash);
    }
  });
}

Deno.test("item 5: hash reproduces the OWASP-row PHC vector with the salt 'somesalt'", async () => {
  // The hasher draws 16 salt bytes; the vector's salt is 8, so rebuild
  // the string from the engine with the vector's inputs.
  const tag = await hashWasmArgon2idEngine({
    password: new TextEncoder().encode("password"),
    salt: new TextEncoder().encode("somesalt"),
    memoryKiB: 19456,
    iterations: 2,
    parallelism: 1,
    hashLength: 32,
  });
  const b64 = btoa(String.fromCharCode(...tag)).replace(/=+$/, "");
  assert.equal(
    `$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQ$${b64}`,
    vectors.phc[1].hash,
  );
});

Deno.test("item 5: defaults are OWASP m=19456 t=2 p=1 with a 16-byte salt", async () => {
  const hasher = new Argon2idHasher({ randomBytes: fixedBytes(9) });
  const stored = await hasher.hash("correct horse battery");
  assert.match(
    stored,
    /^\$argon2id\$v=19\$m=19456,t=2,p=1\$CQkJCQkJCQkJCQkJCQkJCQ\$[A-Za-z0-9+/]{43}$/,
  );
  assert.equal(await hasher.verify("correct horse battery", stored), true);
  assert.equal(hasher.needsRehash(stored), false);
  assert.equal(hasher.needsRehash(vectors.phc[0].hash), true); // m=65536
  assert.equal(
    new Argon2idHasher({ memoryKiB: 65536 }).needsRehash(stored),
    true,
  );
});

Deno.test("item 4: the Argon2id parser rejects other ids, versions, orders, bounds and base64", async () => {
  const hasher = new Argon2idHasher({
    memoryKiB: 64,
    iterations: 1,
    maxMemoryKiB: 1024,
  });
  const good = await hasher.hash("password1");
  assert.equal(await hasher.verify("password1", good), true);
  const tag = good.split("$")[5];
  const bad = [
    good.replace("argon2id", "argon2i"),
    good.replace("argon2id", "argon2d"),
    good.replace("v=19", "v=16"),
    good.replace("$v=19", ""),
    good.replace("m=64,t=1,p=1", "t=1,m=64,p=1"),
    good.replace("m=64", "m=2048"),
    good.replace("m=64", "m=4"),
    good.replace("t=1", "t=11"),
    good.replace("t=1", "t=0"),
    good.replace("p=1", "p=17"),
    good.replace("m=64", "m=064"),
    good.replace("p=1", "p=1,keyid=abc"),
    good.replace(tag, tag.slice(0, 20)),
    good.replace(tag, "-" + tag.slice(1)),
    good + "=",
    good + "$",
    "",
  ];
  for (const stored of bad) {
    assert.notEqual(stored, good);
    assert.equal(await hasher.verify("password1", stored), false, stored);
    assert.equal(hasher.needsRehash(stored), true, stored);
  }
});

Deno.test("item 4: property: random strings never throw and never verify as argon2id", async () => {
  const hasher = new Argon2idHasher({
    memoryKiB: 64,
    iterations: 1,
    maxMemoryKiB: 256,
  });
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.string({ maxLength: 120 }),
        fc.tuple(
          fc.nat(300),
          fc.nat(12),
          fc.nat(20),
          fc.stringMatching(/^[A-Za-z0-9+/=]{0,30}$/),
          fc.stringMatching(/^[A-Za-z0-9+/=]{0,50}$/),
        ).map(([m, t, p, s, h]) =>
          `$argon2id$v=19$m=${m},t=${t},p=${p}$${s}$${h}`
        ),
      ),
      async (s) => {
        assert.equal(await hasher.verify("password", s), false);
        hasher.needsRehash(s);
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("item 5: misconfiguration throws RangeError", () => {
  assert.throws(() => new Argon2idHasher({ memoryKiB: 4 }), RangeError);
  assert.throws(
    () => new Argon2idHasher({ parallelism: 17, memoryKiB: 1 << 16 }),
    RangeError,
  );
  assert.throws(
    () => new Argon2idHasher({ secret: new Uint8Array(8) }),
    /32 bytes/,
  );
});

Deno.test("item 5: a secret (pepper) is required to verify what it hashed", async () => {
  const secret = new Uint8Array(32).fill(5);
  const keyed = new Argon2idHasher({ memoryKiB: 64, iterations: 1, secret });
  const plain = new Argon2idHasher({ memoryKiB: 64, iterations: 1 });
  const stored = await keyed.hash("password1");
  assert.equal(await keyed.verify("password1", stored), true);
  assert.equal(await plain.verify("password1", stored), false);
});
