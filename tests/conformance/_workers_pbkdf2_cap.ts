/**
 * Test support, bundled first into the Workers conformance build: makes
 * local workerd refuse WebCrypto PBKDF2 above 100000 iterations exactly as
 * Cloudflare's production runtime does (`NotSupportedError: Pbkdf2 failed:
 * iteration counts above 100000 are not supported (requested 600000).`),
 * which open-source workerd and Miniflare do not enforce (workerd issue
 * #1346; docs/security.md).
 * So the default hasher's fallback route is what the suite exercises.
 *
 * @module
 */

/** The production cap. */
export const WORKERS_PBKDF2_CAP = 100_000;

/** How many derivations the stand-in refused, for the report. */
export const refusals = { count: 0 };

function refuse(algorithm: unknown): boolean {
  const a = algorithm as { name?: string; iterations?: number };
  return typeof a === "object" && a !== null &&
    String(a.name).toUpperCase() === "PBKDF2" &&
    (a.iterations ?? 0) > WORKERS_PBKDF2_CAP;
}

function refusal(algorithm: unknown): DOMException {
  refusals.count++;
  const requested = (algorithm as { iterations: number }).iterations;
  return new DOMException(
    `Pbkdf2 failed: iteration counts above 100000 are not supported (requested ${requested}).`,
    "NotSupportedError",
  );
}

const proto = Object.getPrototypeOf(crypto.subtle) as SubtleCrypto;
const deriveBits = proto.deriveBits;
const deriveKey = proto.deriveKey;
Object.defineProperty(proto, "deriveBits", {
  configurable: true,
  writable: true,
  value: function (
    this: SubtleCrypto,
    ...args: Parameters<SubtleCrypto["deriveBits"]>
  ) {
    if (refuse(args[0])) return Promise.reject(refusal(args[0]));
    return deriveBits.apply(this, args);
  },
});
Object.defineProperty(proto, "deriveKey", {
  configurable: true,
  writable: true,
  value: function (
    this: SubtleCrypto,
    ...args: Parameters<SubtleCrypto["deriveKey"]>
  ) {
    if (refuse(args[0])) return Promise.reject(refusal(args[0]));
    return deriveKey.apply(this, args);
  },
});
