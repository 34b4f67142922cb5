/**
 * Seals TOTP secrets at rest with AES-GCM, bound to their user.
 *
 * @module
 */
import { decodeBase64Url, encodeBase64Url } from "@portcullis/bytes";

const encoder = new TextEncoder();

/**
 * Encrypts with the first key; decrypts with any of them (key rotation).
 * The subject is the additional authenticated data, so a sealed secret
 * copied onto another user's row does not open.
 */
export class SecretBox {
  #keys: readonly CryptoKey[] | Promise<readonly CryptoKey[]>;

  /**
   * @param keys AES-GCM keys, the current one first (or a promise of them,
   * checked on first use).
   * @throws {TypeError} When no key is given or one is not an AES-GCM key.
   */
  constructor(keys: readonly CryptoKey[] | Promise<readonly CryptoKey[]>) {
    if (Array.isArray(keys)) checkKeys(keys);
    this.#keys = keys;
  }

  async #all(): Promise<readonly CryptoKey[]> {
    return checkKeys(await this.#keys);
  }

  /** Seals `plain` for `subject`: `v1.<iv>.<ciphertext>`. */
  async seal(subject: string, plain: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: encoder.encode(subject) },
      (await this.#all())[0],
      encoder.encode(plain),
    );
    return `v1.${encodeBase64Url(iv)}.${encodeBase64Url(new Uint8Array(ct))}`;
  }

  /** Opens a sealed value; `null` when no key opens it. */
  async open(subject: string, sealed: string): Promise<string | null> {
    const parts = sealed.split(".");
    if (parts.length !== 3 || parts[0] !== "v1") return null;
    const iv = decodeBase64Url(parts[1]);
    const ct = decodeBase64Url(parts[2]);
    if (iv === null || ct === null || iv.length !== 12) return null;
    for (const key of await this.#all()) {
      try {
        const plain = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv, additionalData: encoder.encode(subject) },
          key,
          ct,
        );
        return new TextDecoder().decode(plain);
      } catch {
        // try the next key
      }
    }
    return null;
  }
}

function checkKeys(keys: readonly CryptoKey[]): readonly CryptoKey[] {
  if (
    keys.length === 0 ||
    keys.some((k) => (k?.algorithm as { name?: string })?.name !== "AES-GCM")
  ) {
    throw new TypeError(
      "secretKeys must hold at least one AES-GCM CryptoKey (see deriveSecretKey)",
    );
  }
  return keys;
}

/**
 * Derives an AES-256-GCM key for sealing TOTP secrets from an HMAC key that
 * is already bound to that purpose (HMAC as a PRF over a fixed label), so
 * the application needs no second secret. With portcullis:
 * `deriveSecretKey((await secret.keys("totp-secret")).current.key)`.
 *
 * @param hmacKey An HMAC-SHA256 key used for nothing else.
 * @returns A non-extractable AES-GCM key.
 *
 * @example Usage
 * ```ts
 * import { deriveSecretKey } from "@portcullis/totp";
 * const hmac = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
 * const key = await deriveSecretKey(hmac);
 * console.assert(key.algorithm.name === "AES-GCM");
 * ```
 */
export async function deriveSecretKey(hmacKey: CryptoKey): Promise<CryptoKey> {
  const raw = await crypto.subtle.sign(
    "HMAC",
    hmacKey,
    encoder.encode("portcullis/totp/aes-gcm-key/v1"),
  );
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, [
    "encrypt",
    "decrypt",
  ]);
}
