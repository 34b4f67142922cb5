/**
 * Tokens bound to a client's key (device-bound cookies, DPoP-bound
 * tokens): minted with the manager's session keys under a purpose of their
 * own (`session_binding.ts`), and resolved through the manager itself, so
 * expiry, the time rules and revocation are exactly those of ordinary
 * sessions. A bound token, once its MAC is verified, is remembered with
 * the ordinary token of the same identity; the manager's warm path then
 * answers it, so a bound request costs what an unbound one does.
 *
 * @module
 */
import {
  type Identity,
  type IssuedSession,
  SESSION_PURPOSE,
  type SessionManager,
} from "../session/session_manager.ts";
import {
  encodeSessionPayload,
  parseSessionPayload,
} from "../session/session_payload.ts";
import { bindingPurpose, type SessionBinding } from "./session_binding.ts";
import type { PurposeKeys } from "../secrets/secret_provider.ts";
import {
  MAX_TOKEN_LENGTH,
  signToken,
  verifyToken,
} from "../tokens/signed_token.ts";

interface Known {
  /** The ordinary token of the same identity, for the manager's checks. */
  readonly twin: string;
  /** The identity, `binding` set. */
  readonly identity: Identity;
}

const CAPACITY = 10_000;
const all = new WeakMap<SessionManager, BoundSessions>();

/**
 * Mints and resolves key-bound tokens for one {@linkcode SessionManager}.
 * Not public API: the binding room's (DPoP, device-bound sessions).
 */
export class BoundSessions {
  #manager: SessionManager;
  #known = new Map<string, Known>();

  /**
   * The one instance of a manager.
   *
   * @param manager The sessions.
   * @returns Its bound sessions.
   */
  static of(manager: SessionManager): BoundSessions {
    let bound = all.get(manager);
    if (bound === undefined) {
      bound = new BoundSessions(manager);
      all.set(manager, bound);
    }
    return bound;
  }

  private constructor(manager: SessionManager) {
    this.#manager = manager;
  }

  /**
   * Mints a bound token.
   *
   * @param binding What the token is bound to.
   * @param subject The subject.
   * @param expiresAt The expiry (unix seconds); `null` for the manager's
   * lifetime from the session's start.
   * @param session The session to continue; a new one (new jti) without.
   * @returns The token and its identity (`binding` set).
   */
  async mint(
    binding: SessionBinding,
    subject: string,
    expiresAt: number | null,
    session?: { jti: string; issuedAt: number },
  ): Promise<IssuedSession> {
    // A new session takes its jti and start from the manager (the
    // sign-out-everywhere floor included); that ordinary token is dropped.
    const base = session ?? (await this.#manager.issueSession(subject))
      .identity;
    const identity: Identity = Object.freeze({
      subject,
      jti: base.jti,
      issuedAt: base.issuedAt,
      expiresAt: expiresAt ??
        Math.floor(base.issuedAt / 1000) + this.#manager.lifetimeSeconds,
      binding: binding.kind,
    });
    const keys = await this.#keys();
    const token = await signToken(
      keys.current,
      bindingPurpose(binding),
      encodeSessionPayload(identity),
    );
    return { token, identity };
  }

  /**
   * A device-bound token's identity from memory, without a promise, where
   * the manager can tell (see its warm path).
   *
   * @param token The presented bound cookie.
   * @returns The identity, `null` (expired or revoked), or `undefined`.
   */
  peekDevice(token: string): Identity | null | undefined {
    const known = this.#known.get(token);
    if (known === undefined) return undefined;
    const live = this.#manager.peek(known.twin);
    return live === undefined
      ? undefined
      : live === null
      ? null
      : known.identity;
  }

  /**
   * A bound token's identity from its MAC alone: no expiry or revocation
   * check (for a sign-out, which ends what a revoked cookie still names).
   *
   * @param binding The binding the token must carry.
   * @param token The presented token.
   * @returns The identity (`binding` set), or `null` for a bad MAC.
   */
  async read(binding: SessionBinding, token: string): Promise<Identity | null> {
    if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) {
      return null;
    }
    const keys = await this.#keys();
    const payload = await verifyToken(keys, bindingPurpose(binding), token);
    const id = payload === null ? null : parseSessionPayload(payload);
    // A session held by an actor (impersonation) is never bound to a key.
    return id === null || id.actor !== undefined
      ? null
      : Object.freeze({ ...id, binding: binding.kind });
  }

  /**
   * Resolves a bound token: its MAC under the binding's purpose, then the
   * manager's own checks (times, expiry, revocation).
   *
   * @param binding The binding the token must carry.
   * @param token The presented token.
   * @returns The identity (`binding` set), or `null`.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async resolve(
    binding: SessionBinding,
    token: string,
  ): Promise<Identity | null> {
    if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) {
      return null;
    }
    const key = binding.kind === "device"
      ? token
      : `${binding.thumbprint} ${token}`;
    let known = this.#known.get(key);
    if (known === undefined) {
      const identity = await this.read(binding, token);
      if (identity === null) return null;
      known = { twin: await this.#twin(identity), identity };
      if (this.#known.size >= CAPACITY) {
        this.#known.delete(this.#known.keys().next().value!);
      }
      this.#known.set(key, known);
    }
    return (await this.#manager.resolve(known.twin)) === null
      ? null
      : known.identity;
  }

  /**
   * Whether a session is unexpired and not revoked (the manager's checks).
   *
   * @param identity The session, with the expiry to check.
   * @returns `true` when live.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async isLive(identity: Identity): Promise<boolean> {
    return (await this.#manager.resolve(await this.#twin(identity))) !== null;
  }

  /**
   * Signs a short value with the session keys under a `dbsc.` purpose.
   *
   * @param purpose The purpose label, beginning with `dbsc.`.
   * @param payload The bytes.
   * @returns The signed value.
   */
  async signValue(purpose: string, payload: Uint8Array): Promise<string> {
    const keys = await this.#keys();
    return signToken(keys.current, valuePurpose(purpose), payload);
  }

  /**
   * Verifies a value of {@linkcode BoundSessions.signValue}.
   *
   * @param purpose The purpose label.
   * @param value The presented value.
   * @returns The payload, or `null`.
   */
  async verifyValue(
    purpose: string,
    value: string,
  ): Promise<Uint8Array | null> {
    const keys = await this.#keys();
    return verifyToken(keys, valuePurpose(purpose), value);
  }

  /** The session keys (the manager's secret, the session purpose). */
  #keys(): Promise<PurposeKeys> {
    return this.#manager.secret.keys(SESSION_PURPOSE);
  }

  /** The ordinary token of an identity (never handed out). */
  async #twin(identity: Identity): Promise<string> {
    const keys = await this.#keys();
    return signToken(
      keys.current,
      SESSION_PURPOSE,
      encodeSessionPayload(identity),
    );
  }
}

function valuePurpose(purpose: string): string {
  if (!purpose.startsWith("dbsc.")) {
    throw new TypeError(
      `Signed value purpose must begin with "dbsc.": received "${purpose}"`,
    );
  }
  return purpose;
}
