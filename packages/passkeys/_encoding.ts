/**
 * Base64url without padding, private to this package.
 *
 * The same file is `packages/totp/_encoding.ts` and
 * `packages/passkeys/_encoding.ts`, on purpose (tests/packages_test.ts keeps
 * the two identical): each package is published on its own and may import
 * only its own files and the core's exports. The core's codec
 * (`lib/_common/base64url.ts`) is no export: exporting it would add a codec
 * to the core's public names and make both packages need that core version;
 * a package of its own for three small functions would be a new dependency
 * of both.
 *
 * @module
 */

/** Encodes bytes as base64url without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes base64url without padding; `null` when malformed. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/** Hex SHA-256 of a string. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}
