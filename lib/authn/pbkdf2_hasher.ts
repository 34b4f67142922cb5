/**
 * The default password hasher: PBKDF2-HMAC-SHA256 at 600000 iterations
 * through WebCrypto.
 *
 * Cloudflare Workers' WebCrypto refuses PBKDF2 above 100000 iterations;
 * there the constructor fails at start-up and names the package that
 * derives the same PBKDF2 in WebAssembly (`@portcullis/hashers/pbkdf2-wasm`),
 * so the cost is never lowered and no login is the first to find out.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import type { PasswordHasher } from "./password_hasher.ts";
import {
  cryptoRandomBytes,
  decodePhcBase64,
  encodePhcBase64,
  timingSafeEqual,
} from "./_bytes.ts";

/**
 * A PBKDF2-HMAC-SHA256 implementation: derives `length` bytes from the
 * password bytes (already peppered, when a pepper is set) and the salt.
 * See {@linkcode Pbkdf2HasherOptions.pbkdf2}.
 */
export type Pbkdf2Sha256 = (
  password: Uint8Array<ArrayBuffer>,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  length: number,
) => Promise<Uint8Array>;

/** Options of `Pbkdf2Hasher`. */
export interface Pbkdf2HasherOptions {
  /**
   * Iterations for new hashes. Default 600000 (OWASP 2023, ASVS 5.0).
   * Lower values are for tests only.
   */
  iterations?: number;
  /**
   * Stored hashes with fewer iterations never verify. Default: the smaller
   * of `iterations` and 100000.
   */
  minIterations?: number;
  /**
   * Stored hashes with more iterations never verify, so a planted hash
   * cannot make one login burn seconds of CPU. Default: the larger of
   * `iterations` and 2000000.
   */
  maxIterations?: number;
  /**
   * An optional pepper: a secret kept outside the database (at least 32
   * bytes, a string counts as its UTF-8 bytes). When set, the password is
   * first replaced by `HMAC-SHA256(pepper, UTF-8(password))` and that MAC
   * goes into PBKDF2. The stored string does not mark peppered hashes and
   * does not contain the pepper: losing or changing the pepper makes every
   * stored hash fail to verify, so rotate it only together with a reset.
   */
  pepper?: string | Uint8Array;
  /** Source of salt bytes. Default `crypto.getRandomValues`. */
  randomBytes?: (length: number) => Uint8Array;
  /** The WebCrypto to use (PBKDF2, and HMAC for the pepper). Default `crypto.subtle`. */
  subtle?: SubtleCrypto;
  /**
   * The PBKDF2-HMAC-SHA256 to derive with instead of WebCrypto's. Default:
   * WebCrypto's `deriveBits`. It must compute the standard function (RFC
   * 8018) at the iterations it is given, never fewer.
   *
   * On Cloudflare Workers, whose WebCrypto refuses more than 100000
   * iterations, the constructor refuses a higher `iterations` without it;
   * `Pbkdf2WasmHasher` of `@portcullis/hashers/pbkdf2-wasm` supplies one
   * (WebAssembly, at the same cost and the same PHC strings).
   */
  pbkdf2?: Pbkdf2Sha256;
}

const ID = "pbkdf2-sha256";
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const PHC =
  /^\$pbkdf2-sha256\$i=([1-9][0-9]{0,9})\$([A-Za-z0-9+/]{11,86})\$([A-Za-z0-9+/]{43})$/;
const encoder = new TextEncoder();

/** Cloudflare Workers' WebCrypto refuses PBKDF2 above this many iterations. */
const WORKERS_PBKDF2_CAP = 100_000;

/**
 * The most iterations this runtime's WebCrypto derives: 100000 on
 * Cloudflare Workers (whose `navigator.userAgent` is `Cloudflare-Workers`),
 * no limit elsewhere.
 */
function webCryptoPbkdf2Cap(): number {
  const agent = (globalThis as { navigator?: { userAgent?: unknown } })
    .navigator?.userAgent;
  return agent === "Cloudflare-Workers" ? WORKERS_PBKDF2_CAP : Infinity;
}

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
 * import assert from "node:assert/strict";
 * import { Pbkdf2Hasher } from "@portcullis/auth";
 * const hasher = new Pbkdf2Hasher({ iterations: 1000 }); // 600000 by default
 * const stored = await hasher.hash("correct horse battery");
 * assert.equal(await hasher.verify("correct horse battery", stored), true);
 * assert.equal(hasher.needsRehash(stored), false);
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
  #pbkdf2: Pbkdf2Sha256;

  /**
   * Checks the options once; a misconfiguration fails here, not at login.
   *
   * @param options See {@linkcode Pbkdf2HasherOptions}.
   * @throws {RangeError} When the iteration bounds are not positive
   * integers in order, or the pepper is shorter than 32 bytes.
   * @throws {TypeError} When `pbkdf2` is given and is not a function.
   * @throws {AuthError} `RUNTIME_UNSUPPORTED` (reason
   * `webCryptoRefusesCost`) on Cloudflare Workers, whose WebCrypto refuses
   * more than 100000 iterations, when `iterations` is higher and no
   * `pbkdf2` is given: the message names `@portcullis/hashers`.
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
    if (options.pbkdf2 !== undefined && typeof options.pbkdf2 !== "function") {
      throw new TypeError(
        "Pbkdf2Hasher pbkdf2 must be a function: received " +
          typeof options.pbkdf2,
      );
    }
    const cap = webCryptoPbkdf2Cap();
    if (options.pbkdf2 === undefined && iterations > cap) {
      throw new AuthError(
        "RUNTIME_UNSUPPORTED",
        `Pbkdf2Hasher cannot hash at ${iterations} iterations on Cloudflare Workers, whose WebCrypto refuses PBKDF2 above ${cap}: add @portcullis/hashers (npx jsr add @portcullis/hashers) and pass new Pbkdf2WasmHasher({ wasmModule }) of @portcullis/hashers/pbkdf2-wasm as the hasher, with wasmModule imported from @portcullis/hashers/pbkdf2-sha256.wasm`,
        { reason: "webCryptoRefusesCost" },
      );
    }
    this.#subtle = options.subtle ?? crypto.subtle;
    this.#pbkdf2 = options.pbkdf2 ??
      ((password, salt, iterations, length) =>
        webCryptoPbkdf2(this.#subtle, password, salt, iterations, length));
    this.#iterations = iterations;
    this.#min = min;
    this.#max = max;
    this.#randomBytes = options.randomBytes ?? cryptoRandomBytes;
  }

  /** The iteration count new hashes get. */
  get iterations(): number {
    return this.#iterations;
  }

  /**
   * Hashes a password with a fresh 16-byte salt.
   *
   * @param password The password exactly as received.
   * @returns `$pbkdf2-sha256$i=<iterations>$<salt>$<hash>`.
   * @throws {Error} When the salt source returns fewer than 16 bytes, or
   * when the PBKDF2 implementation refuses (WebCrypto's error, as thrown).
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
   * @throws {Error} Only when the PBKDF2 implementation refuses the stored
   * iterations (WebCrypto's error, as thrown).
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
    return await this.#pbkdf2(
      await this.#input(password),
      salt,
      iterations,
      HASH_BYTES,
    );
  }
}

async function webCryptoPbkdf2(
  subtle: SubtleCrypto,
  password: Uint8Array<ArrayBuffer>,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  length: number,
): Promise<Uint8Array> {
  const key = await subtle.importKey("raw", password, "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    key,
    length * 8,
  );
  return new Uint8Array(bits);
}
