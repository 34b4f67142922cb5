/**
 * A pure-JavaScript Argon2id engine (`@noble/hashes`, audited, no WASM) for
 * runtimes that forbid compiling WASM at run time: Cloudflare Workers and
 * Vercel Edge.
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that the reference app's first start does not download it (deno task installs every import-map dependency)
import { argon2idAsync } from "npm:@noble/hashes@^2.4.0/argon2.js";
import type { Argon2idInput } from "./argon2id.ts";

/**
 * Computes an Argon2id tag in plain JavaScript, with secret `K` and
 * associated data `X` support (so it reproduces RFC 9106 §5.3). It yields
 * to the event loop every few milliseconds. It is about 5× slower than the
 * WASM engine at OWASP's m=19456 t=2 p=1 (bench/RESULTS_authn.md), which
 * matters against Workers' CPU limits: measure before choosing it.
 *
 * @param input The derivation inputs.
 * @returns The raw tag.
 * @throws {Error} When the parameters are out of Argon2's ranges.
 *
 * @example Usage
 * ```ts
 * import { Argon2idHasher } from "@portcullis/hashers/argon2id";
 * import { nobleArgon2idEngine } from "@portcullis/hashers/argon2id-noble";
 * const hasher = new Argon2idHasher({ engine: nobleArgon2idEngine });
 * const stored = await hasher.hash("correct horse battery");
 * ```
 */
export async function nobleArgon2idEngine(
  input: Argon2idInput,
): Promise<Uint8Array> {
  return await argon2idAsync(input.password, input.salt, {
    m: input.memoryKiB,
    t: input.iterations,
    p: input.parallelism,
    dkLen: input.hashLength,
    version: 0x13,
    key: input.secret,
    personalization: input.associatedData,
    asyncTick: 10,
    maxmem: 2 ** 32 - 1,
  });
}
