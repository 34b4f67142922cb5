/**
 * Helpers shared by the authn tests.
 *
 * @module
 */

/** Hex of bytes. */
export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Bytes of hex. */
export function unhex(text: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) {
    out[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  }
  return out;
}

/** The exact error Cloudflare's production runtime throws above 100000. */
export function workersRefusal(requested: number): DOMException {
  return new DOMException(
    `Pbkdf2 failed: iteration counts above 100000 are not supported (requested ${requested}).`,
    "NotSupportedError",
  );
}

/**
 * A `crypto.subtle` that behaves like Cloudflare Workers in production:
 * `deriveBits` for PBKDF2 above 100000 iterations throws
 * `NotSupportedError`. Counts the calls it refused and passed.
 */
export function workersLikeSubtle(): SubtleCrypto & {
  refused: number;
  derived: number;
} {
  const real = crypto.subtle;
  const counts = { refused: 0, derived: 0 };
  const wrapper = {
    get refused() {
      return counts.refused;
    },
    get derived() {
      return counts.derived;
    },
    importKey: real.importKey.bind(real),
    sign: real.sign.bind(real),
    deriveBits(
      algorithm: Pbkdf2Params,
      key: CryptoKey,
      length: number,
    ): Promise<ArrayBuffer> {
      if (algorithm.name === "PBKDF2" && algorithm.iterations > 100_000) {
        counts.refused++;
        return Promise.reject(workersRefusal(algorithm.iterations));
      }
      counts.derived++;
      return real.deriveBits(algorithm, key, length);
    },
  };
  return wrapper as unknown as SubtleCrypto & {
    refused: number;
    derived: number;
  };
}

/** A fixed salt source, for reproducible hashes. */
export function fixedBytes(fill: number): (length: number) => Uint8Array {
  return (length) => new Uint8Array(length).fill(fill);
}

/** PBKDF2-HMAC-SHA256 through WebCrypto, as hex. */
export async function webCryptoPbkdf2(
  password: Uint8Array<ArrayBuffer>,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  length: number,
): Promise<string> {
  const key = await crypto.subtle.importKey("raw", password, "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    key,
    length * 8,
  );
  return hex(new Uint8Array(bits));
}
