/**
 * A passkey that lives in a test (an ECDSA P-256 key made here, `none`
 * attestation): the registration and assertion answers a browser would
 * send, with knobs for the lies a hostile client tells (flags, origin, RP
 * id, user handle). The server-side tests use it where the browser tests
 * use Chromium's virtual authenticator.
 *
 * @module
 */
const te = new TextEncoder();

/** base64url without padding. */
export function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-")
    .replace(/\//g, "_").replace(/=+$/, "");
}

function unb64url(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(
    atob(text.replace(/-/g, "+").replace(/_/g, "/")),
    (c) => c.charCodeAt(0),
  );
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** CBOR (RFC 8949) of the few kinds a credential needs. */
function cbor(value: unknown): Uint8Array<ArrayBuffer> {
  const head = (major: number, n: number) =>
    n < 24
      ? new Uint8Array([(major << 5) | n])
      : n < 256
      ? new Uint8Array([(major << 5) | 24, n])
      : new Uint8Array([(major << 5) | 25, n >> 8, n & 0xff]);
  if (typeof value === "number") {
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === "string") {
    const bytes = te.encode(value);
    return concat(head(3, bytes.length), bytes);
  }
  if (value instanceof Uint8Array) return concat(head(2, value.length), value);
  const entries = value instanceof Map
    ? [...value]
    : Object.entries(value as object);
  return concat(
    head(5, entries.length),
    ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)]),
  );
}

/** An ECDSA signature from WebCrypto's `r || s` to DER. */
function der(raw: Uint8Array): Uint8Array<ArrayBuffer> {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const v = b.slice(i);
    const body = v[0] & 0x80 ? concat(new Uint8Array([0]), v) : v;
    return concat(new Uint8Array([2, body.length]), body);
  };
  const seq = concat(int(raw.slice(0, 32)), int(raw.slice(32)));
  return concat(new Uint8Array([0x30, seq.length]), seq);
}

async function sha256(bytes: BufferSource): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/** The authenticator data's flag bits (WebAuthn §6.1). */
export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 };

/** What one answer may lie about. */
export interface Lies {
  /** The flags byte, instead of UP | UV (| AT) | BE | BS as configured. */
  flags?: number;
  /** The origin in the client data. */
  origin?: string;
  /** The RP id whose hash leads the authenticator data. */
  rpId?: string;
  /** The user handle sent with an assertion. */
  userHandle?: string;
  /** Flip a bit of the signed bytes. */
  forge?: boolean;
}

/** A software passkey for one origin. */
export class SoftAuthenticator {
  #keys!: CryptoKeyPair;
  #id = crypto.getRandomValues(new Uint8Array(16));
  #userHandle = "";
  #count = 1;
  #origin: string;
  #backup: number;

  /**
   * @param origin The app's origin (its host is the RP id).
   * @param backup The backup flags it reports: `"synced"` (BE and BS),
   * `"device"` (neither; the default).
   */
  constructor(origin: string, backup: "synced" | "device" = "device") {
    this.#origin = origin;
    this.#backup = backup === "synced" ? FLAGS.BE | FLAGS.BS : 0;
  }

  /** The credential id, base64url. */
  get id(): string {
    return b64url(this.#id);
  }

  async #authData(flags: number, rpId: string, extra = new Uint8Array()) {
    const count = new Uint8Array(4);
    new DataView(count.buffer).setUint32(0, this.#count++);
    return concat(
      await sha256(te.encode(rpId)),
      new Uint8Array([flags]),
      count,
      extra,
    );
  }

  #clientData(type: string, challenge: string, origin: string) {
    return te.encode(JSON.stringify({ type, challenge, origin }));
  }

  /** `navigator.credentials.create` with the server's options. */
  async create(
    options: { challenge: string; user: { id: string } },
    lies: Lies = {},
  ): Promise<Record<string, unknown>> {
    this.#keys = await crypto.subtle.generateKey(
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["sign"],
    ) as CryptoKeyPair;
    this.#userHandle = options.user.id;
    const jwk = await crypto.subtle.exportKey("jwk", this.#keys.publicKey);
    const cose = cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, unb64url(jwk.x!)],
        [-3, unb64url(jwk.y!)],
      ]),
    );
    const credential = concat(
      new Uint8Array(16),
      new Uint8Array([0, this.#id.length]),
      this.#id,
      cose,
    );
    const flags = lies.flags ??
      (FLAGS.UP | FLAGS.UV | FLAGS.AT | this.#backup);
    const authData = await this.#authData(
      flags | FLAGS.AT,
      lies.rpId ?? new URL(this.#origin).hostname,
      credential,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(
          this.#clientData(
            "webauthn.create",
            options.challenge,
            lies.origin ?? this.#origin,
          ),
        ),
        attestationObject: b64url(
          cbor({ fmt: "none", attStmt: {}, authData }),
        ),
        transports: ["internal"],
      },
      clientExtensionResults: {},
    };
  }

  /** `navigator.credentials.get` with the server's options. */
  async get(
    options: { challenge: string },
    lies: Lies = {},
  ): Promise<Record<string, unknown>> {
    const flags = lies.flags ?? (FLAGS.UP | FLAGS.UV | this.#backup);
    const authData = await this.#authData(
      flags,
      lies.rpId ?? new URL(this.#origin).hostname,
    );
    const clientData = this.#clientData(
      "webauthn.get",
      options.challenge,
      lies.origin ?? this.#origin,
    );
    const signed = concat(authData, await sha256(clientData));
    if (lies.forge) signed[0] ^= 1;
    const signature = new Uint8Array(
      await crypto.subtle.sign(
        { name: "ECDSA", hash: "SHA-256" },
        this.#keys.privateKey,
        signed,
      ),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(der(signature)),
        userHandle: lies.userHandle ?? this.#userHandle,
      },
      clientExtensionResults: {},
    };
  }
}
