/**
 * The small, strict JWS reader that key-binding proofs need (DPoP proofs,
 * RFC 9449; device-bound session proofs, W3C DBSC): compact form only,
 * public JWKs only, and the three asymmetric algorithms WebCrypto verifies
 * on every runtime: ES256 (P-256, raw `r‖s` signature), RS256 (RSA of at
 * least 2048 bits) and EdDSA (Ed25519; also under its RFC 9864 name
 * `Ed25519`). `none`, HMAC and every other
 * algorithm are refused before any key is touched.
 *
 * @module
 */
import { decodeBase64Url, encodeBase64Url } from "../_common/base64url.ts";

/** An asymmetric JWS algorithm a proof may use. */
export type ProofAlgorithm = "ES256" | "RS256" | "EdDSA" | "Ed25519";

/** Every {@linkcode ProofAlgorithm}. */
export const PROOF_ALGORITHMS: readonly ProofAlgorithm[] = Object.freeze([
  "ES256",
  "RS256",
  "EdDSA",
  "Ed25519",
]);

/** A compact JWS split and decoded, not yet verified. */
export interface ParsedJws {
  /** The protected header (a JSON object). */
  readonly header: Record<string, unknown>;
  /** The payload (a JSON object). */
  readonly payload: Record<string, unknown>;
  /** The bytes the signature covers: `<header>.<payload>` as ASCII. */
  readonly signingInput: Uint8Array<ArrayBuffer>;
  /** The signature bytes. */
  readonly signature: Uint8Array<ArrayBuffer>;
}

/** A public key a proof carried, imported, with its RFC 7638 thumbprint. */
export interface ProofKey {
  /** The WebCrypto key, usable for `verify` only. */
  readonly key: CryptoKey;
  /** base64url(SHA-256) of the key's canonical JWK (RFC 7638). */
  readonly thumbprint: string;
  /** The canonical public JWK (only the members RFC 7638 names). */
  readonly jwk: Readonly<Record<string, string>>;
}

/** The longest compact JWS read, in characters. */
export const MAX_PROOF_LENGTH = 8192;

const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/**
 * Splits and decodes a compact JWS strictly: three base64url parts without
 * padding, a header and a payload that are JSON objects, at most
 * {@linkcode MAX_PROOF_LENGTH} characters. Nothing throws.
 *
 * @param jws The presented value (any type).
 * @returns The parts, or `null` for anything else.
 */
export function parseCompactJws(jws: unknown): ParsedJws | null {
  if (
    typeof jws !== "string" || jws.length > MAX_PROOF_LENGTH ||
    !JWS.test(jws)
  ) return null;
  const [h, p, s] = jws.split(".");
  const header = jsonObject(h);
  const payload = jsonObject(p);
  const signature = decodeBase64Url(s);
  if (header === null || payload === null || signature === null) return null;
  return {
    header,
    payload,
    signingInput: encoder.encode(`${h}.${p}`) as Uint8Array<ArrayBuffer>,
    signature: signature as Uint8Array<ArrayBuffer>,
  };
}

function jsonObject(part: string): Record<string, unknown> | null {
  const bytes = decodeBase64Url(part);
  if (bytes === null) return null;
  try {
    const value = JSON.parse(decoder.decode(bytes));
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? value
      : null;
  } catch {
    return null;
  }
}

// Members that only a private or symmetric key has (RFC 7518 §6).
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
const B64 = /^[A-Za-z0-9_-]+$/;
const keyCache = new Map<string, ProofKey>();
const KEY_CACHE_SIZE = 1000;

/**
 * The canonical public JWK of `jwk` for `alg` (RFC 7638's members in
 * lexicographic order), or `null` when `jwk` is not a public key of the
 * algorithm's type: a private member (`d`, `p`, …, or a symmetric `k`), a
 * wrong `kty`/`crv`, or a member of the wrong size.
 */
function canonicalJwk(
  alg: ProofAlgorithm,
  jwk: unknown,
): Record<string, string> | null {
  if (jwk === null || typeof jwk !== "object" || Array.isArray(jwk)) {
    return null;
  }
  const j = jwk as Record<string, unknown>;
  for (const m of PRIVATE_MEMBERS) if (m in j) return null;
  const str = (name: string, min: number, max: number): string | null => {
    const v = j[name];
    return typeof v === "string" && v.length >= min && v.length <= max &&
        B64.test(v)
      ? v
      : null;
  };
  if (alg === "ES256") {
    const x = str("x", 43, 43), y = str("y", 43, 43);
    if (j.kty !== "EC" || j.crv !== "P-256" || x === null || y === null) {
      return null;
    }
    return { crv: "P-256", kty: "EC", x, y };
  }
  if (alg === "RS256") {
    // 2048 to 8192 bits; the exponent of at most 4 bytes.
    const n = str("n", 342, 1366), e = str("e", 2, 6);
    if (j.kty !== "RSA" || n === null || e === null) return null;
    return { e, kty: "RSA", n };
  }
  const x = str("x", 43, 43);
  if (j.kty !== "OKP" || j.crv !== "Ed25519" || x === null) return null;
  return isStrongEd25519(x) ? { crv: "Ed25519", kty: "OKP", x } : null;
}

// Ed25519 public keys of small order (the eight points of order 1, 2, 4 or
// 8) have no private key to hold: a "signature" made without any key, such
// as R = the identity and S = 0 for the identity point, verifies for them
// in WebCrypto (Deno, Node and Bun alike), so a token bound to one would
// be as good as unbound. Their y coordinates are 0, 1, -1 and ±Y8 (the
// roots of d·y⁴ + 2y² - 1 = 0, tested); y at or past p is no canonical
// encoding of anything.
const P25519 = 2n ** 255n - 19n;
const Y8 =
  2707385501144840649318225287225658788936804267575313519463743609750303402022n;
const SMALL_ORDER_Y = [0n, 1n, P25519 - 1n, Y8, P25519 - Y8];

/** Whether a base64url Ed25519 key is canonical and not of small order. */
function isStrongEd25519(x: string): boolean {
  const bytes = Uint8Array.from(
    atob(x.replace(/-/g, "+").replace(/_/g, "/")),
    (c) => c.charCodeAt(0),
  );
  if (bytes.length !== 32) return false;
  let y = 0n;
  for (let i = 31; i >= 0; i--) {
    y = (y << 8n) | BigInt(i === 31 ? bytes[i] & 0x7f : bytes[i]);
  }
  return y < P25519 && !SMALL_ORDER_Y.includes(y);
}

function importParams(
  alg: ProofAlgorithm,
): EcKeyImportParams | RsaHashedImportParams | Algorithm {
  return alg === "ES256"
    ? { name: "ECDSA", namedCurve: "P-256" }
    : alg === "RS256"
    ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
    : { name: "Ed25519" };
}

function verifyParams(alg: ProofAlgorithm): EcdsaParams | Algorithm {
  return alg === "ES256"
    ? { name: "ECDSA", hash: "SHA-256" }
    : alg === "RS256"
    ? { name: "RSASSA-PKCS1-v1_5" }
    : { name: "Ed25519" };
}

/**
 * Whether a value names one of the allowed algorithms.
 *
 * @param alg The header's `alg`.
 * @param allowed The algorithms accepted here.
 */
export function isProofAlgorithm(
  alg: unknown,
  allowed: readonly ProofAlgorithm[],
): alg is ProofAlgorithm {
  return typeof alg === "string" &&
    (allowed as readonly string[]).includes(alg);
}

/**
 * Imports a proof's public JWK for one algorithm and computes its RFC 7638
 * thumbprint. Remembers up to 1000 keys (by their canonical form), so a
 * client's key is imported once.
 *
 * @param alg The algorithm the proof names.
 * @param jwk The JWK it carries.
 * @returns The key, or `null` for a JWK that is not a public key of that
 * algorithm (a private key included), or that WebCrypto refuses.
 */
export async function importProofKey(
  alg: ProofAlgorithm,
  jwk: unknown,
): Promise<ProofKey | null> {
  const canonical = canonicalJwk(alg, jwk);
  if (canonical === null) return null;
  const text = JSON.stringify(canonical);
  const cacheKey = `${alg} ${text}`;
  const cached = keyCache.get(cacheKey);
  if (cached !== undefined) return cached;
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey(
      "jwk",
      { ...canonical, ext: true } as JsonWebKey,
      importParams(alg),
      false,
      ["verify"],
    );
  } catch {
    return null;
  }
  if (
    alg === "RS256" &&
    ((key.algorithm as RsaHashedKeyAlgorithm).modulusLength ?? 0) < 2048
  ) return null;
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(text));
  const found: ProofKey = Object.freeze({
    key,
    thumbprint: encodeBase64Url(new Uint8Array(digest)),
    jwk: Object.freeze(canonical),
  });
  if (keyCache.size >= KEY_CACHE_SIZE) {
    keyCache.delete(keyCache.keys().next().value!);
  }
  keyCache.set(cacheKey, found);
  return found;
}

/**
 * Verifies a parsed JWS's signature with a key of the named algorithm.
 * ES256 signatures must be the 64 raw bytes `r‖s` (RFC 7518 §3.4).
 *
 * @param alg The algorithm (already checked against what is allowed).
 * @param key The public key.
 * @param jws The parsed JWS.
 * @returns Whether the signature holds; never throws.
 */
export async function verifyProofSignature(
  alg: ProofAlgorithm,
  key: CryptoKey,
  jws: ParsedJws,
): Promise<boolean> {
  if (alg === "ES256" && jws.signature.length !== 64) return false;
  if (alg !== "RS256" && jws.signature.length !== 64) return false;
  try {
    return await crypto.subtle.verify(
      verifyParams(alg),
      key,
      jws.signature,
      jws.signingInput,
    );
  } catch {
    return false;
  }
}

/**
 * base64url(SHA-256(text)): DPoP's `ath` of an access token.
 *
 * @param text The text (its UTF-8 bytes are hashed).
 * @returns The hash, base64url without padding.
 */
export async function sha256Base64Url(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(text));
  return encodeBase64Url(new Uint8Array(digest));
}
