/**
 * The options of `Pbkdf2Hasher`: cost bounds, pepper, and which
 * implementation derives the key.
 *
 * @module
 */

/** Which implementation derives the key; see {@linkcode Pbkdf2HasherOptions.route}. */
export type Pbkdf2Route = "auto" | "webcrypto" | "wasm" | "javascript";

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
  /** The WebCrypto to use. Default `crypto.subtle`. */
  subtle?: SubtleCrypto;
  /**
   * `"auto"` (default) tries WebCrypto and, when it refuses (Workers answer
   * `NotSupportedError` above 100000 iterations), derives the same standard
   * PBKDF2 in WebAssembly at the same cost (about 3.3× WebCrypto here), or,
   * when WebAssembly cannot be loaded either, in JavaScript (about 4.5×;
   * bench/RESULTS_authn.md). A refused iteration count is remembered, so
   * later derivations at that cost skip WebCrypto; a failed WebAssembly
   * load is remembered too.
   * `"webcrypto"` never falls back (the refusal is thrown);
   * `"wasm"` always uses WebAssembly (a load failure is thrown);
   * `"javascript"` never calls WebCrypto's PBKDF2 nor WebAssembly.
   */
  route?: Pbkdf2Route;
  /**
   * The compiled `pbkdf2.wasm` of this package, for runtimes that refuse to
   * compile WebAssembly from bytes (Cloudflare Workers, Vercel Edge) but
   * give a `WebAssembly.Module` for an imported `.wasm` file. Without it,
   * the WebAssembly route compiles the bytes embedded in the package, which
   * Deno, Node and Bun allow. On Workers, with wrangler's default rule for
   * `*.wasm` imports:
   *
   * ```ts ignore
   * import pbkdf2Wasm from "@portcullis/auth/hashers/pbkdf2-sha256.wasm";
   * const hasher = new Pbkdf2Hasher({ wasmModule: pbkdf2Wasm });
   * ```
   *
   * See `lib/authn/pbkdf2_wasm.ts`.
   */
  wasmModule?: WebAssembly.Module;
}
