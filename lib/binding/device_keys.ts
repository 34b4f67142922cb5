/**
 * The session-layer half of device-bound browser sessions (W3C DBSC): the
 * browsers' public keys by session id, the signed stateless challenges, and
 * the checks of the `dbsc+jwt` proofs Chromium sends.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import { encodeBase64Url } from "../_common/base64url.ts";
import type { BoundSessions } from "./bound_sessions.ts";
import type { KeyValueStore } from "../kv/key_value_store.ts";
import {
  importProofKey,
  isProofAlgorithm,
  parseCompactJws,
  type ParsedJws,
  type ProofAlgorithm,
  verifyProofSignature,
} from "./proof_jwt.ts";
import { ReplayGuard } from "./replay_guard.ts";

/** A registered browser key, stored by session id. */
export interface DeviceKeyRecord {
  /** The subject. */
  readonly s: string;
  /** When the bound session began (its jti's time), unix ms. */
  readonly i: number;
  /** The session's absolute end, unix seconds. */
  readonly e: number;
  /** The algorithm registered. */
  readonly a: ProofAlgorithm;
  /** The public JWK (its RFC 7638 members only). */
  readonly k: Readonly<Record<string, string>>;
  /**
   * The session's current jti, when it signed in again since it was
   * registered (the id stays the browser's; `i` is then this jti's time).
   */
  readonly j?: string;
  /**
   * On the record kept under such a later jti: the session id it belongs
   * to (the browser never renews under it).
   */
  readonly d?: string;
}

/** Why a proof was refused. */
export type DeviceProofRefusal =
  | "malformed"
  | "typ"
  | "alg"
  | "jwk"
  | "signature"
  | "challenge"
  | "other_session"
  | "replayed";

/** The purposes of the two challenges. */
export type ChallengePurpose = "dbsc.registration" | "dbsc.refresh";

const CHALLENGE_LIFE = 120;
const SESSION_ID = /^[A-Za-z0-9_-]{30}$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Whether a value has the form of a session id (a jti). */
export function isSessionId(id: unknown): id is string {
  return typeof id === "string" && SESSION_ID.test(id);
}

/**
 * Keys and challenges of device-bound sessions. Not public API: built by
 * `identityMiddleware({ deviceBound })`.
 */
export class DeviceKeys {
  #bound: BoundSessions;
  #store: KeyValueStore;
  #prefix: string;
  #now: () => number;
  #replays: ReplayGuard;
  #algorithms: readonly ProofAlgorithm[];

  /**
   * @param bound The manager's bound sessions (keys and checks).
   * @param store Where the keys live.
   * @param options Prefix, clock, offered algorithms.
   */
  constructor(
    bound: BoundSessions,
    store: KeyValueStore,
    options: {
      prefix: string;
      now: () => number;
      algorithms: readonly ProofAlgorithm[];
    },
  ) {
    this.#bound = bound;
    this.#store = store;
    this.#prefix = options.prefix;
    this.#now = options.now;
    this.#algorithms = options.algorithms;
    this.#replays = new ReplayGuard({
      store,
      prefix: `${options.prefix}once:`,
      now: options.now,
    });
  }

  /**
   * A challenge: a signed value naming the session id, living two
   * minutes, with 96 random bits; nothing is stored to issue it.
   *
   * @param purpose Registration or refresh.
   * @param id The session id it is for.
   * @returns The challenge.
   */
  challenge(purpose: ChallengePurpose, id: string): Promise<string> {
    const nonce = encodeBase64Url(crypto.getRandomValues(new Uint8Array(12)));
    const exp = Math.floor(this.#now() / 1000) + CHALLENGE_LIFE;
    return this.#bound.signValue(
      purpose,
      encoder.encode(`${id}|${exp}|${nonce}`),
    );
  }

  /**
   * Checks a proof: a `dbsc+jwt` compact JWS whose `jti` is an unexpired
   * challenge of this purpose, signed by `key` (for a refresh: the stored
   * key; a `jwk` in the header must then be that key) or by the `jwk` it
   * carries (for a registration). The challenge is used up, unless it
   * names another session than `session`: that refusal spends nothing, so
   * the session it was issued to can still use it.
   *
   * @param purpose Registration or refresh.
   * @param jwt The `Secure-Session-Response` value.
   * @param stored The stored key of a refresh, or `null`.
   * @param session The session id the challenge must name (`other_session`
   * otherwise), or `null` to answer whichever it names.
   * @returns The session id the challenge names and the key, or why not.
   * @throws {AuthError} `STORE_UNAVAILABLE` from the replay store.
   */
  async checkProof(
    purpose: ChallengePurpose,
    jwt: string | null,
    stored: DeviceKeyRecord | null,
    session: string | null = null,
  ): Promise<
    | { ok: true; id: string; alg: ProofAlgorithm; jwk: Record<string, string> }
    | { ok: false; reason: DeviceProofRefusal }
  > {
    const jws: ParsedJws | null = parseCompactJws(jwt);
    if (jws === null) return { ok: false, reason: "malformed" };
    const { header, payload } = jws;
    if (header.typ !== "dbsc+jwt") return { ok: false, reason: "typ" };
    const alg = header.alg;
    if (
      !isProofAlgorithm(alg, this.#algorithms) ||
      (stored !== null && alg !== stored.a)
    ) return { ok: false, reason: "alg" };
    const key = await importProofKey(alg, stored?.k ?? header.jwk);
    if (key === null) return { ok: false, reason: "jwk" };
    if (stored !== null && header.jwk !== undefined) {
      const sent = await importProofKey(alg, header.jwk);
      if (sent?.thumbprint !== key.thumbprint) {
        return { ok: false, reason: "jwk" };
      }
    }
    if (!(await verifyProofSignature(alg, key.key, jws))) {
      return { ok: false, reason: "signature" };
    }
    const id = await this.#openChallenge(purpose, payload.jti);
    if (id === null) return { ok: false, reason: "challenge" };
    if (session !== null && id !== session) {
      return { ok: false, reason: "other_session" };
    }
    if (!(await this.#replays.first(`${purpose} ${payload.jti}`, 180))) {
      return { ok: false, reason: "replayed" };
    }
    return { ok: true, id, alg, jwk: { ...key.jwk } };
  }

  /**
   * Claims the one registration a session may have: `true` for the first
   * claim of `jti`, `false` for any later or concurrent one (each page of an
   * unbound session carries a fresh offer, so two offers' proofs can race).
   *
   * @param jti The unbound session's jti.
   * @returns Whether this registration may go on.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the store cannot tell.
   */
  firstRegistration(jti: string): Promise<boolean> {
    return this.#replays.first(`dbsc.registered ${jti}`, 180);
  }

  /**
   * Stores a key for a session id until the session's absolute end.
   *
   * @param id The bound session's id.
   * @param record The key and the session's facts.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async put(id: string, record: DeviceKeyRecord): Promise<void> {
    const ttl = record.e - this.#now() / 1000;
    try {
      await this.#store.put(this.#prefix + id, JSON.stringify(record), {
        ttlSeconds: Math.max(60, Math.ceil(ttl)),
      });
    } catch (cause) {
      throw unavailable(cause);
    }
  }

  /**
   * The stored key of a session id.
   *
   * @param id The session id.
   * @returns The record, or `null` (unknown, expired or unreadable).
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async get(id: string): Promise<DeviceKeyRecord | null> {
    let text: string | null;
    try {
      [text] = await this.#store.getMany([this.#prefix + id]);
    } catch (cause) {
      throw unavailable(cause);
    }
    if (text === null) return null;
    try {
      const r = JSON.parse(text);
      return typeof r?.s === "string" && Number.isSafeInteger(r.i) &&
          Number.isSafeInteger(r.e) &&
          isProofAlgorithm(r.a, this.#algorithms) &&
          r.k !== null && typeof r.k === "object" &&
          (r.j === undefined || isSessionId(r.j)) &&
          (r.d === undefined || isSessionId(r.d))
        ? r
        : null;
    } catch {
      return null;
    }
  }

  async #openChallenge(
    purpose: ChallengePurpose,
    value: unknown,
  ): Promise<string | null> {
    if (typeof value !== "string" || value.length > 512) return null;
    const bytes = await this.#bound.verifyValue(purpose, value);
    if (bytes === null) return null;
    const [id, exp] = decoder.decode(bytes).split("|");
    const expiry = Number(exp);
    return isSessionId(id) && Number.isSafeInteger(expiry) &&
        expiry * 1000 > this.#now()
      ? id
      : null;
  }
}

function unavailable(cause: unknown): AuthError {
  return new AuthError(
    "STORE_UNAVAILABLE",
    "Key store did not answer: the session was not bound or renewed",
    { cause, reason: "failed" },
  );
}
