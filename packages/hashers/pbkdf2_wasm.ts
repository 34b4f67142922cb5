/**
 * The core's PBKDF2-HMAC-SHA256 hasher for runtimes whose WebCrypto refuses
 * its cost: Cloudflare Workers cap WebCrypto's PBKDF2 at 100000 iterations,
 * and the core's `Pbkdf2Hasher` hashes at 600000. `Pbkdf2WasmHasher` tries
 * WebCrypto first and, where it refuses, derives the same standard PBKDF2
 * in WebAssembly (about 3.3× WebCrypto's time) or, when WebAssembly cannot
 * be loaded either, in JavaScript (about 4.5×), so the cost is never
 * lowered. The stored strings are the core's (`$pbkdf2-sha256$i=…`): either
 * hasher verifies the other's hashes.
 *
 * On Workers, import the compiled module with wrangler's default rule for
 * `*.wasm` imports (Workers refuse to compile WebAssembly from bytes):
 *
 * ```ts ignore
 * import { Pbkdf2WasmHasher } from "@portcullis/hashers/pbkdf2-wasm";
 * import pbkdf2Wasm from "@portcullis/hashers/pbkdf2-sha256.wasm";
 *
 * const hasher = new Pbkdf2WasmHasher({ wasmModule: pbkdf2Wasm });
 * ```
 *
 * When a bundler does not resolve the package's `.wasm` subpath, copy
 * `pbkdf2_wasm/pbkdf2.wasm` from the package into the project and import it
 * by relative path; the bytes are the same.
 *
 * @module
 */
import { Pbkdf2Hasher } from "@portcullis/auth";
import type { Pbkdf2HasherOptions } from "@portcullis/auth/passwords";
import {
  type Pbkdf2Sha256Derive,
  wasmPbkdf2Engine,
} from "./pbkdf2_wasm/_engine.ts";
import { pbkdf2Sha256Js } from "./pbkdf2_wasm/_pbkdf2_sha256_js.ts";

/** Which implementation derives the key; see {@linkcode Pbkdf2WasmHasherOptions.route}. */
export type Pbkdf2Route = "auto" | "webcrypto" | "wasm" | "javascript";

/** Options of {@linkcode Pbkdf2WasmHasher}: the core's, and the route. */
export interface Pbkdf2WasmHasherOptions
  extends Omit<Pbkdf2HasherOptions, "pbkdf2"> {
  /**
   * `"auto"` (default) tries WebCrypto and, when it refuses (Workers answer
   * `NotSupportedError` above 100000 iterations), derives the same standard
   * PBKDF2 in WebAssembly at the same cost, or, when WebAssembly cannot be
   * loaded either, in JavaScript. A refused iteration count is remembered,
   * so later derivations at that cost skip WebCrypto; a failed WebAssembly
   * load is remembered too.
   * `"webcrypto"` never falls back (the refusal is thrown);
   * `"wasm"` always uses WebAssembly (a load failure is thrown);
   * `"javascript"` never calls WebCrypto's PBKDF2 nor WebAssembly.
   */
  route?: Pbkdf2Route;
  /**
   * The compiled `pbkdf2.wasm` of this package
   * (`@portcullis/hashers/pbkdf2-sha256.wasm`), for runtimes that refuse to
   * compile WebAssembly from bytes (Cloudflare Workers, Vercel Edge) but
   * give a `WebAssembly.Module` for an imported `.wasm` file. Without it,
   * the WebAssembly route compiles the bytes embedded in this package,
   * which Deno, Node and Bun allow.
   */
  wasmModule?: WebAssembly.Module;
}

const ROUTES: readonly Pbkdf2Route[] = [
  "auto",
  "webcrypto",
  "wasm",
  "javascript",
];

/**
 * The core's `Pbkdf2Hasher` (same options, same PHC strings, same strict
 * parser) with WebAssembly and JavaScript routes for where WebCrypto
 * refuses the cost: the hasher to give `PasswordAuthenticator` on
 * Cloudflare Workers, where the core's default refuses to start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { Pbkdf2Hasher } from "@portcullis/auth";
 * import { Pbkdf2WasmHasher } from "@portcullis/hashers/pbkdf2-wasm";
 *
 * const hasher = new Pbkdf2WasmHasher({ route: "wasm", iterations: 1000 });
 * const stored = await hasher.hash("correct horse battery");
 * assert.equal(hasher.lastRoute, "wasm");
 * // The core's WebCrypto hasher verifies it: the same standard PBKDF2.
 * const core = new Pbkdf2Hasher({ iterations: 1000 });
 * assert.equal(await core.verify("correct horse battery", stored), true);
 * ```
 */
export class Pbkdf2WasmHasher extends Pbkdf2Hasher {
  #routes: Routes;

  /**
   * Checks the options once; a misconfiguration fails here, not at login.
   *
   * @param options See {@linkcode Pbkdf2WasmHasherOptions}.
   * @throws {RangeError} When `route` is not one of the four, or on the
   * core's checks (iteration bounds, pepper length).
   * @throws {TypeError} When `wasmModule` is not a `WebAssembly.Module`.
   */
  constructor(options: Pbkdf2WasmHasherOptions = {}) {
    const { route = "auto", wasmModule, ...core } = options;
    if (!ROUTES.includes(route)) {
      throw new RangeError(
        `Pbkdf2WasmHasher route must be "auto", "webcrypto", "wasm" or "javascript": received "${route}"`,
      );
    }
    if (
      wasmModule !== undefined && !(wasmModule instanceof WebAssembly.Module)
    ) {
      throw new TypeError(
        "Pbkdf2WasmHasher wasmModule must be a WebAssembly.Module: import pbkdf2.wasm as a module, not as bytes",
      );
    }
    const routes = new Routes(route, core.subtle ?? crypto.subtle, wasmModule);
    super({ ...core, pbkdf2: (p, s, i, l) => routes.derive(p, s, i, l) });
    this.#routes = routes;
  }

  /**
   * Which implementation the last derivation used, or `null` before the
   * first; a startup check can log it.
   */
  get lastRoute(): Exclude<Pbkdf2Route, "auto"> | null {
    return this.#routes.last;
  }
}

/** The route state of one hasher: what was refused, what was loaded. */
class Routes {
  last: Exclude<Pbkdf2Route, "auto"> | null = null;
  #route: Pbkdf2Route;
  #subtle: SubtleCrypto;
  #wasmModule: WebAssembly.Module | undefined;
  #wasm: Promise<Pbkdf2Sha256Derive> | undefined;
  #wasmFailed = false;
  #refusedFrom = Infinity;

  constructor(
    route: Pbkdf2Route,
    subtle: SubtleCrypto,
    wasmModule: WebAssembly.Module | undefined,
  ) {
    this.#route = route;
    this.#subtle = subtle;
    this.#wasmModule = wasmModule;
  }

  async derive(
    input: Uint8Array<ArrayBuffer>,
    salt: Uint8Array<ArrayBuffer>,
    iterations: number,
    length: number,
  ): Promise<Uint8Array> {
    const route = this.#route;
    if (
      route === "webcrypto" ||
      (route === "auto" && iterations < this.#refusedFrom)
    ) {
      try {
        const key = await this.#subtle.importKey(
          "raw",
          input,
          "PBKDF2",
          false,
          ["deriveBits"],
        );
        const bits = await this.#subtle.deriveBits(
          { name: "PBKDF2", hash: "SHA-256", salt, iterations },
          key,
          length * 8,
        );
        this.last = "webcrypto";
        return new Uint8Array(bits);
      } catch (err) {
        if (route === "webcrypto") throw err;
        // Any refusal: the WebAssembly and JavaScript routes compute the
        // same standard function at the same cost, so falling back never
        // weakens a hash.
        this.#refusedFrom = Math.min(this.#refusedFrom, iterations);
      }
    }
    if (route === "wasm" || (route === "auto" && !this.#wasmFailed)) {
      this.#wasm ??= wasmPbkdf2Engine(this.#wasmModule);
      let derive: Pbkdf2Sha256Derive | undefined;
      try {
        derive = await this.#wasm;
      } catch (err) {
        if (route === "wasm") {
          this.#wasm = undefined;
          throw err;
        }
        // Workers without `wasmModule`: compiling bytes is refused.
        this.#wasmFailed = true;
      }
      if (derive !== undefined) {
        this.last = "wasm";
        return derive(input, salt, iterations, length);
      }
    }
    this.last = "javascript";
    return pbkdf2Sha256Js(input, salt, iterations, length);
  }
}

export type {
  Pbkdf2HasherOptions,
  Pbkdf2Sha256,
} from "@portcullis/auth/passwords";
export type { PasswordHasher, Pbkdf2Hasher } from "@portcullis/auth";
