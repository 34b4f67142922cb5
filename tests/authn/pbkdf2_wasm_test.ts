import assert from "node:assert/strict";
// @portcullis/hashers/pbkdf2-wasm: the WebAssembly and JavaScript PBKDF2
// routes for runtimes whose WebCrypto refuses 600000 iterations (Workers).
import { wasmPbkdf2Engine } from "../../packages/hashers/pbkdf2_wasm/_engine.ts";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import { Pbkdf2WasmHasher } from "../../packages/hashers/pbkdf2_wasm.ts";
import { pbkdf2Sha256Js } from "../../packages/hashers/pbkdf2_wasm/_pbkdf2_sha256_js.ts";
import { PBKDF2_WASM_BASE64 } from "../../packages/hashers/pbkdf2_wasm/_pbkdf2_wasm_bytes.ts";
import { generatePbkdf2Wat } from "../../packages/hashers/pbkdf2_wasm/_generate_wat.ts";
import { buildPbkdf2Wasm } from "../../packages/hashers/pbkdf2_wasm/build.ts";
import wycheproof from "../vectors/pbkdf2_hmacsha256_wycheproof.json" with {
  type: "json",
};
import local from "../vectors/pbkdf2_hmacsha256_local.json" with {
  type: "json",
};
import { fixedBytes, hex, unhex, workersLikeSubtle } from "./_helpers.ts";

const enc = new TextEncoder();
const dir = new URL("../../packages/hashers/pbkdf2_wasm/", import.meta.url);
const committedWasm = await Deno.readFile(new URL("pbkdf2.wasm", dir));
const derive = await wasmPbkdf2Engine();

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

Deno.test("the embedded base64 equals the committed pbkdf2.wasm byte for byte", () => {
  assert.deepEqual(fromBase64(PBKDF2_WASM_BASE64), committedWasm);
});

Deno.test("the committed pbkdf2.wat equals the generator's output", async () => {
  const committed = await Deno.readTextFile(new URL("pbkdf2.wat", dir));
  assert.equal(committed, generatePbkdf2Wat());
});

Deno.test("a fresh wabt build reproduces pbkdf2.wasm and _pbkdf2_wasm_bytes.ts", async () => {
  const built = await buildPbkdf2Wasm();
  assert.deepEqual(built.wasm, committedWasm);
  assert.equal(
    built.bytesModule,
    await Deno.readTextFile(new URL("_pbkdf2_wasm_bytes.ts", dir)),
  );
});

Deno.test("the WASM engine passes RFC 7914, the Go vectors and the 100k and 600k vectors of SECURITY §4.1", () => {
  for (const [pw, salt, c, len, dk] of [...local.tests, local.fullStrength]) {
    const got = derive(
      enc.encode(pw as string),
      enc.encode(salt as string),
      c as number,
      len as number,
    );
    assert.equal(hex(got), dk, `${pw}/${c}`);
  }
  // The two computed full-strength vectors are named in the brief.
  const hundredK = local.tests.find((t) => t[2] === 100_000);
  assert.equal(
    hundredK?.[4],
    "0394a2ede332c9a13eb82e9b24631604c31df978b4e2f0fbd2c549944f9d79a5",
  );
  assert.equal(local.fullStrength[2], 600_000);
  assert.equal(
    local.fullStrength[4],
    "669cfe52482116fda1aa2cbe409b2f56c8e4563752b7a28f6eaab614ee005178",
  );
});

Deno.test("the WASM engine passes all 60 Wycheproof pbkdf2_hmacsha256 cases", () => {
  assert.equal(wycheproof.tests.length, 60);
  for (const [id, pw, salt, c, len, dk] of wycheproof.tests) {
    const got = derive(
      unhex(pw as string),
      unhex(salt as string),
      c as number,
      len as number,
    );
    assert.equal(hex(got), dk, `tcId ${id}`);
  }
});

Deno.test("the WASM engine equals the JavaScript route at every padding boundary and for long inputs", () => {
  const lengths = [
    0,
    1,
    31,
    32,
    55,
    56,
    59,
    60,
    63,
    64,
    65,
    119,
    120,
    128,
    200,
  ];
  let seed = 7;
  const bytes = (n: number) =>
    Uint8Array.from(
      { length: n },
      () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24,
    );
  for (const pl of lengths) {
    for (const sl of lengths) {
      const pw = bytes(pl);
      const salt = bytes(sl);
      const len = 1 + ((pl * 7 + sl) % 97);
      assert.equal(
        hex(derive(pw, salt, 3, len)),
        hex(pbkdf2Sha256Js(pw, salt, 3, len)),
        `password ${pl} B, salt ${sl} B, ${len} B out`,
      );
    }
  }
});

Deno.test("the WASM engine grows its memory for a password larger than one page", () => {
  const pw = new Uint8Array(200_000).fill(0x61);
  const salt = new Uint8Array(16).fill(0x73);
  const expected = hex(pbkdf2Sha256Js(pw, salt, 2, 32));
  assert.equal(hex(derive(pw, salt, 2, 32)), expected);
  assert.equal(hex(derive(pw, salt, 2, 32)), expected, "and again, grown");
  assert.equal(
    hex(derive(enc.encode("password"), enc.encode("salt"), 4096, 32)),
    "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a",
  );
});

Deno.test("the WASM engine refuses out-of-range iterations and lengths", () => {
  const pw = enc.encode("password");
  const salt = enc.encode("salt");
  for (const c of [0, -1, 1.5, 2 ** 32, NaN]) {
    assert.throws(() => derive(pw, salt, c, 32), RangeError, `iterations ${c}`);
  }
  for (const n of [0, -1, 2.5, 2 ** 20 + 1]) {
    assert.throws(() => derive(pw, salt, 1, n), RangeError, `length ${n}`);
  }
});

Deno.test("wasmPbkdf2Engine refuses bytes and foreign modules", async () => {
  await assert.rejects(
    () => wasmPbkdf2Engine(committedWasm as unknown as WebAssembly.Module),
    TypeError,
  );
  // The smallest valid module: no exports.
  const empty = await WebAssembly.compile(
    new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]),
  );
  await assert.rejects(() => wasmPbkdf2Engine(empty), TypeError);
  assert.throws(
    () =>
      new Pbkdf2WasmHasher({
        wasmModule: committedWasm as unknown as WebAssembly.Module,
      }),
    TypeError,
  );
});

/** The PHC string real WebCrypto gives for the fixed salt. */
async function webCryptoPhc(password: string): Promise<string> {
  return await new Pbkdf2Hasher({ randomBytes: fixedBytes(7) }).hash(password);
}

Deno.test('Workers stand-in: "auto" takes the WASM route above 100000 and mints exactly the WebCrypto PHC string', async () => {
  const subtle = workersLikeSubtle();
  const hasher = new Pbkdf2WasmHasher({ subtle, randomBytes: fixedBytes(7) });
  const stored = await hasher.hash("correct horse battery");
  assert.equal(hasher.lastRoute, "wasm");
  assert.equal(subtle.refused, 1);
  assert.match(stored, /^\$pbkdf2-sha256\$i=600000\$/);
  assert.equal(stored, await webCryptoPhc("correct horse battery"));
  assert.equal(await hasher.verify("correct horse battery", stored), true);
  assert.equal(await hasher.verify("correct horse batterY", stored), false);
  assert.equal(subtle.refused, 1, "a refused count is not retried");
  assert.equal(hasher.lastRoute, "wasm");
});

/** The bytes-compiling entry points throw the way Workers and Vercel Edge do. */
async function withoutByteCompilation<T>(
  run: () => Promise<T>,
): Promise<{ result: T; instances: WebAssembly.Instance[] }> {
  const real = globalThis.WebAssembly;
  const instances: WebAssembly.Instance[] = [];
  const refusal = () =>
    new real.CompileError(
      "WebAssembly.compile(): Wasm code generation disallowed by embedder",
    );
  const standIn = Object.create(real);
  standIn.compile = () => Promise.reject(refusal());
  standIn.compileStreaming = () => Promise.reject(refusal());
  standIn.instantiateStreaming = () => Promise.reject(refusal());
  standIn.instantiate = async (
    source: WebAssembly.Module | BufferSource,
    imports?: WebAssembly.Imports,
  ) => {
    if (!(source instanceof real.Module)) throw refusal();
    const instance = await real.instantiate(
      source as WebAssembly.Module,
      imports,
    );
    instances.push(instance);
    return instance;
  };
  (globalThis as { WebAssembly: typeof WebAssembly }).WebAssembly = standIn;
  try {
    return { result: await run(), instances };
  } finally {
    (globalThis as { WebAssembly: typeof WebAssembly }).WebAssembly = real;
  }
}

Deno.test("no byte compilation (Workers, Vercel Edge): with wasmModule the WASM route hashes at full strength", async () => {
  const wasmModule = await WebAssembly.compile(committedWasm);
  const expected = await webCryptoPhc("correct horse battery");
  const { result, instances } = await withoutByteCompilation(async () => {
    await assert.rejects(
      () => WebAssembly.compile(committedWasm),
      /disallowed by embedder/,
    );
    await assert.rejects(
      () => WebAssembly.instantiate(committedWasm),
      /disallowed by embedder/,
    );
    const subtle = workersLikeSubtle();
    const hasher = new Pbkdf2WasmHasher({
      subtle,
      wasmModule,
      randomBytes: fixedBytes(7),
    });
    const stored = await hasher.hash("correct horse battery");
    return {
      stored,
      route: hasher.lastRoute,
      ok: await hasher.verify("correct horse battery", stored),
    };
  });
  assert.equal(result.route, "wasm");
  assert.equal(result.stored, expected);
  assert.equal(result.ok, true);
  // The password and salt do not stay in the instance's memory.
  assert.equal(instances.length, 1);
  const memory = instances[0].exports.memory as WebAssembly.Memory;
  assert.ok(new Uint8Array(memory.buffer).every((b) => b === 0));
});

Deno.test('no byte compilation and no wasmModule: "auto" still hashes at full strength in JavaScript; "wasm" throws', async () => {
  const expected = await webCryptoPhc("correct horse battery");
  const { result } = await withoutByteCompilation(async () => {
    const subtle = workersLikeSubtle();
    const hasher = new Pbkdf2WasmHasher({ subtle, randomBytes: fixedBytes(7) });
    const stored = await hasher.hash("correct horse battery");
    const route = hasher.lastRoute;
    const strict = new Pbkdf2WasmHasher({ route: "wasm", iterations: 1000 });
    await assert.rejects(() => strict.hash("x"), /disallowed by embedder/);
    return { stored, route };
  });
  assert.equal(result.route, "javascript");
  assert.equal(result.stored, expected);
});

Deno.test('route "wasm" never calls WebCrypto\'s PBKDF2 and verifies WebCrypto hashes', async () => {
  const subtle = workersLikeSubtle();
  const hasher = new Pbkdf2WasmHasher({
    subtle,
    route: "wasm",
    iterations: 20_000,
  });
  const reference = new Pbkdf2Hasher({ iterations: 20_000 });
  const stored = await reference.hash("correct horse battery");
  assert.equal(await hasher.verify("correct horse battery", stored), true);
  assert.equal(await hasher.verify("Correct horse battery", stored), false);
  assert.equal(hasher.lastRoute, "wasm");
  assert.equal(subtle.refused + subtle.derived, 0);
  assert.throws(
    () => new Pbkdf2WasmHasher({ route: "wasm2" as "wasm" }),
    RangeError,
  );
});

Deno.test("item 2: the JavaScript PBKDF2 route passes all 60 Wycheproof pbkdf2_hmacsha256 cases", () => {
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

Deno.test("item 2: RFC 7914, Go and local PBKDF2 vectors of SECURITY §4.1 and the 600000 vector pass on the JS route", () => {
  for (const [pw, salt, c, len, dk] of [...local.tests, local.fullStrength]) {
    const got = pbkdf2Sha256Js(
      enc.encode(pw as string),
      enc.encode(salt as string),
      c as number,
      len as number,
    );
    assert.equal(hex(got), dk, `${pw}/${c}`);
  }
});

Deno.test("item 47 / V17: with a Workers-like WebCrypto that refuses 600000, hash() falls back and equals the WebCrypto hash", async () => {
  const subtle = workersLikeSubtle();
  const refusing = new Pbkdf2WasmHasher({ subtle, randomBytes: fixedBytes(7) });
  const native = new Pbkdf2WasmHasher({ randomBytes: fixedBytes(7) });
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

Deno.test("item 47: the stand-in still lets WebCrypto derive at or below 100000", async () => {
  const subtle = workersLikeSubtle();
  const hasher = new Pbkdf2WasmHasher({ subtle, iterations: 100_000 });
  const stored = await hasher.hash("password123");
  assert.equal(subtle.derived, 1);
  assert.equal(hasher.lastRoute, "webcrypto");
  assert.equal(await hasher.verify("password123", stored), true);
});

Deno.test('route "webcrypto" surfaces the refusal; a peppered "javascript" route mints the core\'s hash', async () => {
  const strict = new Pbkdf2WasmHasher({
    subtle: workersLikeSubtle(),
    route: "webcrypto",
  });
  await assert.rejects(() => strict.hash("x"), { name: "NotSupportedError" });
  const pepper = "p".repeat(32);
  const core = new Pbkdf2Hasher({
    iterations: 1000,
    pepper,
    randomBytes: fixedBytes(3),
  });
  const js = new Pbkdf2WasmHasher({
    iterations: 1000,
    pepper,
    route: "javascript",
    randomBytes: fixedBytes(3),
  });
  assert.equal(await js.hash("password1"), await core.hash("password1"));
  assert.equal(js.lastRoute, "javascript");
  assert.ok(js instanceof Pbkdf2Hasher, "a drop-in for the core's hasher");
});
