/**
 * DPoP proofs (RFC 9449): a client proves, request by request, that it
 * holds the private key its token is bound to.
 *
 * @module
 */
import {
  importProofKey,
  isProofAlgorithm,
  parseCompactJws,
  PROOF_ALGORITHMS,
  type ProofAlgorithm,
  sha256Base64Url,
  verifyProofSignature,
} from "./proof_jwt.ts";
import type { KeyValueStore } from "../kv/key_value_store.ts";
import type { SecretProvider } from "../secrets/secret_provider.ts";
import { ReplayGuard } from "./replay_guard.ts";
import { DpopNonces } from "./_dpop_nonce.ts";

/** Options of the server nonces of {@linkcode DpopOptions.nonce}. */
export interface DpopNonceOptions {
  /**
   * The application secret, from which the nonces' key is derived for the
   * `dpop.nonce` purpose alone. `identityMiddleware` passes its sessions'
   * secret; a `DpopVerifier` built by hand must be given it.
   */
  secret?: SecretProvider;
  /**
   * The length of a nonce's window, a whole number of seconds from 1 to
   * 3600; default 60.
   * A nonce is accepted in the window it was issued in and the next one,
   * so it lives between `lifetimeSeconds` and twice that.
   */
  lifetimeSeconds?: number;
}

/** Options of {@linkcode DpopVerifier}. */
export interface DpopOptions {
  /**
   * The key-value store in which proof `jti`s are recorded, so that a proof
   * used on one instance is refused on every other (docs/revocation.md says
   * what each store guarantees). Without it, replays are refused on this
   * instance only.
   */
  store?: KeyValueStore | null;
  /** How old a proof's `iat` may be, in seconds; default 60. */
  maxAgeSeconds?: number;
  /** How far in the future a proof's `iat` may lie, in seconds; default 5. */
  clockSkewSeconds?: number;
  /** The algorithms accepted; default ES256, RS256 and EdDSA (`EdDSA` or `Ed25519`). */
  algorithms?: readonly ProofAlgorithm[];
  /**
   * The public origin (`https://host[:port]`) that `htu` must name, where
   * the request URL does not carry it (behind a proxy); default the
   * request's own origin.
   */
  origin?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /**
   * Server-provided nonces (RFC 9449 §8, §9), off by default: `true` or
   * {@linkcode DpopNonceOptions}. Every proof must then carry a `nonce`
   * claim the server issued in the current window or the previous one;
   * a proof without one, or with any other, is refused with reason
   * `"nonce"` and the nonce the client must use. The nonces are
   * stateless (an HMAC of the time window under a key derived from the
   * secret), so every instance sharing the secret issues and accepts the
   * same ones, with no store round trip.
   */
  nonce?: boolean | DpopNonceOptions;
}

/** Why a proof was refused. */
export type DpopRefusal =
  | "malformed"
  | "typ"
  | "alg"
  | "jwk"
  | "signature"
  | "htm"
  | "htu"
  | "iat"
  | "jti"
  | "ath"
  | "nonce"
  | "replayed";

/**
 * What {@linkcode DpopVerifier.verify} found. With nonces on, `nonce` is
 * the nonce to send in a `DPoP-Nonce` header: on an accepted proof, only
 * when the one it used is of the previous window (the client moves on
 * before it expires); on a refusal for `"nonce"`, always, unless it could
 * not be made.
 */
export type DpopResult =
  | {
    readonly ok: true;
    readonly thumbprint: string;
    readonly nonce?: string;
  }
  | {
    readonly ok: false;
    readonly reason: DpopRefusal;
    readonly nonce?: string;
  };

const TYP = "dpop+jwt";

/**
 * Verifies DPoP proofs strictly: a compact JWS with `typ` `dpop+jwt`, an
 * allowed asymmetric `alg`, a public `jwk` only, a valid signature, `htm`
 * equal to the request method, `htu` equal to the request URL without
 * query and fragment (both normalised by the URL parser), `iat` within the
 * window, a `jti` of 1 to 256 characters never seen within the window,
 * and, with a token, `ath` equal to base64url(SHA-256(token)). Answers the
 * key's RFC 7638 thumbprint.
 *
 * With `nonce` on, the proof's `nonce` claim is checked after every other
 * check but the replay store's: a proof refused for its nonce has passed
 * its signature and claims (the client has only to add the nonce), and
 * costs no store round trip nor uses up its `jti`.
 *
 * @example Usage
 * ```ts ignore
 * const dpop = new DpopVerifier({ store: kv });
 * const result = await dpop.verify(req.headers.get("dpop"), req, token);
 * if (result.ok) bindTo(result.thumbprint);
 * ```
 */
export class DpopVerifier {
  #replays: ReplayGuard;
  #maxAgeMs: number;
  #skewMs: number;
  #algorithms: readonly ProofAlgorithm[];
  #origin: string | null;
  #now: () => number;
  #nonces: DpopNonces | null;

  /**
   * Checks the options once.
   *
   * @param options See {@linkcode DpopOptions}.
   * @throws {RangeError} For a window that is not a positive number of
   * seconds, an unknown algorithm, or a nonce lifetime that is not a whole
   * number from 1 to 3600.
   * @throws {TypeError} For an origin that is not `scheme://host[:port]`,
   * a `nonce` that is neither a boolean nor an options object, or nonces
   * without a secret.
   */
  constructor(options: DpopOptions = {}) {
    const age = options.maxAgeSeconds ?? 60;
    const skew = options.clockSkewSeconds ?? 5;
    if (!(age > 0 && age <= 3600) || !(skew >= 0 && skew <= 300)) {
      throw new RangeError(
        `DPoP maxAgeSeconds must lie in (0, 3600] and clockSkewSeconds in [0, 300]: received ${age} and ${skew}`,
      );
    }
    const algorithms = options.algorithms ?? PROOF_ALGORITHMS;
    if (
      algorithms.length === 0 ||
      !algorithms.every((a) => isProofAlgorithm(a, PROOF_ALGORITHMS))
    ) {
      throw new RangeError(
        `DPoP algorithms must be some of ${
          PROOF_ALGORITHMS.join(", ")
        }: received ${algorithms.join(", ")}`,
      );
    }
    let origin: string | null = null;
    if (options.origin !== undefined) {
      const u = parseUrl(options.origin);
      if (u === null || u.origin === "null" || u.origin !== options.origin) {
        throw new TypeError(
          `DPoP origin must be scheme://host[:port]: received "${options.origin}"`,
        );
      }
      origin = u.origin;
    }
    this.#now = options.now ?? Date.now;
    this.#nonces = nonces(options.nonce, this.#now);
    this.#replays = new ReplayGuard({
      store: options.store,
      prefix: "portcullis:dpop:",
      now: this.#now,
    });
    this.#maxAgeMs = age * 1000;
    this.#skewMs = skew * 1000;
    this.#algorithms = algorithms;
    this.#origin = origin;
  }

  /** The algorithms accepted, for `WWW-Authenticate: DPoP algs="…"`. */
  get algorithms(): readonly ProofAlgorithm[] {
    return this.#algorithms;
  }

  /** Whether proofs must carry a server nonce (`nonce` on). */
  get requiresNonce(): boolean {
    return this.#nonces !== null;
  }

  /**
   * The nonce of the current window, for a `DPoP-Nonce` header a server
   * sends before it is asked (on a first response, say).
   *
   * @returns The nonce, or `null` when nonces are off.
   */
  nonce(): Promise<string | null> {
    return this.#nonces === null ? Promise.resolve(null) : this.#nonces.issue();
  }

  /**
   * Verifies the proof of one request.
   *
   * @param proof The `DPoP` header's value (`null` when absent).
   * @param req The request (its method and URL).
   * @param token The access token the request presents, if any: `ath`
   * must then be its hash; without one, the proof must not carry `ath`.
   * @returns The key's thumbprint, or why the proof was refused; with
   * nonces on, the nonce to send (see {@linkcode DpopResult}).
   * @throws {AuthError} `STORE_UNAVAILABLE` when the replay store fails.
   */
  async verify(
    proof: string | null,
    req: Request,
    token: string | null,
  ): Promise<DpopResult> {
    const jws = parseCompactJws(proof);
    if (jws === null) return refuse("malformed");
    const { header, payload } = jws;
    if (header.typ !== TYP) return refuse("typ");
    if (!isProofAlgorithm(header.alg, this.#algorithms)) return refuse("alg");
    // Only the members RFC 9449 allows to matter; `crit` is not understood.
    if ("crit" in header || "jku" in header || "x5u" in header) {
      return refuse("malformed");
    }
    const key = await importProofKey(header.alg, header.jwk);
    if (key === null) return refuse("jwk");
    if (!(await verifyProofSignature(header.alg, key.key, jws))) {
      return refuse("signature");
    }
    if (payload.htm !== req.method) return refuse("htm");
    if (!this.#htuMatches(payload.htu, req.url)) return refuse("htu");
    const iat = payload.iat;
    const now = this.#now();
    if (
      typeof iat !== "number" || !Number.isFinite(iat) ||
      iat * 1000 < now - this.#maxAgeMs || iat * 1000 > now + this.#skewMs
    ) return refuse("iat");
    const jti = payload.jti;
    if (typeof jti !== "string" || jti.length < 1 || jti.length > 256) {
      return refuse("jti");
    }
    if (token === null) {
      if ("ath" in payload) return refuse("ath");
    } else if (
      typeof payload.ath !== "string" ||
      payload.ath !== await sha256Base64Url(token)
    ) return refuse("ath");
    let fresh: string | undefined;
    if (this.#nonces !== null) {
      const age = await this.#checkNonce(this.#nonces, payload.nonce);
      if (age !== "current") {
        fresh = await this.#nonces.issue().catch(() => undefined);
        if (age === null) return { ok: false, reason: "nonce", nonce: fresh };
      }
    }
    const window = (this.#maxAgeMs + this.#skewMs) / 1000;
    if (!(await this.#replays.first(`${key.thumbprint} ${jti}`, window))) {
      return refuse("replayed");
    }
    return fresh === undefined
      ? { ok: true, thumbprint: key.thumbprint }
      : { ok: true, thumbprint: key.thumbprint, nonce: fresh };
  }

  /** The nonce's window; an error checking it counts as a wrong nonce. */
  async #checkNonce(
    nonces: DpopNonces,
    claim: unknown,
  ): Promise<"current" | "previous" | null> {
    try {
      return await nonces.check(claim);
    } catch {
      return null; // fail closed
    }
  }

  #htuMatches(htu: unknown, requestUrl: string): boolean {
    if (typeof htu !== "string" || htu.length > 4096) return false;
    const claimed = parseUrl(htu);
    const actual = parseUrl(requestUrl);
    if (claimed === null || actual === null) return false;
    // A user name or password names no part of the request's URL.
    if (claimed.username !== "" || claimed.password !== "") return false;
    const origin = this.#origin ?? actual.origin;
    return claimed.origin === origin && claimed.pathname === actual.pathname;
  }
}

function nonces(
  option: DpopOptions["nonce"],
  now: () => number,
): DpopNonces | null {
  if (option === undefined || option === false) return null;
  // From JavaScript or a config file, "false", 0 or null must not turn the
  // nonces on (or off) unremarked.
  if (
    option !== true &&
    (typeof option !== "object" || option === null || Array.isArray(option))
  ) {
    throw new TypeError(
      `DPoP nonce must be true, false or { secret, lifetimeSeconds }: received ${
        Array.isArray(option) ? "an array" : JSON.stringify(option)
      }`,
    );
  }
  const o = option === true ? {} : option;
  const lifetime = o.lifetimeSeconds ?? 60;
  if (!(Number.isInteger(lifetime) && lifetime >= 1 && lifetime <= 3600)) {
    throw new RangeError(
      `DPoP nonce lifetimeSeconds must be a whole number from 1 to 3600: received ${lifetime}`,
    );
  }
  if (!o.secret || typeof o.secret.keys !== "function") {
    throw new TypeError(
      "DPoP nonces need the application secret: pass nonce: { secret } (identityMiddleware passes its sessions' secret)",
    );
  }
  return new DpopNonces(o.secret, lifetime, now);
}

function refuse(reason: DpopRefusal): DpopResult {
  return { ok: false, reason };
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
