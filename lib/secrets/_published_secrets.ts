// Secrets that portcullis's own documentation has printed (JSDoc examples,
// docs/, READMEs, the app's test kit): public, so refused as secrets, since a
// developer who copies an example would otherwise ship one. Kept as SHA-256
// digests of the normalised text (no `=` padding, base64url read as base64,
// hex in lower case), so this file prints none of them.
// tests/secrets/published_secrets_test.ts scans the docs and fails when a
// secret appears there that is not refused: add its digest here
// (`sha256HexSync(normalizeSecretText(secret))`).
import { sha256HexSync } from "./_sha256.ts";

const PUBLISHED = new Set([
  // 0.1–0.3 JSDoc examples (the main entry, sessions, tokens, gates, the
  // identity middleware), docs/revocation.md, the Redis store's README.
  "baf448855b1e4d448a84108d2ac9d36ba6e36f7aba8c7cab195a2f788665d8e3",
  // SecretProvider's own JSDoc example.
  "d94a722ec22436d53c780450f3dc3ae9c53ffa3b0db73a1cf77285f5d3674d91",
  // The device token's JSDoc example and the reference app's test kit.
  "d9b036eb35b2ce95e70bbc08ebc47dc88d50b2d33f40f22bd28100ac6d845c69",
]);

/** The text compared: padding dropped, one base64 alphabet, hex lower case. */
export function normalizeSecretText(secret: string): string {
  const trimmed = secret.replace(/=+$/, "");
  return /^[0-9a-fA-F]+$/.test(trimmed)
    ? trimmed.toLowerCase()
    : trimmed.replaceAll("-", "+").replaceAll("_", "/");
}

/** Whether `secret` is one the documentation printed. */
export function isPublishedSecret(secret: string): boolean {
  return PUBLISHED.has(sha256HexSync(normalizeSecretText(secret)));
}
