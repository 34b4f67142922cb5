/**
 * Device-bound browser sessions (W3C WebAppSec "Device Bound Session
 * Credentials", DBSC): the browser keeps a private key, the server its
 * public half, and the session cookie lives minutes; the browser renews it
 * with a proof of possession. A cookie copied off the machine dies within
 * its short life and cannot be renewed.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import { encodeBase64Url } from "../_common/base64url.ts";
import { CookieTransport } from "../session/cookie_transport.ts";
import type { KeyValueStore } from "../session/key_value_store.ts";
import {
  importProofKey,
  isProofAlgorithm,
  parseCompactJws,
  type ProofAlgorithm,
  verifyProofSignature,
} from "../session/proof_jwt.ts";
import { ReplayGuard } from "../session/replay_guard.ts";
import {
  IS_LIVE,
  MINT_BOUND,
  SIGN_VALUE,
  VERIFY_VALUE,
} from "../session/session_binding.ts";
import type { Identity, SessionManager } from "../session/session_manager.ts";
import type { SessionRegistry } from "../session/session_registry.ts";
import type { AuthEvent } from "./auth_event.ts";
import { errorResponse } from "./error_response.ts";

/** Options of device-bound sessions: `identityMiddleware`'s `deviceBound`. */
export interface DeviceBoundOptions {
  /**
   * Where the browser registers its key (POST); default
   * `/auth/dbsc/start`. The middleware answers it.
   */
  registrationPath?: string;
  /** Where the browser renews the bound cookie (POST); default `/auth/dbsc/refresh`. */
  refreshPath?: string;
  /** The life of a bound cookie, in seconds; default 600 (10 minutes). */
  cookieLifetime?: number;
  /**
   * Where the browsers' public keys live, by session id, for as long as the
   * session may; the installable middleware defaults to its own store.
   * Required with a `SessionManager` you built.
   */
  store?: KeyValueStore;
  /** The algorithms offered; default `["ES256", "RS256"]`. */
  algorithms?: readonly ("ES256" | "RS256")[];
  /** Key prefix in the store; default `"portcullis:dbsc:"`. */
  prefix?: string;
  /**
   * The public origin (`https://host[:port]`) named in the session's scope;
   * default the request's origin.
   */
  origin?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /**
   * The "my sessions" registry, if the app keeps one: a registration moves
   * the session's entry to its bound id (shown with `binding: "device"`).
   */
  registry?: SessionRegistry;
}

/** The events of device-bound sessions, for logs and security events. */
export type DeviceBoundEvent =
  | { type: "session_bound"; subject: string; req: Request }
  | { type: "session_refreshed"; subject: string; req: Request }
  | {
    type: "binding_proof_refused";
    subject: string | null;
    reason: string;
    req: Request;
  };

interface KeyRecord {
  s: string; // subject
  i: number; // issue time of the bound session, unix ms
  e: number; // absolute end, unix seconds
  a: ProofAlgorithm;
  k: Record<string, string>; // public JWK
}

const REGISTRATION = "dbsc.registration";
const REFRESH = "dbsc.refresh";
const CHALLENGE_LIFE = 120;
const SESSION_ID = /^[A-Za-z0-9_-]{30}$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The server side of DBSC, wired by `identityMiddleware({ deviceBound })`:
 * the registration header on signed-in browser responses, the registration
 * and refresh endpoints, and the bound cookie. Ordinary requests with a
 * bound cookie cost what any cookie request costs: one MAC (or none, when
 * remembered) and the denylist read; no key read, no signature check.
 */
export class DeviceBoundSessions {
  /** The bound cookie. */
  readonly cookie: CookieTransport;
  /** The registration path. */
  readonly registrationPath: string;
  /** The refresh path. */
  readonly refreshPath: string;
  #manager: SessionManager;
  #unbound: CookieTransport;
  #store: KeyValueStore;
  #prefix: string;
  #life: number;
  #algorithms: readonly ProofAlgorithm[];
  #offer: string;
  #attributes: string;
  #origin: string | null;
  #replays: ReplayGuard;
  #emit: (event: AuthEvent) => void;
  #hook: ((event: DeviceBoundEvent) => void) | undefined;
  #now: () => number;
  #registry: SessionRegistry | null;

  /**
   * Checks the options once.
   *
   * @param manager The sessions.
   * @param unbound The ordinary session cookie.
   * @param options See {@linkcode DeviceBoundOptions}.
   * @param emit The middleware's event hook.
   * @param hook Receives registration, refresh and refusal events.
   * @throws {TypeError} For a missing store or a path not starting with `/`.
   * @throws {RangeError} For a cookie lifetime outside 10 s to 1 day.
   */
  constructor(
    manager: SessionManager,
    unbound: CookieTransport,
    options: DeviceBoundOptions,
    emit: (event: AuthEvent) => void,
    hook?: (event: DeviceBoundEvent) => void,
  ) {
    if (!options.store || typeof options.store.getMany !== "function") {
      throw new TypeError(
        "deviceBound needs a store for the browsers' public keys: pass deviceBound.store (a KeyValueStore)",
      );
    }
    if (!manager.revocable) {
      throw new TypeError(
        "deviceBound needs a revocable SessionManager (with a store): registration revokes the unbound token",
      );
    }
    this.registrationPath = checkPath(
      options.registrationPath ?? "/auth/dbsc/start",
    );
    this.refreshPath = checkPath(options.refreshPath ?? "/auth/dbsc/refresh");
    const life = options.cookieLifetime ?? 600;
    if (!Number.isSafeInteger(life) || life < 10 || life > 86400) {
      throw new RangeError(
        `deviceBound.cookieLifetime must be a whole number of seconds from 10 to 86400: received ${life}`,
      );
    }
    const algorithms = options.algorithms ?? ["ES256", "RS256"];
    if (
      algorithms.length === 0 ||
      !algorithms.every((a) => a === "ES256" || a === "RS256")
    ) {
      throw new RangeError(
        `deviceBound.algorithms must be some of ES256, RS256: received ${
          algorithms.join(", ")
        }`,
      );
    }
    this.#manager = manager;
    this.#unbound = unbound;
    const clear = unbound.clear();
    const base = unbound.secure ? unbound.name.slice(7) : unbound.name;
    this.cookie = new CookieTransport({
      name: `${base}-bound`.slice(0, 64),
      secure: unbound.secure,
      sameSite: clear.includes("SameSite=Strict") ? "Strict" : "Lax",
      warn: () => {},
    });
    // "Path=/; Secure; HttpOnly; SameSite=Lax", as the cookie carries them.
    this.#attributes = this.cookie.clear().split("; ").slice(1, -1).join("; ");
    this.#store = options.store;
    this.#prefix = options.prefix ?? "portcullis:dbsc:";
    this.#life = life;
    this.#algorithms = algorithms;
    this.#offer = `(${algorithms.join(" ")})`;
    this.#origin = options.origin ?? null;
    this.#now = options.now ?? Date.now;
    this.#registry = options.registry ?? null;
    this.#replays = new ReplayGuard({
      store: options.store,
      prefix: `${this.#prefix}once:`,
      now: this.#now,
    });
    this.#emit = emit;
    this.#hook = hook;
  }

  /**
   * The `Secure-Session-Registration` header for a signed-in, unbound
   * cookie session: the algorithms, the path, and a challenge that is a
   * signed value naming the session's jti and living two minutes (nothing
   * is stored to issue it).
   *
   * @param identity The session to bind.
   * @returns The header value.
   */
  async registrationHeader(identity: Identity): Promise<string> {
    const challenge = await this.#challenge(REGISTRATION, identity.jti);
    return `${this.#offer};path="${this.registrationPath}";challenge="${challenge}"`;
  }

  /**
   * Answers the registration and refresh endpoints; `null` for any other
   * request.
   *
   * @param req A POST request.
   * @returns The answer, or `null` to go on.
   */
  handle(req: Request): Promise<Response> | null {
    let path: string;
    try {
      path = new URL(req.url).pathname;
    } catch {
      return null;
    }
    if (path === this.registrationPath) return this.#guard(req, this.#register);
    if (path === this.refreshPath) return this.#guard(req, this.#refresh);
    return null;
  }

  async #guard(
    req: Request,
    step: (req: Request) => Promise<Response>,
  ): Promise<Response> {
    try {
      return await step.call(this, req);
    } catch (error) {
      if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
        this.#emit({ type: "store_unavailable", error: error.cause ?? error });
        return errorResponse(
          req,
          503,
          "session_store_unavailable",
          "Sign-in is temporarily unavailable, try again shortly",
          { "retry-after": "5" },
        );
      }
      throw error;
    }
  }

  async #register(req: Request): Promise<Response> {
    const token = this.#unbound.read(req);
    const identity = token === null ? null : await this.#manager.resolve(token);
    if (identity === null) {
      return this.#refuse(req, null, "no_session", 401);
    }
    const jws = parseCompactJws(req.headers.get("secure-session-response"));
    if (jws === null) return this.#refuse(req, identity.subject, "malformed");
    const { header, payload } = jws;
    if (header.typ !== "dbsc+jwt") {
      return this.#refuse(req, identity.subject, "typ");
    }
    if (!isProofAlgorithm(header.alg, this.#algorithms)) {
      return this.#refuse(req, identity.subject, "alg");
    }
    const alg = header.alg;
    const key = await importProofKey(alg, header.jwk);
    if (key === null) return this.#refuse(req, identity.subject, "jwk");
    if (!(await verifyProofSignature(alg, key.key, jws))) {
      return this.#refuse(req, identity.subject, "signature");
    }
    const challenge = await this.#openChallenge(REGISTRATION, payload.jti);
    if (challenge === null) {
      return this.#refuse(req, identity.subject, "challenge");
    }
    if (challenge.id !== identity.jti) {
      return this.#refuse(req, identity.subject, "challenge_of_another", 403);
    }
    if (!(await this.#replays.first(`r ${payload.jti}`, CHALLENGE_LIFE))) {
      return this.#refuse(req, identity.subject, "replayed");
    }
    const nowS = Math.floor(this.#now() / 1000);
    const end = identity.expiresAt;
    const bound = await this.#manager[MINT_BOUND](
      { kind: "device" },
      identity.subject,
      Math.min(nowS + this.#life, end),
    );
    const record: KeyRecord = {
      s: identity.subject,
      i: bound.identity.issuedAt,
      e: end,
      a: alg,
      k: { ...key.jwk },
    };
    await this.#put(bound.identity.jti, record, end - nowS);
    // From now on the unbound token (and any copy of it) is dead.
    await this.#manager.revoke(identity);
    try {
      await this.#registry?.bind(
        identity,
        bound.identity,
        end,
        req.headers.get("user-agent"),
      );
    } catch {
      // The list is a convenience; the binding stands without it.
    }
    this.#hook?.({ type: "session_bound", subject: identity.subject, req });
    return this.#instructions(req, bound.identity, bound.token, true);
  }

  async #refresh(req: Request): Promise<Response> {
    const id = req.headers.get("sec-secure-session-id");
    if (id === null || !SESSION_ID.test(id)) {
      return errorResponse(
        req,
        400,
        "invalid_session_id",
        "Sec-Secure-Session-Id is missing or malformed",
      );
    }
    const proof = req.headers.get("secure-session-response");
    if (proof === null) {
      const challenge = await this.#challenge(REFRESH, id);
      return new Response(null, {
        status: 403,
        headers: {
          "secure-session-challenge": `"${challenge}";id="${id}"`,
          "cache-control": "no-store",
        },
      });
    }
    const jws = parseCompactJws(proof);
    if (jws === null) return this.#refuse(req, null, "malformed");
    const { header, payload } = jws;
    if (header.typ !== "dbsc+jwt") return this.#refuse(req, null, "typ");
    const challenge = await this.#openChallenge(REFRESH, payload.jti);
    if (challenge === null || challenge.id !== id) {
      return this.#refuse(req, null, "challenge");
    }
    const record = await this.#get(id);
    if (record === null) {
      return this.#refuse(req, null, "unknown_session", 401);
    }
    const subject = record.s;
    if (header.alg !== record.a) return this.#refuse(req, subject, "alg");
    const key = await importProofKey(record.a, record.k);
    if (key === null) return this.#refuse(req, subject, "jwk");
    if (header.jwk !== undefined) {
      const sent = await importProofKey(record.a, header.jwk);
      if (sent === null || sent.thumbprint !== key.thumbprint) {
        return this.#refuse(req, subject, "jwk");
      }
    }
    if (!(await verifyProofSignature(record.a, key.key, jws))) {
      return this.#refuse(req, subject, "signature");
    }
    if (!(await this.#replays.first(`f ${payload.jti}`, CHALLENGE_LIFE))) {
      return this.#refuse(req, subject, "replayed");
    }
    const nowS = Math.floor(this.#now() / 1000);
    const session = Object.freeze({
      subject,
      jti: id,
      issuedAt: record.i,
      expiresAt: record.e,
      binding: "device" as const,
    });
    if (record.e <= nowS || !(await this.#manager[IS_LIVE](session))) {
      return this.#refuse(req, subject, "revoked", 401);
    }
    const fresh = await this.#manager[MINT_BOUND](
      { kind: "device" },
      subject,
      Math.min(nowS + this.#life, record.e),
      session,
    );
    this.#hook?.({ type: "session_refreshed", subject, req });
    return this.#instructions(req, fresh.identity, fresh.token, false);
  }

  #instructions(
    req: Request,
    identity: Identity,
    token: string,
    clearUnbound: boolean,
  ): Response {
    const origin = this.#origin ?? new URL(req.url).origin;
    const headers = new Headers({
      "content-type": "application/json",
      "cache-control": "no-store",
    });
    headers.append(
      "set-cookie",
      this.cookie.serialize(token, this.#manager.secondsLeft(identity)),
    );
    if (clearUnbound) headers.append("set-cookie", this.#unbound.clear());
    return new Response(
      JSON.stringify({
        session_identifier: identity.jti,
        refresh_url: this.refreshPath,
        scope: { origin, include_site: false, scope_specification: [] },
        credentials: [{
          type: "cookie",
          name: this.cookie.name,
          attributes: this.#attributes,
        }],
      }),
      { status: 200, headers },
    );
  }

  #refuse(
    req: Request,
    subject: string | null,
    reason: string,
    status = 400,
  ): Response {
    this.#hook?.({ type: "binding_proof_refused", subject, reason, req });
    return errorResponse(
      req,
      status,
      "invalid_session_proof",
      status === 401
        ? "The session cannot be bound or renewed"
        : "The device-bound session proof was refused",
    );
  }

  async #challenge(purpose: string, id: string): Promise<string> {
    const nonce = encodeBase64Url(crypto.getRandomValues(new Uint8Array(12)));
    const exp = Math.floor(this.#now() / 1000) + CHALLENGE_LIFE;
    return await this.#manager[SIGN_VALUE](
      purpose,
      encoder.encode(`${id}|${exp}|${nonce}`),
    );
  }

  async #openChallenge(
    purpose: string,
    value: unknown,
  ): Promise<{ id: string } | null> {
    if (typeof value !== "string" || value.length > 512) return null;
    const bytes = await this.#manager[VERIFY_VALUE](purpose, value);
    if (bytes === null) return null;
    const [id, exp] = decoder.decode(bytes).split("|");
    const expiry = Number(exp);
    if (
      !SESSION_ID.test(id ?? "") || !Number.isSafeInteger(expiry) ||
      expiry * 1000 <= this.#now()
    ) return null;
    return { id };
  }

  async #put(id: string, record: KeyRecord, ttl: number): Promise<void> {
    try {
      await this.#store.put(this.#prefix + id, JSON.stringify(record), {
        ttlSeconds: Math.max(60, Math.ceil(ttl)),
      });
    } catch (cause) {
      throw unavailable(cause);
    }
  }

  async #get(id: string): Promise<KeyRecord | null> {
    let text: string | null;
    try {
      [text] = await this.#store.getMany([this.#prefix + id]);
    } catch (cause) {
      throw unavailable(cause);
    }
    if (text === null) return null;
    try {
      const r = JSON.parse(text);
      return typeof r?.s === "string" && typeof r.i === "number" &&
          typeof r.e === "number" && isProofAlgorithm(r.a, this.#algorithms) &&
          r.k !== null && typeof r.k === "object"
        ? r
        : null;
    } catch {
      return null;
    }
  }
}

function unavailable(cause: unknown): AuthError {
  return new AuthError(
    "STORE_UNAVAILABLE",
    "Key store did not answer: the session was not bound or renewed",
    { cause, reason: "failed" },
  );
}

function checkPath(path: string): string {
  if (!/^\/[A-Za-z0-9._~\/-]*$/.test(path) || path.startsWith("//")) {
    throw new TypeError(
      `deviceBound paths must be plain same-origin paths starting with "/": received "${path}"`,
    );
  }
  return path;
}
