// Secrets that portcullis's own documentation has printed (JSDoc examples,
// docs/, READMEs, the app's test kit): public, so refused as secrets, since a
// developer who copies an example would otherwise ship one. Kept as SHA-256
// digests of the key's bytes (the 32 bytes the printed text encodes), so
// this file prints none of them, and a printed secret is refused in every
// form SecretProvider accepts: base64 or base64url, padded or not, hex in
// any case, raw bytes, and a text's own bytes as a Uint8Array.
// tests/secrets/published_secrets_test.ts scans the docs and fails when a
// secret appears there that is not refused in every form: add the digest
// of its decoded bytes here (`sha256HexSync(bytes)`).
import { sha256HexSync } from "./_sha256.ts";

const PUBLISHED = new Set([
  // 0.1–0.3 JSDoc examples (the main entry, sessions, tokens, gates, the
  // identity middleware), docs/revocation.md, the Redis store's README.
  "edaa267c3ca246d1ab9c54d19539be2a51f3acc0942225f5244083e7b6a665e6",
  // SecretProvider's own JSDoc example.
  "121cefb855632003deacc25ee582f88bb996765caf22384e7e6a25042e71ea04",
  // The device token's JSDoc example and the reference app's test kit.
  "0a4c897ddf332bee9c57d76d2624619b150b1fc2057a708478832299549238d6",
]);

const HEX = /^[0-9a-fA-F]+$/;
const BASE64_ANY = /^[A-Za-z0-9+/_-]+$/;
const BASE64_DIGITS =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/**
 * The key bytes a secret may stand for: a text's hex decoding (an even
 * number of hex digits) and its base64 decoding (either alphabet, padding
 * and a trailing partial byte dropped), both tried since hex text is
 * base64 text too; raw bytes as they are and, when they are printable
 * text, that text's decodings.
 */
function keyCandidates(secret: string | Uint8Array): Uint8Array[] {
  if (typeof secret !== "string") {
    const out = [secret];
    if (secret.every((b) => b >= 0x20 && b < 0x7f)) {
      out.push(...keyCandidates(new TextDecoder().decode(secret)));
    }
    return out;
  }
  const data = secret.replace(/=+$/, "");
  const out: Uint8Array[] = [];
  if (HEX.test(data) && data.length % 2 === 0) {
    const bytes = new Uint8Array(data.length / 2);
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = parseInt(data.slice(2 * i, 2 * i + 2), 16);
    }
    out.push(bytes);
  }
  if (BASE64_ANY.test(data)) {
    const std = data.replaceAll("-", "+").replaceAll("_", "/");
    const bytes = new Uint8Array(Math.floor((std.length * 6) / 8));
    let bits = 0;
    let value = 0;
    let n = 0;
    for (const c of std) {
      value = ((value << 6) | BASE64_DIGITS.indexOf(c)) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes[n++] = (value >> bits) & 0xff;
      }
    }
    out.push(bytes);
  }
  return out;
}

/**
 * Whether `secret` is one the documentation printed, in whatever form it is
 * given: compared on the key bytes it encodes, never on its text.
 */
export function isPublishedSecret(secret: string | Uint8Array): boolean {
  return keyCandidates(secret).some((bytes) =>
    PUBLISHED.has(sha256HexSync(bytes))
  );
}
