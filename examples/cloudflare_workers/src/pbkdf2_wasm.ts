/**
 * The PBKDF2 WebAssembly module, imported the way Workers allow: wrangler
 * (and esbuild with a `.wasm` copy loader, as the conformance run does)
 * turns a `.wasm` import into a compiled `WebAssembly.Module`, which the
 * runtime may instantiate, while compiling bytes at run time is refused.
 *
 * @module
 */
// @ts-ignore: on Workers the default export of a .wasm import is a WebAssembly.Module
import pbkdf2Wasm from "@portcullis/auth/hashers/pbkdf2-sha256.wasm";

/** The compiled module for `new Pbkdf2Hasher({ wasmModule })`. */
export const pbkdf2WasmModule: WebAssembly.Module =
  pbkdf2Wasm as WebAssembly.Module;
