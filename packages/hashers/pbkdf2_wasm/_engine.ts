/**
 * PBKDF2-HMAC-SHA256 in WebAssembly: the route `Pbkdf2WasmHasher` takes
 * where WebCrypto refuses the iteration count (Cloudflare Workers cap
 * WebCrypto's PBKDF2 at 100000). The whole iteration loop runs inside one
 * small hand-generated module (`pbkdf2.wat`, 24 KB), with the HMAC pad
 * states precomputed and no call between JavaScript and WebAssembly per
 * iteration. Its output is standard PBKDF2, equal to WebCrypto's bit for
 * bit.
 *
 * Two ways to load it:
 *
 * - **Deno, Node, Bun, browsers**: nothing to do. Without a module, the
 *   engine compiles the bytes embedded in this package.
 * - **Cloudflare Workers, Vercel Edge**: these refuse to compile
 *   WebAssembly from bytes at run time ("Wasm code generation disallowed by
 *   embedder") but give a `WebAssembly.Module` for an imported `.wasm`
 *   file, which may be instantiated: import
 *   `@portcullis/hashers/pbkdf2-sha256.wasm` and pass it as `wasmModule`.
 *
 * Private helper: not exported from the package.
 *
 * @module
 */

/**
 * Derives `length` bytes of PBKDF2-HMAC-SHA256, synchronously.
 *
 * @param password The password bytes (any length).
 * @param salt The salt bytes.
 * @param iterations From 1 to 2³² − 1.
 * @param length Output bytes, from 1 to 2²⁰.
 * @returns The derived key.
 */
export type Pbkdf2Sha256Derive = (
  password: Uint8Array,
  salt: Uint8Array,
  iterations: number,
  length: number,
) => Uint8Array;

interface Exports {
  memory: WebAssembly.Memory;
  input: WebAssembly.Global;
  derive(
    password: number,
    passwordLength: number,
    salt: number,
    saltLength: number,
    iterations: number,
    out: number,
    outLength: number,
  ): void;
}

const PAGE = 65536;
const MAX_LENGTH = 1 << 20;

// The embedded bytes are loaded only when needed, so that a Worker given
// `wasmModule` does not decode 33 KB of base64.
async function embeddedBytes(): Promise<Uint8Array<ArrayBuffer>> {
  const { PBKDF2_WASM_BASE64 } = await import("./_pbkdf2_wasm_bytes.ts");
  const binary = atob(PBKDF2_WASM_BASE64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function checkExports(exports: WebAssembly.Exports): Exports {
  const e = exports as unknown as Partial<Exports>;
  if (
    !(e.memory instanceof WebAssembly.Memory) ||
    typeof e.derive !== "function" ||
    !(e.input instanceof WebAssembly.Global)
  ) {
    throw new TypeError(
      "wasmPbkdf2Engine module must be portcullis's pbkdf2.wasm: received a module without memory, input and derive exports",
    );
  }
  return e as Exports;
}

/**
 * Loads the WebAssembly PBKDF2-HMAC-SHA256 engine.
 *
 * With `module` (a `WebAssembly.Module` of `pbkdf2.wasm`, as Workers and
 * Vercel Edge give for an imported `.wasm` file) it only instantiates, which
 * those runtimes allow. Without, it compiles the bytes embedded in this
 * package, which Deno, Node, Bun and browsers allow and Workers refuse.
 *
 * The returned function is synchronous and not re-entrant-safe across
 * threads (one instance, one memory); JavaScript never re-enters it. The
 * password and salt are copied into the instance's memory and wiped before
 * it returns.
 *
 * @param module The compiled `pbkdf2.wasm`, or nothing to use the embedded
 * bytes.
 * @returns A derive function.
 * @throws {TypeError} When `module` is not the portcullis PBKDF2 module.
 * @throws {WebAssembly.CompileError} When the runtime refuses to compile
 * the embedded bytes (Workers, Vercel Edge: pass `module`).
 */
export async function wasmPbkdf2Engine(
  module?: WebAssembly.Module,
): Promise<Pbkdf2Sha256Derive> {
  let instance: WebAssembly.Instance;
  if (module === undefined) {
    const compiled = await WebAssembly.compile(await embeddedBytes());
    instance = await WebAssembly.instantiate(compiled, {});
  } else {
    if (!(module instanceof WebAssembly.Module)) {
      throw new TypeError(
        "wasmPbkdf2Engine module must be a WebAssembly.Module: import pbkdf2.wasm as a module",
      );
    }
    instance = await WebAssembly.instantiate(module, {});
  }
  const exports = checkExports(instance.exports);
  const input = exports.input.value as number;
  return (password, salt, iterations, length) => {
    if (
      !Number.isInteger(iterations) || iterations < 1 ||
      iterations > 0xffffffff
    ) {
      throw new RangeError(
        `PBKDF2 iterations must be an integer from 1 to 4294967295: received ${iterations}`,
      );
    }
    if (!Number.isInteger(length) || length < 1 || length > MAX_LENGTH) {
      throw new RangeError(
        `PBKDF2 output length must be an integer from 1 to ${MAX_LENGTH}: received ${length}`,
      );
    }
    const saltAt = input + password.length;
    const outAt = saltAt + salt.length + 4;
    const end = outAt + length;
    const memory = exports.memory;
    if (end > memory.buffer.byteLength) {
      memory.grow(Math.ceil((end - memory.buffer.byteLength) / PAGE));
    }
    const bytes = new Uint8Array(memory.buffer);
    bytes.set(password, input);
    bytes.set(salt, saltAt);
    try {
      exports.derive(
        input,
        password.length,
        saltAt,
        salt.length,
        iterations >>> 0,
        outAt,
        length,
      );
      return bytes.slice(outAt, end);
    } finally {
      bytes.fill(0, input, end);
    }
  };
}
