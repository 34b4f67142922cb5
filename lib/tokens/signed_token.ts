/**
 * The wire form shared by every signed token portcullis mints:
 * `v1.<kid>.<base64url(payload)>.<base64url(HMAC-SHA256)>`.
 *
 * The MAC covers `<purpose>:` followed by everything before the last dot, and
 * the key itself is derived per purpose, so a token minted for one purpose
 * (flash, email verification) never passes as another (session). The
 * algorithm is fixed: there is no algorithm field to confuse.
 *
 * @module
 */
import {
  decodeBase64Url,
  decodeBase64UrlToBinary,
  encodeBase64Url,
  isCanonicalBase64Url,
} from "../_common/base64url.ts";
import type { PurposeKeys, SigningKey } from "../secrets/secret_provider.ts";

/** The longest token accepted, in characters (docs/token_format.md). */
export const MAX_TOKEN_LENGTH = 4096;

// version, kid (6 bytes), payload, tag (32 bytes = 43 characters).
const V = 0x76;
const ONE = 0x31;
const DOT = 0x2e;
/** `v1.` + kid (8) + `.` + the shortest payload (2) + `.` + tag (43). */
const MIN_TOKEN_LENGTH = 58;
const NONE: Promise<null> = Promise.resolve(null);
const encoder = new TextEncoder();

/**
 * Signs a payload for one purpose.
 *
 * @param key The current signing key of that purpose.
 * @param purpose The purpose label bound into the MAC input.
 * @param payload The bytes to carry (readable by anyone holding the token).
 * @returns The token.
 *
 * @example Usage
 * ```ts
 * import { SecretProvider } from "@portcullis/auth";
 * import { signToken, verifyToken } from "@portcullis/auth/tokens";
 * const keys = await SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))).keys("flash");
 * const token = await signToken(keys.current, "flash", new TextEncoder().encode("hello"));
 * await verifyToken(keys, "flash", token); // the payload bytes
 * ```
 */
export async function signToken(
  key: SigningKey,
  purpose: string,
  payload: Uint8Array,
): Promise<string> {
  const signed = `v1.${key.kid}.${encodeBase64Url(payload)}`;
  const tag = await crypto.subtle.sign(
    "HMAC",
    key.key,
    encoder.encode(`${purpose}:${signed}`),
  );
  return `${signed}.${encodeBase64Url(new Uint8Array(tag))}`;
}

/**
 * Verifies a token of one purpose: length and shape first, then the MAC with
 * `crypto.subtle.verify` (constant time), and only then the payload is
 * decoded. Any failure answers `null`; nothing throws for bad input.
 *
 * @param keys The purpose's keys (current and previous, by kid).
 * @param purpose The purpose the token must have been minted for.
 * @param token The presented token.
 * @returns The payload bytes, or `null`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { SecretProvider } from "@portcullis/auth";
 * import { verifyToken } from "@portcullis/auth/tokens";
 * const keys = await SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))).keys("flash");
 * assert.equal(await verifyToken(keys, "flash", "v1.garbage"), null);
 * ```
 */
export function verifyToken(
  keys: PurposeKeys,
  purpose: string,
  token: string,
): Promise<Uint8Array | null> {
  const key = keyFor(keys, token);
  if (key === undefined) return NONE;
  const lastDot = token.length - 44;
  const tag = decodeBase64Url(token.slice(lastDot + 1));
  const payload = decodeBase64Url(token.slice(12, lastDot));
  if (tag === null || payload === null) return NONE;
  // Fresh buffers per call: reusing one scratch buffer would be safe only
  // where the runtime copies the arguments before verify() returns (as the
  // specification says), and a runtime that did not would then check one
  // request's tag against another's bytes.
  try {
    return crypto.subtle.verify(
      "HMAC",
      key,
      tag as Uint8Array<ArrayBuffer>,
      macInput(purpose, token, lastDot),
    ).then((ok) => (ok ? payload : null));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * {@linkcode verifyToken} with the payload answered as a binary string (one
 * character per byte) instead of bytes: the same checks in the same order
 * (shape, kid, strict base64url of tag and payload, then the MAC), but the
 * payload is only checked in place before the MAC, and decoded once the MAC
 * holds, by the runtime's `atob`. No typed array is made for it: on Deno
 * each one costs more than the rest of a payload's parsing. Not exported by
 * any entry point (the session manager's cold path).
 *
 * @param keys The purpose's keys.
 * @param purpose The purpose the token must have been minted for.
 * @param token The presented token.
 * @returns The payload as a binary string, or `null`.
 */
export function verifyTokenText(
  keys: PurposeKeys,
  purpose: string,
  token: string,
): Promise<string | null> {
  const key = keyFor(keys, token);
  if (key === undefined) return NONE;
  const lastDot = token.length - 44;
  const tag = decodeBase64Url(token.slice(lastDot + 1));
  if (tag === null || !isCanonicalBase64Url(token, 12, lastDot)) return NONE;
  try {
    return crypto.subtle.verify(
      "HMAC",
      key,
      tag as Uint8Array<ArrayBuffer>,
      macInput(purpose, token, lastDot),
    ).then((ok) =>
      ok ? decodeBase64UrlToBinary(token.slice(12, lastDot)) : null
    );
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The shape, `v1.<kid: 8>.<payload: 2..4000>.<tag: 43>`, by position, then
 * the key of its kid; `undefined` for anything else. The strict base64url
 * checks of the payload and the tag then refuse any other character (a dot
 * included).
 */
function keyFor(keys: PurposeKeys, token: string): CryptoKey | undefined {
  if (typeof token !== "string") return undefined;
  const length = token.length;
  const lastDot = length - 44;
  if (
    length < MIN_TOKEN_LENGTH || length > MAX_TOKEN_LENGTH ||
    lastDot - 12 > 4000 || token.charCodeAt(0) !== V ||
    token.charCodeAt(1) !== ONE || token.charCodeAt(2) !== DOT ||
    token.charCodeAt(11) !== DOT || token.charCodeAt(lastDot) !== DOT
  ) return undefined;
  return keys.byKid.get(token.slice(3, 11));
}

/**
 * `<purpose>:<token up to lastDot>` as bytes. The token part passed the
 * shape check, so it is ASCII and is copied byte by byte (cheaper than a
 * TextEncoder call on this hot path); the purpose's bytes are kept.
 */
function macInput(
  purpose: string,
  token: string,
  end: number,
): Uint8Array<ArrayBuffer> {
  let prefix = prefixes.get(purpose);
  if (prefix === undefined) {
    prefix = encoder.encode(`${purpose}:`);
    prefixes.set(purpose, prefix);
  }
  const out = new Uint8Array(prefix.length + end);
  out.set(prefix);
  for (let i = 0, o = prefix.length; i < end; i++, o++) {
    out[o] = token.charCodeAt(i);
  }
  return out;
}

const prefixes = new Map<string, Uint8Array>();
