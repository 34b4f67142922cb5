/**
 * Argon2id password hashing (RFC 9106) in the PHC string format, with an
 * injectable engine: `hash-wasm` (WASM) by default, or the pure-JavaScript
 * engine of `argon2id_noble_engine.ts` where WASM cannot be compiled at run
 * time (Cloudflare Workers, Vercel Edge).
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that the reference app's first start does not download it (deno task installs every import-map dependency)
import { argon2id } from "npm:hash-wasm@^4.13.0";
import type { PasswordHasher } from "@portcullis/auth";
import {
  decodePhcBase64,
  encodePhcBase64,
  timingSafeEqual,
} from "@portcullis/bytes";

/** The inputs of one Argon2id derivation (RFC 9106 §3.1). */
export interface Argon2idInput {
  /** Password bytes (UTF-8 of the password as received). */
  password: Uint8Array;
  /** Salt bytes. */
  salt: Uint8Array;
  /** Memory in KiB (`m`). */
  memoryKiB: number;
  /** Passes (`t`). */
  iterations: number;
  /** Lanes (`p`). */
  parallelism: number;
  /** Tag length in bytes. */
  hashLength: number;
  /** Optional secret value `K` (a pepper). */
  secret?: Uint8Array;
  /** Optional associated data `X`. */
  associatedData?: Uint8Array;
}

/** Computes one raw Argon2id tag (version 0x13). */
export type Argon2idEngine = (input: Argon2idInput) => Promise<Uint8Array>;

/**
 * The default engine, `hash-wasm`: fast WASM, but it compiles its WASM from
 * an embedded blob at the first call, which Cloudflare Workers and Vercel
 * Edge forbid; it supports a secret but not associated data.
 *
 * @param input The derivation inputs.
 * @returns The raw tag.
 * @throws {TypeError} When `associatedData` is given.
 *
 * @example Usage
 * ```ts
 * import { hashWasmArgon2idEngine } from "@portcullis/hashers/argon2id";
 * const tag = await hashWasmArgon2idEngine({
 *   password: new TextEncoder().encode("password"),
 *   salt: new TextEncoder().encode("somesalt"),
 *   memoryKiB: 19456, iterations: 2, parallelism: 1, hashLength: 32,
 * });
 * ```
 */
export async function hashWasmArgon2idEngine(
  input: Argon2idInput,
): Promise<Uint8Array> {
  if (input.associatedData !== undefined) {
    throw new TypeError(
      "hash-wasm cannot take Argon2 associated data: use nobleArgon2idEngine",
    );
  }
  return await argon2id({
    password: input.password,
    salt: input.salt,
    secret: input.secret,
    memorySize: input.memoryKiB,
    iterations: input.iterations,
    parallelism: input.parallelism,
    hashLength: input.hashLength,
    outputType: "binary",
  });
}

/** Options of {@linkcode Argon2idHasher}. */
export interface Argon2idHasherOptions {
  /** Memory in KiB for new hashes. Default 19456 (OWASP's first row). */
  memoryKiB?: number;
  /** Passes for new hashes. Default 2. */
  iterations?: number;
  /** Lanes for new hashes. Default 1. */
  parallelism?: number;
  /**
   * Stored hashes asking for more memory never verify, so a planted hash
   * cannot exhaust an isolate (Workers have 128 MB). Default: the larger of
   * `memoryKiB` and 65536.
   */
  maxMemoryKiB?: number;
  /** Stored hashes with more passes never verify. Default: the larger of `iterations` and 10. */
  maxIterations?: number;
  /**
   * An optional Argon2 secret `K` (a pepper, at least 32 bytes) kept
   * outside the database. It is not recorded in the stored string: losing
   * it makes every hash fail to verify.
   */
  secret?: Uint8Array;
  /** The derivation engine. Default {@linkcode hashWasmArgon2idEngine}. */
  engine?: Argon2idEngine;
  /** Source of salt bytes. Default `crypto.getRandomValues`. */
  randomBytes?: (length: number) => Uint8Array;
}

const PHC =
  /^\$argon2id\$v=19\$m=([1-9][0-9]{0,9}),t=([1-9][0-9]{0,9}),p=([1-9][0-9]{0,2})\$([A-Za-z0-9+/]{11,86})\$([A-Za-z0-9+/]{22,86})$/;
const encoder = new TextEncoder();

interface Parsed {
  memoryKiB: number;
  iterations: number;
  parallelism: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

/**
 * Argon2id, stored as `$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>`
 * (PHC "B64": standard alphabet, unpadded), the format of libargon2. New
 * hashes use a 16-byte salt and a 32-byte tag.
 *
 * Strict parsing: another id or version, parameters in another order,
 * `keyid`/`data` fields, memory below `8 × p` or above `maxMemoryKiB`,
 * passes above `maxIterations`, more than 16 lanes, a salt outside 8–64
 * bytes, a tag outside 16–64 bytes or non-canonical base64 all verify as
 * `false`, never an exception.
 *
 * On Cloudflare Workers and Vercel Edge pass
 * `engine: nobleArgon2idEngine` (pure JavaScript, about 5× slower than the
 * WASM engine); a WASM build loaded as an imported `WebAssembly.Module` can
 * be wrapped as an {@linkcode Argon2idEngine} too.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { Argon2idHasher } from "@portcullis/hashers/argon2id";
 * const hasher = new Argon2idHasher(); // m=19456, t=2, p=1
 * const stored = await hasher.hash("correct horse battery");
 * assert.equal(await hasher.verify("correct horse battery", stored), true);
 * ```
 */
export class Argon2idHasher implements PasswordHasher {
  #memoryKiB: number;
  #iterations: number;
  #parallelism: number;
  #maxMemoryKiB: number;
  #maxIterations: number;
  #secret: Uint8Array | undefined;
  #engine: Argon2idEngine;
  #randomBytes: (length: number) => Uint8Array;

  /**
   * Checks the options once; a misconfiguration fails here, not at login.
   *
   * @param options See {@linkcode Argon2idHasherOptions}.
   * @throws {RangeError} When a parameter is not a positive integer, memory
   * is below `8 × parallelism`, parallelism is above 16, a bound is below
   * its parameter, or the secret is shorter than 32 bytes.
   */
  constructor(options: Argon2idHasherOptions = {}) {
    const m = options.memoryKiB ?? 19456;
    const t = options.iterations ?? 2;
    const p = options.parallelism ?? 1;
    const maxM = options.maxMemoryKiB ?? Math.max(m, 65536);
    const maxT = options.maxIterations ?? Math.max(t, 10);
    for (
      const [name, v] of [
        ["memoryKiB", m],
        ["iterations", t],
        ["parallelism", p],
        ["maxMemoryKiB", maxM],
        ["maxIterations", maxT],
      ] as const
    ) {
      if (!Number.isSafeInteger(v) || v < 1) {
        throw new RangeError(
          `Argon2idHasher ${name} must be a positive integer: received ${v}`,
        );
      }
    }
    if (p > 16 || m < 8 * p || maxM < m || maxT < t) {
      throw new RangeError(
        `Argon2idHasher needs parallelism <= 16, memoryKiB >= 8 * parallelism and bounds above the parameters: received m=${m}, t=${t}, p=${p}`,
      );
    }
    if (options.secret !== undefined && options.secret.length < 32) {
      throw new RangeError(
        `Argon2idHasher secret must hold at least 32 bytes: received ${options.secret.length}`,
      );
    }
    this.#memoryKiB = m;
    this.#iterations = t;
    this.#parallelism = p;
    this.#maxMemoryKiB = maxM;
    this.#maxIterations = maxT;
    this.#secret = options.secret;
    this.#engine = options.engine ?? hashWasmArgon2idEngine;
    this.#randomBytes = options.randomBytes ??
      ((n) => crypto.getRandomValues(new Uint8Array(n)));
  }

  /**
   * Hashes a password with a fresh 16-byte salt.
   *
   * @param password The password exactly as received.
   * @returns The PHC string.
   * @throws {Error} When the engine fails (for example WASM compilation is
   * forbidden by the runtime).
   */
  async hash(password: string): Promise<string> {
    const salt = this.#randomBytes(16);
    if (!(salt instanceof Uint8Array) || salt.length !== 16) {
      throw new Error("Argon2idHasher randomBytes must return 16 bytes");
    }
    const tag = await this.#engine({
      password: encoder.encode(password),
      salt,
      memoryKiB: this.#memoryKiB,
      iterations: this.#iterations,
      parallelism: this.#parallelism,
      hashLength: 32,
      secret: this.#secret,
    });
    return `$argon2id$v=19$m=${this.#memoryKiB},t=${this.#iterations},p=${this.#parallelism}$${
      encodePhcBase64(salt)
    }$${encodePhcBase64(tag)}`;
  }

  /**
   * Checks a password against a stored hash with its own parameters, in
   * constant time.
   *
   * @param password The password exactly as received.
   * @param stored A stored hash of any format.
   * @returns `true` only for a well-formed Argon2id hash of this password.
   * @throws {Error} When the engine itself fails on well-formed input.
   */
  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = this.#parse(stored);
    if (parsed === null || typeof password !== "string") return false;
    const tag = await this.#engine({
      password: encoder.encode(password),
      salt: parsed.salt,
      memoryKiB: parsed.memoryKiB,
      iterations: parsed.iterations,
      parallelism: parsed.parallelism,
      hashLength: parsed.hash.length,
      secret: this.#secret,
    });
    return timingSafeEqual(tag, parsed.hash);
  }

  /**
   * A hash needs a rehash when it is not a valid Argon2id string or any of
   * its memory, passes or lanes differ from this hasher's.
   *
   * @param stored A stored hash.
   * @returns `true` when the hash should be re-minted.
   */
  needsRehash(stored: string): boolean {
    const p = this.#parse(stored);
    return p === null || p.memoryKiB !== this.#memoryKiB ||
      p.iterations !== this.#iterations ||
      p.parallelism !== this.#parallelism || p.salt.length < 16 ||
      p.hash.length !== 32;
  }

  #parse(stored: string): Parsed | null {
    if (typeof stored !== "string" || stored.length > 300) return null;
    const m = PHC.exec(stored);
    if (m === null) return null;
    const memoryKiB = Number(m[1]);
    const iterations = Number(m[2]);
    const parallelism = Number(m[3]);
    if (
      parallelism > 16 || memoryKiB < 8 * parallelism ||
      memoryKiB > this.#maxMemoryKiB || iterations > this.#maxIterations
    ) {
      return null;
    }
    const salt = decodePhcBase64(m[4]);
    const hash = decodePhcBase64(m[5]);
    if (salt === null || salt.length < 8 || salt.length > 64) return null;
    if (hash === null || hash.length < 16 || hash.length > 64) return null;
    return { memoryKiB, iterations, parallelism, salt, hash };
  }
}

/** The hasher interface these classes implement (from `@portcullis/auth`). */
export type { PasswordHasher } from "@portcullis/auth";
