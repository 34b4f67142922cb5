/**
 * The cost of each PBKDF2-HMAC-SHA256 route at 600000 iterations, against
 * raw WebCrypto (baseline): the WebAssembly engine (the Workers route when
 * WebCrypto refuses), the pure-JavaScript fallback, and `Pbkdf2WasmHasher`
 * (`@portcullis/hashers/pbkdf2-wasm`) verifying through the WebAssembly
 * route. The goal is at most
 * 2× WebCrypto where the platform allows.
 *
 * Run: `deno bench -A bench/pbkdf2_routes_bench.ts`
 *
 * @module
 */
import { wasmPbkdf2Engine } from "../packages/hashers/pbkdf2_wasm/_engine.ts";
import { pbkdf2Sha256Js } from "../packages/hashers/pbkdf2_wasm/_pbkdf2_sha256_js.ts";
import { Pbkdf2WasmHasher } from "../packages/hashers/pbkdf2_wasm.ts";
import { Pbkdf2Hasher } from "../lib/authn/pbkdf2_hasher.ts";

const ITERATIONS = 600_000;
const PASSWORD = "correct horse battery staple";
const enc = new TextEncoder();
const password = enc.encode(PASSWORD);
const salt = crypto.getRandomValues(new Uint8Array(16));
const key = await crypto.subtle.importKey("raw", password, "PBKDF2", false, [
  "deriveBits",
]);
const derive = await wasmPbkdf2Engine();
// One derivation before measuring, as a warm isolate would have done.
derive(password, salt, ITERATIONS, 32);

const wasmHasher = new Pbkdf2WasmHasher({ route: "wasm" });
const stored = await new Pbkdf2Hasher().hash(PASSWORD);

Deno.bench({
  name: "raw WebCrypto PBKDF2-SHA256 600k",
  group: "pbkdf2",
  baseline: true,
  n: 20,
  async fn() {
    await crypto.subtle.deriveBits(
      { name: "PBKDF2", hash: "SHA-256", salt, iterations: ITERATIONS },
      key,
      256,
    );
  },
});

Deno.bench({
  name: "WebAssembly engine 600k",
  group: "pbkdf2",
  n: 20,
  fn() {
    derive(password, salt, ITERATIONS, 32);
  },
});

Deno.bench({
  name: "Pbkdf2WasmHasher verify 600k, route wasm",
  group: "pbkdf2",
  n: 20,
  async fn() {
    await wasmHasher.verify(PASSWORD, stored);
  },
});

Deno.bench({
  name: "pure JavaScript 600k",
  group: "pbkdf2",
  n: 10,
  fn() {
    pbkdf2Sha256Js(password, salt, ITERATIONS, 32);
  },
});
