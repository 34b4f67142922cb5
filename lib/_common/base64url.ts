// The one base64 codec of the library, shared by every layer (a neutral
// internal module, like Deno std's _common64.ts). Strict base64url (RFC 4648
// §5) without padding. Decoding refuses padding,
// characters outside the alphabet, impossible lengths and non-canonical
// trailing bits, so every byte string has exactly one accepted encoding.

const ALPHABET =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

/** The standard base64 alphabet (`+`, `/`), as the PHC string format uses. */
export const STANDARD_ALPHABET =
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

/** Encodes bytes as unpadded base64url. */
export function encodeBase64Url(bytes: Uint8Array): string {
  return encodeWith(bytes, ALPHABET);
}

/**
 * Encodes bytes as unpadded standard base64 (`+`, `/`, no `=`): the PHC
 * string format's "B64".
 */
export function encodeBase64Unpadded(bytes: Uint8Array): string {
  return encodeWith(bytes, STANDARD_ALPHABET);
}

/**
 * Decodes unpadded base64url strictly.
 *
 * @returns The bytes, or `null` when the input is not the canonical encoding
 * of any byte string.
 */
export function decodeBase64Url(s: string): Uint8Array | null {
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

/**
 * Whether `s.slice(start, end)` is the canonical unpadded base64url encoding
 * of some byte string: the rules of {@linkcode decodeBase64Url}, checked in
 * place, with nothing allocated.
 */
export function isCanonicalBase64Url(
  s: string,
  start: number,
  end: number,
): boolean {
  const rem = (end - start) & 3;
  if (rem === 1 || end < start) return false;
  let last = 0;
  for (let i = start; i < end; i++) {
    last = sextet(s, i);
    if (last < 0) return false;
  }
  // The last character's unused low bits: 4 of them after 2 characters in
  // the final group, 2 after 3.
  return rem === 0 || (last & (rem === 2 ? 15 : 3)) === 0;
}

/**
 * Decodes what {@linkcode isCanonicalBase64Url} accepted into a binary
 * string (one character per byte, 0 to 255) by the runtime's own `atob`:
 * no typed array to allocate, and the ASCII parts of a payload are then
 * slices of it.
 */
export function decodeBase64UrlToBinary(s: string): string {
  return atob(s.replaceAll("-", "+").replaceAll("_", "/"));
}

/**
 * The 6-bit value of a base64url character code, or -1 outside the
 * alphabet (for parsers that check characters in place).
 */
export function base64UrlSextet(code: number): number {
  return code < 128 ? DECODE[code] : -1;
}

function sextet(s: string, i: number): number {
  const code = s.charCodeAt(i);
  return code < 128 ? DECODE[code] : -1;
}
