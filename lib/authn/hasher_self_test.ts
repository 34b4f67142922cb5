/**
 * A startup check that the configured password hasher really works at its
 * configured cost on this runtime (docs/security.md, "Password hashing at
 * full strength on every runtime").
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import type { PasswordHasher } from "./password_hasher.ts";

/** Options of {@linkcode selfTestHasher}. */
export interface SelfTestOptions {
  /**
   * Fail when one hash plus one verification takes longer than this many
   * milliseconds (for example a CPU budget per request). Default: no limit.
   */
  maxMilliseconds?: number;
  /** Clock in milliseconds. Default `performance.now`. */
  now?: () => number;
}

/** What {@linkcode selfTestHasher} measured. */
export interface SelfTestReport {
  /** Milliseconds one hash plus one verification took. */
  milliseconds: number;
}

/**
 * Mints one hash at the hasher's configured cost, checks that the right
 * password verifies and a wrong one does not, and that the fresh hash does
 * not already need a rehash. Run it once at boot: on a runtime that refuses
 * the cost (a WebCrypto that refuses the PBKDF2 iterations, or a WASM hasher
 * where WASM cannot be compiled) the application fails loudly at start
 * instead of on the first login, and the cost is never lowered behind
 * anyone's back.
 *
 * @param hasher The hasher the application will use.
 * @param options See {@linkcode SelfTestOptions}.
 * @returns How long the round trip took.
 * @throws {AuthError} `RUNTIME_UNSUPPORTED` when hashing throws, the round
 * trip gives a wrong answer, or it exceeds `maxMilliseconds`.
 *
 * @example Usage
 * ```ts
 * import { Pbkdf2Hasher } from "@portcullis/auth";
 * import { selfTestHasher } from "@portcullis/auth/passwords";
 * const hasher = new Pbkdf2Hasher({ iterations: 1000 }); // 600000 by default
 * const { milliseconds } = await selfTestHasher(hasher);
 * console.log(`password hashing takes ${milliseconds.toFixed(0)} ms`);
 * ```
 */
export async function selfTestHasher(
  hasher: PasswordHasher,
  options: SelfTestOptions = {},
): Promise<SelfTestReport> {
  const now = options.now ?? (() => performance.now());
  const probe = "portcullis self-test \u00e9\u{1F511}";
  const start = now();
  let ok: boolean;
  let wrong: boolean;
  let weak: boolean;
  try {
    const stored = await hasher.hash(probe);
    ok = await hasher.verify(probe, stored);
    wrong = await hasher.verify(probe + "!", stored);
    weak = hasher.needsRehash(stored);
  } catch (err) {
    throw new AuthError(
      "RUNTIME_UNSUPPORTED",
      `Password hasher self-test failed: this runtime refused to hash at the configured cost: ${
        err instanceof Error ? err.message : String(err)
      }`,
      { cause: err, reason: "selfTestFailed" },
    );
  }
  const milliseconds = now() - start;
  if (!ok || wrong || weak) {
    throw new AuthError(
      "RUNTIME_UNSUPPORTED",
      `Password hasher self-test failed: ${
        !ok
          ? "a fresh hash did not verify"
          : wrong
          ? "a wrong password verified"
          : "a fresh hash already needs a rehash"
      }`,
      { reason: "selfTestFailed" },
    );
  }
  const max = options.maxMilliseconds;
  if (max !== undefined && milliseconds > max) {
    throw new AuthError(
      "RUNTIME_UNSUPPORTED",
      `Password hasher self-test took too long: ${
        milliseconds.toFixed(0)
      } ms, over the budget of ${max} ms`,
      { reason: "selfTestTooSlow" },
    );
  }
  return { milliseconds };
}
