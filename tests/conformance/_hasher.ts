/**
 * Test support: the hasher the conformance runs inject, and what they
 * expose about it. Web APIs only, so it is bundled into the edge and
 * Workers builds.
 *
 * Passwords that start with {@linkcode FULL_STRENGTH_MARK} are hashed by
 * the production hasher (600000 iterations through WebCrypto; on Workers,
 * where WebCrypto refuses that, `Pbkdf2WasmHasher` of `@portcullis/hashers`
 * in the imported WebAssembly module, given as `full`); every other
 * password at
 * 1000 iterations, so the suite stays fast. Verification follows the
 * iteration count in the stored string. The one full-strength test thus
 * proves, per runtime, that the default hasher works there, and measures it.
 *
 * @module
 */
import { type PasswordHasher, Pbkdf2Hasher } from "../../mod.ts";

/** Passwords starting with this are hashed at full strength. */
export const FULL_STRENGTH_MARK = "full-strength ";

/** The low cost every other password is hashed at. */
export const TEST_ITERATIONS = 1000;

/** The path where a conformance build answers {@linkcode HasherReport}. */
export const HASHER_REPORT_PATH = "/__conformance/hasher";

/** What the last full-strength operation did. */
export interface HasherReport {
  /** The production hasher's iteration count. */
  iterations: number;
  /** `webcrypto`, `wasm` or `javascript`: the route the last derivation took. */
  route: string | null;
  /** Milliseconds of each full-strength `hash` and `verify`, in order. */
  timings: { op: "hash" | "verify"; ms: number }[];
}

/** The split hasher with its report. */
export interface ConformanceHasher extends PasswordHasher {
  /** What the full-strength side did. */
  report(): HasherReport;
}

/**
 * Makes the split hasher.
 *
 * @param full The production hasher for marked passwords; default
 * `new Pbkdf2Hasher()`.
 * @returns A hasher: full strength for marked passwords, low cost otherwise.
 */
export function conformanceHasher(
  full: Pbkdf2Hasher = new Pbkdf2Hasher(),
): ConformanceHasher {
  const low = new Pbkdf2Hasher({
    iterations: TEST_ITERATIONS,
    minIterations: TEST_ITERATIONS,
    maxIterations: full.iterations,
  });
  const timings: HasherReport["timings"] = [];
  const isFull = (stored: string) =>
    stored.startsWith(`$pbkdf2-sha256$i=${full.iterations}$`);
  const timed = async <T>(op: "hash" | "verify", run: () => Promise<T>) => {
    const t0 = performance.now();
    try {
      return await run();
    } finally {
      timings.push({ op, ms: Math.round(performance.now() - t0) });
    }
  };
  return {
    hash: (password) =>
      password.startsWith(FULL_STRENGTH_MARK)
        ? timed("hash", () => full.hash(password))
        : low.hash(password),
    verify: (password, stored) =>
      isFull(stored)
        ? timed("verify", () => full.verify(password, stored))
        : low.verify(password, stored),
    needsRehash: (stored) => isFull(stored) ? false : low.needsRehash(stored),
    report: () => ({
      iterations: full.iterations,
      // The core's hasher derives through WebCrypto only (it throws where
      // WebCrypto refuses); the package's hasher tells its route.
      route: "lastRoute" in full
        ? full.lastRoute as string | null
        : "webcrypto",
      timings: [...timings],
    }),
  };
}

/**
 * Wraps an app so that `GET /__conformance/hasher` answers the report;
 * every other request goes to the app untouched.
 *
 * @param app The app.
 * @param hasher The hasher it was built with.
 * @returns The wrapped handler.
 */
export function withHasherReport<A extends unknown[]>(
  app: (req: Request, ...rest: A) => Response | Promise<Response>,
  hasher: ConformanceHasher,
): (req: Request, ...rest: A) => Promise<Response> {
  return async (req, ...rest) => {
    if (new URL(req.url).pathname === HASHER_REPORT_PATH) {
      return Response.json(hasher.report());
    }
    return await app(req, ...rest);
  };
}

/** The limits the conformance builds pass: per-address limits out of the way (every request comes from 127.0.0.1), per-email login limit as shipped. */
export const CONFORMANCE_LIMITS = {
  loginPerAddress: { max: 10_000, windowSeconds: 60 },
  registerPerAddress: { max: 10_000, windowSeconds: 60 },
  verifyPerAddress: { max: 10_000, windowSeconds: 60 },
};
