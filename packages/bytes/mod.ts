/**
 * Byte codecs and comparisons shared by portcullis's packages (the TOTP,
 * passkey and hasher packages): strict base64url, strict PHC base64, a
 * constant-time comparison and a hex SHA-256. Internal to the portcullis
 * packages: no stability promise to anyone else. The core
 * (`@portcullis/auth`) keeps a private copy of its codec, so that it
 * depends on nothing.
 *
 * @module
 */
const ALPHABET =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

/** The standard base64 alphabet (`+`, `/`), as the PHC string format uses. */
const STANDARD_ALPHABET =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function encodeWith(bytes: Uint8Array, alphabet: string): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] +
      alphabet[(n >> 6) & 63] + alphabet[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63];
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] +
      alphabet[(n >> 6) & 63];
  }
  return out;
}

/**
 * Encodes bytes as base64url without padding (RFC 4648 §5).
 *
 * @param bytes The bytes.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeBase64Url } from "@portcullis/bytes";
 * assert.equal(encodeBase64Url(new Uint8Array([251, 255])), "-_8");
 * ```
 */
export function encodeBase64Url(bytes: Uint8Array): string {
  return encodeWith(bytes, ALPHABET);
}

/**
 * Encodes bytes as unpadded standard base64 (`+`, `/`, no `=`): the PHC
 * string format's "B64".
 */
function encodeBase64Unpadded(bytes: Uint8Array): string {
  return encodeWith(bytes, STANDARD_ALPHABET);
}

/**
 * Decodes base64url strictly: no padding, nothing outside the alphabet, no
 * impossible length, canonical (zero) trailing bits, so every byte string
 * has exactly one accepted spelling.
 *
 * @param s The text.
 * @returns The bytes, or `null` for any deviation.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeBase64Url } from "@portcullis/bytes";
 * assert.deepEqual(decodeBase64Url("-_8"), new Uint8Array([251, 255]));
 * assert.equal(decodeBase64Url("-_9"), null);
 * ```
 */
export function decodeBase64Url(s: string): Uint8Array<ArrayBuffer> | null {
  const len = s.length;
  const rem = len & 3;
  if (rem === 1) return null;
  const out = new Uint8Array((len >> 2) * 3 + (rem === 0 ? 0 : rem - 1));
  let o = 0;
  let i = 0;
  for (; i + 3 < len; i += 4) {
    const a = sextet(s, i),
      b = sextet(s, i + 1),
      c = sextet(s, i + 2),
      d = sextet(s, i + 3);
    if ((a | b | c | d) < 0) return null;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 255;
    out[o++] = n & 255;
  }
  if (rem === 2) {
    const a = sextet(s, i), b = sextet(s, i + 1);
    if ((a | b) < 0 || (b & 15) !== 0) return null;
    out[o++] = (a << 2) | (b >> 4);
  } else if (rem === 3) {
    const a = sextet(s, i), b = sextet(s, i + 1), c = sextet(s, i + 2);
    if ((a | b | c) < 0 || (c & 3) !== 0) return null;
    const n = (a << 18) | (b << 12) | (c << 6);
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 255;
  }
  return out;
}

function sextet(s: string, i: number): number {
  const code = s.charCodeAt(i);
  return code < 128 ? DECODE[code] : -1;
}

/**
 * Encodes bytes as PHC "B64": the standard alphabet (`+`, `/`) without `=`
 * padding, as the PHC string format specification and libargon2 use.
 *
 * @param bytes The bytes.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodePhcBase64 } from "@portcullis/bytes";
 * assert.equal(encodePhcBase64(new Uint8Array([251, 255])), "+/8");
 * ```
 */
export function encodePhcBase64(bytes: Uint8Array): string {
  return encodeBase64Unpadded(bytes);
}

/**
 * Decodes PHC "B64" strictly: standard alphabet only, no padding, no
 * whitespace, a length that is not 1 mod 4, and canonical (zero) trailing
 * bits.
 *
 * @param text The text.
 * @returns The bytes, or `null` for any deviation.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodePhcBase64 } from "@portcullis/bytes";
 * assert.deepEqual(decodePhcBase64("+/8"), new Uint8Array([251, 255]));
 * assert.equal(decodePhcBase64("+/8="), null);
 * ```
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
 * @param a One.
 * @param b The other.
 * @returns `true` when both have the same length and content.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { timingSafeEqual } from "@portcullis/bytes";
 * assert.equal(timingSafeEqual(new Uint8Array([1]), new Uint8Array([1])), true);
 * ```
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/**
 * The hex SHA-256 of a string's UTF-8 bytes.
 *
 * @param text The text.
 * @returns 64 lower-case hex digits.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { sha256Hex } from "@portcullis/bytes";
 * assert.equal((await sha256Hex("")).slice(0, 8), "e3b0c442");
 * ```
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}
