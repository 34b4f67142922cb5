/**
 * The wire form of an API key (a personal access token), and the hash that
 * is all a store keeps of it.
 *
 * ```
 * pc_3tq7x2mz5kfa4bdn_<52 characters of secret><7 characters of checksum>
 * └┬┘ └──────┬──────┘ └────────────────────┬────────────────────────────┘
 * prefix   key id                  secret + CRC-32
 * ```
 *
 * - `prefix`: the application's (default `pc`), 2 to 10 lowercase letters
 *   and digits beginning with a letter, so that secret scanners can match
 *   its keys (`\bpc_[a-z2-7]{16}_[a-z2-7]{59}\b`).
 * - key id: 10 random bytes (80 bits) in lowercase base32 (RFC 4648
 *   alphabet, `a`–`z` and `2`–`7`), 16 characters. Public: a store finds the
 *   key by it (one read by primary key), and lists show it.
 * - secret: 32 random bytes (256 bits) in lowercase base32, 52 characters.
 * - checksum: the CRC-32 (IEEE) of everything before it, as 7 base32
 *   characters, so that a scanner can tell a real key from a random string
 *   without asking the server, and a mistyped key is refused without a
 *   store read.
 *
 * A key is 79 characters (with the default prefix) of the base32 alphabet
 * and `_`: it needs no escaping in a header, a URL or a shell, and a double
 * click selects it whole. The store keeps only the SHA-256 of the whole key
 * (64 hex digits); a fast hash suffices for 256 random bits (no guess can
 * reach them, so a slow password hash would buy nothing).
 *
 * @module
 */

/** The prefix of keys when the application names none. */
export const DEFAULT_API_KEY_PREFIX = "pc";

const PREFIX_RULE = /^[a-z][a-z0-9]{1,9}$/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const ID_BYTES = 10;
const ID_CHARS = 16;
const SECRET_BYTES = 32;
const SECRET_CHARS = 52;
const CHECK_CHARS = 7;
const BODY = /^[a-z2-7]+$/;
const encoder = new TextEncoder();

/** A freshly made key: show `key` once, store `id` and `hash`. */
export interface MintedApiKey {
  /** The whole key, to show its owner once and never again. */
  readonly key: string;
  /** Its public identifier. */
  readonly id: string;
  /** The SHA-256 of the whole key, 64 lowercase hex digits. */
  readonly hash: string;
}

/**
 * Checks a key prefix.
 *
 * @param prefix The prefix.
 * @returns The prefix.
 * @throws {TypeError} For anything but 2 to 10 lowercase letters and digits
 * beginning with a letter.
 */
export function checkApiKeyPrefix(prefix: string): string {
  if (typeof prefix !== "string" || !PREFIX_RULE.test(prefix)) {
    throw new TypeError(
      `API key prefix must be 2 to 10 lowercase letters and digits beginning with a letter: received "${
        String(prefix).slice(0, 20)
      }"`,
    );
  }
  return prefix;
}

/** Lowercase base32 without padding (RFC 4648 alphabet). */
function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

const CRC_TABLE = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  CRC_TABLE[n] = c >>> 0;
}

/** CRC-32 (IEEE 802.3) of an ASCII string. */
function crc32(text: string): number {
  let c = 0xffffffff;
  for (let i = 0; i < text.length; i++) {
    c = CRC_TABLE[(c ^ text.charCodeAt(i)) & 0xff] ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** The 7-character checksum of a key's first part. */
function checksum(text: string): string {
  const n = crc32(text);
  const bytes = new Uint8Array([
    n >>> 24,
    (n >>> 16) & 255,
    (n >>> 8) & 255,
    n & 255,
  ]);
  return base32(bytes);
}

/**
 * Makes a new key: a fresh id and secret from the platform's CSPRNG.
 *
 * @param prefix The application's prefix; default `pc`.
 * @param random Fills a buffer with random bytes; default
 * `crypto.getRandomValues`.
 * @returns The key (show it once), its id and its hash (store both).
 * @throws {TypeError} For a prefix {@linkcode checkApiKeyPrefix} refuses.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { mintApiKey, parseApiKey } from "@portcullis/auth/sessions";
 * const { key, id, hash } = await mintApiKey("pc");
 * assert.match(key, /^pc_[a-z2-7]{16}_[a-z2-7]{59}$/);
 * assert.equal(parseApiKey("pc", key), id);
 * assert.equal(hash.length, 64);
 * ```
 */
export async function mintApiKey(
  prefix: string = DEFAULT_API_KEY_PREFIX,
  random: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array = (b) =>
    crypto.getRandomValues(b),
): Promise<MintedApiKey> {
  checkApiKeyPrefix(prefix);
  const id = base32(random(new Uint8Array(ID_BYTES)));
  const secret = base32(random(new Uint8Array(SECRET_BYTES)));
  if (id.length !== ID_CHARS || secret.length !== SECRET_CHARS) {
    throw new RangeError("random must fill the buffer it is given");
  }
  const head = `${prefix}_${id}_${secret}`;
  const key = head + checksum(head);
  return { key, id, hash: await hashApiKey(key) };
}

/**
 * The id of a well-formed key of this prefix, or `null`: the exact length,
 * the alphabet, canonical base32 in every part, and a checksum that holds.
 * Says nothing of whether the key exists.
 *
 * @param prefix The application's prefix.
 * @param token The presented string.
 * @returns The key's id, or `null`.
 */
export function parseApiKey(prefix: string, token: string): string | null {
  const p = prefix.length;
  const length = p + 2 + ID_CHARS + SECRET_CHARS + CHECK_CHARS;
  if (
    typeof token !== "string" || token.length !== length ||
    !token.startsWith(prefix) || token[p] !== "_" ||
    token[p + 1 + ID_CHARS] !== "_"
  ) {
    return null;
  }
  const id = token.slice(p + 1, p + 1 + ID_CHARS);
  const rest = token.slice(p + 2 + ID_CHARS);
  if (!BODY.test(id) || !BODY.test(rest)) return null;
  // Canonical trailing bits: 80 bits fill the id exactly; the secret's last
  // character carries 1 bit and the checksum's 2.
  if ((ALPHABET.indexOf(rest[SECRET_CHARS - 1]) & 15) !== 0) return null;
  const head = token.slice(0, length - CHECK_CHARS);
  return checksum(head) === token.slice(length - CHECK_CHARS) ? id : null;
}

/**
 * The hash a store keeps of a key: SHA-256 of its UTF-8 bytes, 64
 * lowercase hex digits.
 *
 * @param key The whole key.
 * @returns The hash.
 */
export async function hashApiKey(key: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", encoder.encode(key)),
  );
  let out = "";
  for (const b of digest) out += (b < 16 ? "0" : "") + b.toString(16);
  return out;
}
