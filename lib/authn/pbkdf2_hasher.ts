/**
 * The default password hasher: PBKDF2-HMAC-SHA256 at 600000 iterations,
 * with WebAssembly and pure-JavaScript routes for runtimes whose WebCrypto
 * refuses that cost (Cloudflare Workers), so the cost is never lowered.
 *
 * @module
 */
import type { PasswordHasher } from "./password_hasher.ts";
import type { Pbkdf2HasherOptions, Pbkdf2Route } from "./pbkdf2_options.ts";
import { pbkdf2Sha256Js } from "./_pbkdf2_sha256_js.ts";
import { type Pbkdf2Sha256Derive, wasmPbkdf2Engine } from "./pbkdf2_wasm.ts";
import {
  cryptoRandomBytes,
  decodePhcBase64,
  encodePhcBase64,
  timingSafeEqual,
} from "./_bytes.ts";

export type { Pbkdf2HasherOptions, Pbkdf2Route };

const ID = "pbkdf2-sha256";
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const PHC =
  /^\$pbkdf2-sha256\$i=([1-9][0-9]{0,9})\$([A-Za-z0-9+/]{11,86})\$([A-Za-z0-9+/]{43})$/;
const encoder = new TextEncoder();

interface Parsed {
  iterations: number;
  salt: Uint8Array<ArrayBuffer>;
  hash: Uint8Array;
}

/**
 * PBKDF2-HMAC-SHA256 password hashing in the PHC string format
 * `$pbkdf2-sha256$i=<iterations>$<salt>$<hash>`: 16-byte random salt,
 * 32-byte output, both in PHC "B64" (standard base64 alphabet `+` `/`,
 * no `=` padding, canonical trailing bits), the form of the PHC string
 * specification and of libargon2.
 *
 * The parser is strict: another id, iterations outside
 * `[minIterations, maxIterations]` or with a leading zero, a salt outside
 * 8–64 bytes, a hash other than 32 bytes, any non-canonical base64 or extra
 * field makes `verify` answer `false` (never an exception) and `needsRehash`
 * answer `true`. The password is hashed as the UTF-8 of the string exactly
 * as received (no trim, no case-fold, no other field concatenated).
 *
 * @example Usage
 * ```ts
 * import { Pbkdf2Hasher } from "@portcullis/auth";
 * const hasher = new Pbkdf2Hasher({ iterations: 1000 }); // 600000 by default
 * const stored = await hasher.hash("correct horse battery");
 * await hasher.verify("correct horse battery", stored); // true
 * hasher.needsRehash(stored); // false
 * ```
 */
export class Pbkdf2Hasher implements PasswordHasher {
  #iterations: number;
  #min: number;
  #max: number;
  #pepper: Uint8Array<ArrayBuffer> | undefined;
  #pepperKey: Promise<CryptoKey> | undefined;
  #randomBytes: (length: number) => Uint8Array;
  #subtle: SubtleCrypto;
  #route: Pbkdf2Route;
  #wasmModule: WebAssembly.Module | undefined;
  #wasm: Promise<Pbkdf2Sha256Derive> | undefined;
  #wasmFailed = false;
  #refusedFrom = Infinity;
  #lastRoute: Exclude<Pbkdf2Route, "auto"> | null = null;

  /**
   * Checks the options once; a misconfiguration fails here, not at login.
   *
   * @param options See {@linkcode Pbkdf2HasherOptions}.
   * @throws {RangeError} When the iteration bounds are not positive
   * integers in order, or the pepper is shorter than 32 bytes.
   * @throws {TypeError} When `wasmModule` is not a `WebAssembly.Module`.
   */
  constructor(options: Pbkdf2HasherOptions = {}) {
    const iterations = options.iterations ?? 600_000;
    const min = options.minIterations ?? Math.min(iterations, 100_000);
    const max = options.maxIterations ?? Math.max(iterations, 2_000_000);
    for (
      const [name, value] of [["iterations", iterations], [
        "minIterations",
        min,
      ], ["maxIterations", max]] as const
    ) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new RangeError(
          `Pbkdf2Hasher ${name} must be a positive integer: received ${value}`,
        );
      }
    }
    if (!(min <= iterations && iterations <= max)) {
      throw new RangeError(
        `Pbkdf2Hasher needs minIterations <= iterations <= maxIterations: received ${min}, ${iterations}, ${max}`,
      );
    }
    if (options.pepper !== undefined) {
      const bytes = typeof options.pepper === "string"
        ? encoder.encode(options.pepper)
        : new Uint8Array(options.pepper);
      if (bytes.length < 32) {
        throw new RangeError(
          `Pbkdf2Hasher pepper must hold at least 32 bytes: received ${bytes.length}`,
        );
      }
      this.#pepper = bytes;
    }
    const route = options.route ?? "auto";
    if (!["auto", "webcrypto", "wasm", "javascript"].includes(route)) {
      throw new RangeError(
        `Pbkdf2Hasher route must be "auto", "webcrypto", "wasm" or "javascript": received "${route}"`,
      );
    }
    if (
      options.wasmModule !== undefined &&
      !(options.wasmModule instanceof WebAssembly.Module)
    ) {
      throw new TypeError(
        "Pbkdf2Hasher wasmModule must be a WebAssembly.Module: import pbkdf2.wasm as a module, not as bytes",
      );
    }
    this.#wasmModule = options.wasmModule;
    this.#iterations = iterations;
    this.#min = min;
    this.#max = max;
    this.#randomBytes = options.randomBytes ?? cryptoRandomBytes;
    this.#subtle = options.subtle ?? crypto.subtle;
    this.#route = route;
  }

  /** The iteration count new hashes get. */
  get iterations(): number {
    return this.#iterations;
  }

  /**
   * Which implementation the last derivation used, or `null` before the
   * first; a startup check can log it.
   */
  get lastRoute(): "webcrypto" | "wasm" | "javascript" | null {
    return this.#lastRoute;
  }

  /**
   * Hashes a password with a fresh 16-byte salt.
   *
   * @param password The password exactly as received.
   * @returns `$pbkdf2-sha256$i=<iterations>$<salt>$<hash>`.
   * @throws {Error} When the salt source returns fewer than 16 bytes, with
   * `route: "webcrypto"` when WebCrypto refuses, or with `route: "wasm"`
   * when WebAssembly cannot be loaded.
   */
  async hash(password: string): Promise<string> {
    const drawn = this.#randomBytes(SALT_BYTES);
    if (!(drawn instanceof Uint8Array) || drawn.length !== SALT_BYTES) {
      throw new Error("Pbkdf2Hasher randomBytes must return 16 bytes");
    }
    const salt = new Uint8Array(drawn);
    const dk = await this.#derive(password, salt, this.#iterations);
    return `$${ID}$i=${this.#iterations}$${encodePhcBase64(salt)}$${
      encodePhcBase64(dk)
    }`;
  }

  /**
   * Checks a password against a stored hash, with the stored parameters and
   * a constant-time comparison.
   *
   * @param password The password exactly as received.
   * @param stored A stored hash of any format.
   * @returns `true` only for a well-formed PBKDF2 hash of this password;
   * `false` for anything else, malformed input included.
   * @throws {Error} Only with `route: "webcrypto"` when WebCrypto refuses,
   * or with `route: "wasm"` when WebAssembly cannot be loaded.
   */
  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = this.#parse(stored);
    if (parsed === null || typeof password !== "string") return false;
    const dk = await this.#derive(password, parsed.salt, parsed.iterations);
    return timingSafeEqual(dk, parsed.hash);
  }

  /**
   * Tells whether a stored hash should be re-minted: another algorithm, a
   * malformed string, or fewer iterations than this hasher's.
   *
   * @param stored A stored hash.
   * @returns `true` when the hash is below policy.
   */
  needsRehash(stored: string): boolean {
    const parsed = this.#parse(stored);
    return parsed === null || parsed.iterations < this.#iterations ||
      parsed.salt.length < SALT_BYTES;
  }

  #parse(stored: string): Parsed | null {
    if (typeof stored !== "string" || stored.length > 200) return null;
    const m = PHC.exec(stored);
    if (m === null) return null;
    const iterations = Number(m[1]);
    if (iterations < this.#min || iterations > this.#max) return null;
    const salt = decodePhcBase64(m[2]);
    const hash = decodePhcBase64(m[3]);
    if (salt === null || salt.length < 8 || salt.length > 64) return null;
    if (hash === null || hash.length !== HASH_BYTES) return null;
    return { iterations, salt, hash };
  }

  async #input(password: string): Promise<Uint8Array<ArrayBuffer>> {
    const bytes = encoder.encode(password);
    if (this.#pepper === undefined) return bytes;
    this.#pepperKey ??= this.#subtle.importKey(
      "raw",
      this.#pepper,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = await this.#subtle.sign("HMAC", await this.#pepperKey, bytes);
    return new Uint8Array(mac);
  }

  async #derive(
    password: string,
    salt: Uint8Array<ArrayBuffer>,
    iterations: number,
  ): Promise<Uint8Array> {
    const input = await this.#input(password);
    if (
      this.#route === "webcrypto" ||
      (this.#route === "auto" && iterations < this.#refusedFrom)
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
          HASH_BYTES * 8,
        );
        this.#lastRoute = "webcrypto";
        return new Uint8Array(bits);
      } catch (err) {
        if (this.#route === "webcrypto") throw err;
        // Any refusal: the WebAssembly and JavaScript routes compute the
        // same standard function at the same cost, so falling back never
        // weakens a hash.
        this.#refusedFrom = Math.min(this.#refusedFrom, iterations);
      }
    }
    if (
      this.#route === "wasm" || (this.#route === "auto" && !this.#wasmFailed)
    ) {
      this.#wasm ??= wasmPbkdf2Engine(this.#wasmModule);
      let derive: Pbkdf2Sha256Derive | undefined;
      try {
        derive = await this.#wasm;
      } catch (err) {
        if (this.#route === "wasm") {
          this.#wasm = undefined;
          throw err;
        }
        // Workers without `wasmModule`: compiling bytes is refused.
        this.#wasmFailed = true;
      }
      if (derive !== undefined) {
        this.#lastRoute = "wasm";
        return derive(input, salt, iterations, HASH_BYTES);
      }
    }
    this.#lastRoute = "javascript";
    return pbkdf2Sha256Js(input, salt, iterations, HASH_BYTES);
  }
}
