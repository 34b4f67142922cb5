/**
 * Where signing keys come from: `AUTH_SECRET`, previous secrets for rotation,
 * and one derived key per purpose.
 *
 * @module
 */
import { encodeBase64Url } from "../_common/base64url.ts";
import { rawBytesProblem, textProblem } from "./_secret_randomness.ts";
import { isPublishedSecret } from "./_published_secrets.ts";

/** A secret as given: a string (its UTF-8 bytes are used) or raw bytes. */
export type SecretInput = string | Uint8Array;

/** One derived HMAC-SHA256 key and the id that names it in tokens. */
export interface SigningKey {
  /** Eight base64url characters derived from the secret; not secret. */
  readonly kid: string;
  /** A non-extractable HMAC-SHA256 key for one purpose. */
  readonly key: CryptoKey;
}

/** The keys of one purpose: the one that signs, and every one that verifies. */
export interface PurposeKeys {
  /** Signs new tokens (derived from the current secret). */
  readonly current: SigningKey;
  /** Verifies tokens: the current key and those of previous secrets, by kid. */
  readonly byKid: ReadonlyMap<string, CryptoKey>;
}

/** Options of {@linkcode SecretProvider.fromEnv}. */
export interface FromEnvOptions {
  /**
   * The variable holding previous secrets, separated by commas; default
   * `AUTH_PREVIOUS_SECRETS`.
   */
  previousName?: string;
  /**
   * Where to read variables: an object (Cloudflare's `env`, `process.env`)
   * or a function. Default: `Deno.env`, else `process.env`.
   */
  env?: Record<string, unknown> | ((name: string) => string | undefined);
}

/** The smallest secret accepted, in bytes (RFC 7518 §3.2: at least the hash's output). */
export const MIN_SECRET_BYTES = 32;

const encoder = new TextEncoder();
const HKDF_SALT = encoder.encode("portcullis/hkdf-salt/v1");

/**
 * Holds the application secret and previous secrets, and derives a separate
 * HMAC-SHA256 key per purpose (`session`, `flash`, `verification`, …) with
 * HKDF-SHA256, so a key for one purpose never verifies another's tokens.
 *
 * A missing, short or non-random secret throws at construction (a text
 * secret must be hex of 64 characters or base64/base64url of at least 43,
 * as `openssl rand -base64 32` prints): the library never invents one.
 * "Non-random" means plainly so: a repeated pattern, a counter, one byte
 * value far more often than chance, or words ("YourSecretKeyGoesHere…");
 * the checks refuse 32 bytes from a CSPRNG with odds below one in a
 * billion. A secret printed in an example of this documentation is public,
 * and refused too. Rotation: put the new secret in `AUTH_SECRET` and the old one
 * in `AUTH_PREVIOUS_SECRETS`; tokens signed by the old one keep verifying
 * (each token names its key by `kid`) until the old secret is removed.
 *
 * @example Usage
 * ```ts
 * import { SecretProvider } from "@portcullis/auth";
 * // In an app: SecretProvider.fromEnv("AUTH_SECRET"), set with the output
 * // of `openssl rand -base64 48`.
 * const secret = SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32)));
 * const keys = await secret.keys("session");
 * keys.current.kid; // eight base64url characters
 * ```
 */
export class SecretProvider {
  #secrets: Uint8Array[];
  #cache = new Map<string, Promise<PurposeKeys>>();

  /**
   * Holds a current secret and previous ones.
   *
   * @param current The secret that signs, at least 32 bytes.
   * @param previous Secrets that still verify, newest first.
   * @param name The name the secret came from, for error messages.
   * @throws {TypeError} When the secret is missing.
   * @throws {RangeError} When a secret is not 32 random bytes: shorter, not
   * hex or base64 text, or plainly not random.
   */
  constructor(
    current: SecretInput,
    previous: readonly SecretInput[] = [],
    name = "The secret",
  ) {
    this.#secrets = [
      checkSecret(current, name),
      ...previous.map((s, i) => checkSecret(s, `Previous secret #${i + 1}`)),
    ];
  }

  /**
   * Reads the secret from an environment variable (default `AUTH_SECRET`)
   * and previous secrets from `AUTH_PREVIOUS_SECRETS` (comma-separated).
   *
   * @param name The variable holding the current secret.
   * @param options Where to read and the previous-secrets variable.
   * @returns A provider.
   * @throws {TypeError} When the variable is not set.
   * @throws {RangeError} When it is not 32 random bytes as hex (64
   * characters) or base64/base64url (at least 43 characters).
   *
   * @example Usage
   * ```ts ignore
   * import { SecretProvider } from "@portcullis/auth";
   * const secret = SecretProvider.fromEnv("AUTH_SECRET");
   * ```
   */
  static fromEnv(
    name = "AUTH_SECRET",
    options: FromEnvOptions = {},
  ): SecretProvider {
    const read = envReader(options.env);
    const current = read(name);
    if (current === undefined || current === "") {
      throw new TypeError(
        `${name} is not set: set it to at least ${MIN_SECRET_BYTES} random bytes, for example the output of \`openssl rand -base64 32\``,
      );
    }
    const previousName = options.previousName ?? "AUTH_PREVIOUS_SECRETS";
    const previous = (read(previousName) ?? "").split(",").map((s) => s.trim())
      .filter((s) => s !== "");
    return new SecretProvider(current, previous, name);
  }

  /**
   * The static form: a provider from values in hand.
   *
   * @param current The secret that signs.
   * @param previous Secrets that still verify.
   * @returns A provider.
   * @throws {RangeError} When a secret is not 32 random bytes (see the
   * constructor).
   *
   * @example Usage
   * ```ts
   * import { SecretProvider } from "@portcullis/auth";
   * const secret = SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32)));
   * ```
   */
  static fromValue(
    current: SecretInput,
    previous: readonly SecretInput[] = [],
  ): SecretProvider {
    return new SecretProvider(current, previous);
  }

  /** How many secrets verify (the current one plus previous ones). */
  get size(): number {
    return this.#secrets.length;
  }

  /**
   * The keys of one purpose, derived once and kept.
   *
   * @param purpose A short label such as `"session"`.
   * @returns The signing key and every verifying key by kid.
   */
  keys(purpose: string): Promise<PurposeKeys> {
    let keys = this.#cache.get(purpose);
    if (keys === undefined) {
      keys = derivePurposeKeys(this.#secrets, purpose);
      this.#cache.set(purpose, keys);
    }
    return keys;
  }
}

async function derivePurposeKeys(
  secrets: Uint8Array[],
  purpose: string,
): Promise<PurposeKeys> {
  const byKid = new Map<string, CryptoKey>();
  let current: SigningKey | undefined;
  for (const secret of secrets) {
    const ikm = await crypto.subtle.importKey(
      "raw",
      secret as Uint8Array<ArrayBuffer>,
      "HKDF",
      false,
      ["deriveBits", "deriveKey"],
    );
    const kidBits = await crypto.subtle.deriveBits(
      {
        name: "HKDF",
        hash: "SHA-256",
        salt: HKDF_SALT,
        info: encoder.encode("portcullis/v1/kid"),
      },
      ikm,
      48,
    );
    const kid = encodeBase64Url(new Uint8Array(kidBits));
    const key = await crypto.subtle.deriveKey(
      {
        name: "HKDF",
        hash: "SHA-256",
        salt: HKDF_SALT,
        info: encoder.encode(`portcullis/v1/${purpose}`),
      },
      ikm,
      { name: "HMAC", hash: "SHA-256", length: 256 },
      false,
      ["sign", "verify"],
    );
    if (!byKid.has(kid)) byKid.set(kid, key);
    current ??= { kid, key };
  }
  return { current: current!, byKid };
}

function checkSecret(secret: SecretInput, name: string): Uint8Array {
  if (secret === undefined || secret === null || secret === "") {
    throw new TypeError(
      `${name} is not set: give at least ${MIN_SECRET_BYTES} random bytes, ${HINT}`,
    );
  }
  if (typeof secret !== "string" && !(secret instanceof Uint8Array)) {
    throw new TypeError(`${name} must be a string or a Uint8Array`);
  }
  // Compared on the key bytes it encodes: hex, either base64 alphabet,
  // padded or not, raw bytes.
  if (isPublishedSecret(secret)) {
    throw new RangeError(
      `${name} is an example printed in portcullis's documentation, so it is public: ${HINT}`,
    );
  }
  if (typeof secret === "string") checkEncoded(secret, name);
  const bytes = typeof secret === "string" ? encoder.encode(secret) : secret;
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new RangeError(
      `${name} must hold at least ${MIN_SECRET_BYTES} bytes: received ${bytes.length}`,
    );
  }
  if (new Set(bytes).size < 8) {
    throw new RangeError(
      `${name} is not random: it uses fewer than 8 distinct bytes; ${HINT}`,
    );
  }
  if (typeof secret !== "string") {
    const problem = rawBytesProblem(bytes);
    if (problem !== null) {
      throw new RangeError(`${name} is not random: ${problem}; ${HINT}`);
    }
  }
  return bytes.slice();
}

const HINT = "generate one with `openssl rand -base64 32`";
const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/;

/**
 * A secret given as text must be 32 random bytes in a recognisable
 * encoding: hex (64 characters or more) or base64/base64url (43 characters
 * or more, padding aside). A passphrase such as
 * `correct-horse-battery-staple-123` is refused, however long: base64 of
 * random bytes mixes upper- and lower-case letters, and a passphrase does
 * not. So is text that is plainly not random: a repeated pattern
 * (`"0123456789abcdef"` four times), words (`"YourSecretKeyGoesHere…"`),
 * or decoded bytes that repeat, count, or hold one value far more often
 * than chance (see `_secret_randomness.ts`). (Every secret printed in
 * the documentation's examples is refused before, in whatever form it is
 * given: `_published_secrets.ts`.) The text's UTF-8 bytes stay
 * the key material (HKDF input), so accepted secrets keep the keys they
 * always had.
 */
function checkEncoded(secret: string, name: string): void {
  if (HEX.test(secret)) {
    if (secret.length < 2 * MIN_SECRET_BYTES) {
      throw new RangeError(
        `${name} looks hex-encoded, so it holds ${
          Math.floor(secret.length / 2)
        } random bytes: use at least 64 hex characters (32 bytes), or ${HINT}`,
      );
    }
    if (new Set(secret.toLowerCase()).size < 8) {
      throw new RangeError(`${name} is not random: ${HINT}`);
    }
    notRandom(textProblem(secret.toLowerCase(), "hex"), name);
    return;
  }
  const data = secret.replace(/=+$/, "");
  if (!BASE64.test(secret)) {
    throw new RangeError(
      `${name} must be ${MIN_SECRET_BYTES} random bytes as hex (64 characters) or base64/base64url (at least 43 characters): ${HINT}`,
    );
  }
  const decoded = Math.floor((data.length * 6) / 8);
  if (decoded < MIN_SECRET_BYTES) {
    throw new RangeError(
      `${name} must hold at least ${MIN_SECRET_BYTES} random bytes: received base64 of ${decoded}; ${HINT}`,
    );
  }
  if (!/[A-Z]/.test(data) || !/[a-z]/.test(data) || new Set(data).size < 16) {
    throw new RangeError(
      `${name} does not look random (base64 of random bytes mixes upper- and lower-case letters and many symbols): ${HINT}`,
    );
  }
  notRandom(textProblem(secret, "base64"), name);
}

function notRandom(problem: string | null, name: string): void {
  if (problem !== null) {
    throw new RangeError(`${name} is not random: ${problem}; ${HINT}`);
  }
}

function envReader(
  env: FromEnvOptions["env"],
): (name: string) => string | undefined {
  if (typeof env === "function") return env;
  if (env !== undefined) {
    return (name) => {
      const v = env[name];
      return typeof v === "string" ? v : undefined;
    };
  }
  const g = globalThis as {
    Deno?: { env: { get(name: string): string | undefined } };
    process?: { env: Record<string, string | undefined> };
  };
  if (g.Deno?.env) return (name) => g.Deno!.env.get(name);
  if (g.process?.env) return (name) => g.process!.env[name];
  return () => undefined;
}
