/**
 * Byte helpers shared by the hashers: strict PHC base64 and a constant-time
 * comparison.
 *
 * Private helper: not exported from `mod.ts`.
 *
 * @module
 */
import {
  encodeBase64Unpadded,
  STANDARD_ALPHABET,
} from "../_common/base64url.ts";

/**
 * Encodes bytes as PHC "B64": the standard alphabet (`+`, `/`) without `=`
 * padding, as the PHC string format specification and libargon2 use.
 */
export const encodePhcBase64: (bytes: Uint8Array) => string =
  encodeBase64Unpadded;

/**
 * Decodes PHC "B64" strictly: standard alphabet only, no padding, no
 * whitespace, a length that is not 1 mod 4, and canonical (zero) trailing
 * bits, so every byte string has exactly one accepted spelling.
 *
 * @returns The bytes, or `null` for any deviation.
 */
export function decodePhcBase64(
  text: string,
): Uint8Array<ArrayBuffer> | null {
  if (text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const v = STANDARD_ALPHABET.indexOf(text[i]);
    if (v < 0) return null;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >>> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return out;
}

/**
 * Compares two byte strings in time that depends only on their lengths.
 *
 * @returns `true` when both have the same length and content.
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** The default source of random bytes: `crypto.getRandomValues`. */
export function cryptoRandomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}
