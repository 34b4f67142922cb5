// DPoP proofs for tests (RFC 9449): an ES256 key pair, a proof of chosen
// claims (or of a chosen header and payload, or a broken signature), and
// the `ath` of a token.

const enc = new TextEncoder();

/** base64url without padding. */
export const b64u = (bytes: Uint8Array | ArrayBuffer): string =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** base64url of a value's JSON. */
export const b64json = (v: unknown): string =>
  b64u(enc.encode(JSON.stringify(v)));

/** A P-256 key pair, its public JWK and (for tests that misuse it) the private one. */
export async function es256Key() {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const priv = await crypto.subtle.exportKey("jwk", pair.privateKey);
  return {
    pair,
    jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
    priv,
  };
}

/** A key of {@linkcode es256Key}. */
export type ProofKey = Awaited<ReturnType<typeof es256Key>>;

/** What to make of a proof other than a good one. */
export interface ProofParts {
  /** The JOSE header; default `typ` `dpop+jwt`, ES256 and the public key. */
  header?: Record<string, unknown>;
  /** The payload, in place of the claims. */
  payload?: Record<string, unknown>;
  /** Signs the input in place of the key. */
  sign?: (input: Uint8Array<ArrayBuffer>) => Promise<Uint8Array>;
  /** Flips a bit of the signature. */
  corrupt?: boolean;
}

/** A compact JWS proof of `claims` by `key`. */
export async function makeProof(
  key: ProofKey,
  claims: Record<string, unknown>,
  parts: ProofParts = {},
): Promise<string> {
  const header = parts.header ??
    { typ: "dpop+jwt", alg: "ES256", jwk: key.jwk };
  const payload = parts.payload ?? claims;
  const input = `${b64json(header)}.${b64json(payload)}`;
  const sig = parts.sign ? await parts.sign(enc.encode(input)) : new Uint8Array(
    await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      key.pair.privateKey,
      enc.encode(input),
    ),
  );
  if (parts.corrupt) sig[0] ^= 1;
  return `${input}.${b64u(sig)}`;
}

/** The `ath` claim of a token: base64url(SHA-256(token)). */
export async function ath(token: string): Promise<string> {
  return b64u(await crypto.subtle.digest("SHA-256", enc.encode(token)));
}
