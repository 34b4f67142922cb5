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
import { BoundSessions } from "./bound_sessions.ts";
import type { CookieTransport } from "../session/cookie_transport.ts";
import {
  type DeviceKeyRecord,
  DeviceKeys,
  isSessionId,
} from "./device_keys.ts";
import type { Identity, SessionManager } from "../session/session_manager.ts";
import type { IssuedSession } from "../session/session_payload.ts";
import type { SessionRegistry } from "../session/session_registry.ts";
import {
  checkDeviceBound,
  type DeviceBoundEvent,
  type DeviceBoundOptions,
} from "./device_bound_options.ts";
/** The one middleware event this class reports (an `AuthEvent`). */
type StoreOutage = { type: "store_unavailable"; error: unknown };
import { errorResponse, storeUnavailable } from "../_common/error_response.ts";
import { KeyedQueue } from "../_common/keyed_queue.ts";

const DEVICE = Object.freeze({ kind: "device" as const });
/** How long a refresh of a revoked session looks for its next jti. */
const RESEATED_WAIT_MS = 1000;
const RESEATED_POLL_MS = 100;

/**
 * The server side of DBSC, wired by `identityMiddleware({ deviceBound })`:
 * the registration offer on signed-in browser responses, the registration
 * and refresh endpoints, and the bound cookie. Ordinary requests with a
 * bound cookie cost what any cookie request costs: no key read, no
 * signature check.
 */
export class DeviceBoundSessions {
  /** The bound cookie. */
  readonly cookie: CookieTransport;
  /** The registration path. */
  readonly registrationPath: string;
  /** The refresh path. */
  readonly refreshPath: string;
  /** The manager's bound sessions. */
  readonly bound: BoundSessions;
  #manager: SessionManager;
  #unbound: CookieTransport;
  #keys: DeviceKeys;
  #life: number;
  #offer: string;
  #attributes: string;
  #origin: string | null;
  #emit: (event: StoreOutage) => void;
  #hook: ((event: DeviceBoundEvent) => void) | undefined;
  #now: () => number;
  #registry: SessionRegistry | null;
  #renewals = new KeyedQueue(2000);

  /**
   * Checks the options once.
   *
   * @param manager The sessions (with a store).
   * @param unbound The ordinary session cookie.
   * @param options See {@linkcode DeviceBoundOptions}.
   * @param emit The middleware's event hook.
   * @param hook Receives registration, refresh and refusal events.
   * @throws {TypeError} {@linkcode checkDeviceBound}'s.
   * @throws {RangeError} {@linkcode checkDeviceBound}'s.
   */
  constructor(
    manager: SessionManager,
    unbound: CookieTransport,
    options: DeviceBoundOptions,
    emit: (event: StoreOutage) => void,
    hook?: (event: DeviceBoundEvent) => void,
  ) {
    const o = checkDeviceBound(manager, unbound, options);
    this.#manager = manager;
    this.#unbound = unbound;
    this.cookie = o.cookie;
    this.registrationPath = o.registrationPath;
    this.refreshPath = o.refreshPath;
    this.#attributes = o.attributes;
    this.#now = o.now;
    this.bound = BoundSessions.of(manager);
    this.#keys = new DeviceKeys(this.bound, o.store, o);
    this.#life = o.life;
    this.#offer = `(${o.algorithms.join(" ")})`;
    this.#origin = o.origin;
    this.#registry = o.registry;
    this.#emit = emit;
    this.#hook = hook;
  }

  /**
   * The `Secure-Session-Registration` offer for a signed-in, unbound
   * cookie session, with a challenge tied to its jti (nothing stored).
   *
   * @param identity The session to bind.
   * @returns The header value.
   */
  async registrationHeader(identity: Identity): Promise<string> {
    const challenge = await this.#keys.challenge(
      "dbsc.registration",
      identity.jti,
    );
    return `${this.#offer};path="${this.registrationPath}";challenge="${challenge}"`;
  }

  /**
   * A device-bound session that signs in again as itself (`signIn` on a
   * request with its bound cookie: "sign out everywhere else", a password
   * change, a sign-in again) stays bound: the new session (a new jti, a
   * start after any sign-out everywhere) gets a bound cookie that expires
   * no later than the one presented, since only the browser's key extends
   * a bound cookie. The browser renews it under the session id it
   * registered, whose key record now names the new jti (and the jti it
   * named before, if another sign-in moved it meanwhile, is revoked: one
   * live jti per browser session). A bound cookie copied off the machine
   * thus never buys an ordinary session nor a longer one. Without a key
   * record (lost, or of another subject) the new cookie still expires
   * with the one presented, and cannot be renewed. Call it after revoking
   * the session presented.
   *
   * @param identity The request's device-bound session.
   * @param req The request (its user agent, for the session list).
   * @returns The new bound token.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  renew(identity: Identity, req: Request): Promise<IssuedSession> {
    // One at a time per subject in this isolate: two at once (a double
    // click) would both see the record before either moved it.
    return this.#renewals.run(
      identity.subject,
      () => this.#renew(identity, req),
    );
  }

  async #renew(identity: Identity, req: Request): Promise<IssuedSession> {
    const found = await this.#sessionOf(identity);
    // A new session as the manager starts one (after the subject's
    // sign-out-everywhere floor).
    // The browser session's absolute end is kept: its key record's, or
    // without one, the presented cookie's (SECURITY: a re-mint never
    // extends a session).
    const start = (await this.#manager.issueSession(identity.subject, {
      notAfter: found === null ? identity.expiresAt : found.record.e,
    })).identity;
    const end = start.expiresAt;
    const fresh = await this.bound.mint(
      DEVICE,
      identity.subject,
      Math.min(identity.expiresAt, end),
      { jti: start.jti, issuedAt: start.issuedAt },
    );
    if (found !== null) {
      const { id, record } = found;
      if (record.j !== undefined && record.j !== identity.jti) {
        await this.#revokeCurrent(found);
      }
      const key = { s: record.s, a: record.a, k: record.k };
      await this.#keys.put(id, {
        ...key,
        i: start.issuedAt,
        e: end,
        j: start.jti,
      });
      await this.#keys.put(start.jti, {
        ...key,
        i: start.issuedAt,
        e: end,
        d: id,
      });
    }
    if (this.#registry !== null) {
      await this.#registry.add(
        {
          ...fresh.identity,
          expiresAt: found === null ? fresh.identity.expiresAt : end,
        },
        req.headers.get("user-agent"),
      ).catch(() => {}); // the list is a convenience: the session stands
    }
    return fresh;
  }

  /**
   * On a sign-out with a bound cookie, ends the browser's session as a
   * whole: the jti its key record names now is revoked too, when another
   * sign-in moved the session on from the cookie's (a thief's "sign out
   * everywhere else" with a copy, a double click), so that the browser's
   * next renewal ends it. Only an unexpired cookie of the session can.
   *
   * @param req The signing-out request.
   * @throws {AuthError} `STORE_UNAVAILABLE`.
   */
  async end(req: Request): Promise<void> {
    const token = this.cookie.read(req);
    const identity = token === null
      ? null
      : await this.bound.read(DEVICE, token);
    if (identity === null || identity.expiresAt * 1000 <= this.#now()) return;
    const found = await this.#sessionOf(identity);
    // The cookie's own jti is the sign-out's to revoke.
    if (found === null || (found.record.j ?? found.id) === identity.jti) {
      return;
    }
    await this.#revokeCurrent(found);
  }

  /**
   * The browser session a device-bound jti belongs to: its id and key
   * record (stored under the id; a later jti's copy names the id), or
   * `null` when none is stored for the jti's subject.
   */
  async #sessionOf(
    identity: Identity,
  ): Promise<{ id: string; record: DeviceKeyRecord } | null> {
    let id = identity.jti;
    let record = await this.#keys.get(id);
    if (record?.d !== undefined) {
      id = record.d;
      record = await this.#keys.get(id);
    }
    return record === null || record.d !== undefined ||
        record.s !== identity.subject
      ? null
      : { id, record };
  }

  /** Revokes the jti a browser session's key record names now. */
  async #revokeCurrent(
    { id, record }: { id: string; record: DeviceKeyRecord },
  ): Promise<void> {
    await this.#manager.revoke({
      subject: record.s,
      jti: record.j ?? id,
      issuedAt: record.i,
      expiresAt: record.e,
      binding: "device",
    });
  }

  /**
   * Answers the registration and refresh endpoints (POST); `null` for any
   * other request.
   *
   * @param req A POST request.
   * @returns The answer, or `null` to go on.
   */
  handle(req: Request): Promise<Response> | null {
    const path = new URL(req.url).pathname;
    const step = path === this.registrationPath
      ? this.#register
      : path === this.refreshPath
      ? this.#refresh
      : null;
    return step === null ? null : this.#guard(req, step);
  }

  async #guard(
    req: Request,
    step: (req: Request) => Promise<Response>,
  ): Promise<Response> {
    try {
      return await step.call(this, req);
    } catch (error) {
      if (!(error instanceof AuthError && error.code === "STORE_UNAVAILABLE")) {
        throw error;
      }
      this.#emit({ type: "store_unavailable", error: error.cause ?? error });
      return storeUnavailable(req);
    }
  }

  async #register(req: Request): Promise<Response> {
    const token = this.#unbound.read(req);
    const identity = token === null ? null : await this.#manager.resolve(token);
    if (identity === null) return this.#refuse(req, null, "no_session", 401);
    // A session an operator holds for the subject (impersonation) is never
    // bound: its key would be the operator's, and binding would outlive its
    // time limit.
    if (identity.actor !== undefined) {
      return this.#refuse(req, identity.subject, "impersonation", 403);
    }
    // A challenge of another session is refused (403) before the replay
    // check: whether or not that session used it, and without spending it.
    const proof = await this.#keys.checkProof(
      "dbsc.registration",
      req.headers.get("secure-session-response"),
      null,
      identity.jti,
    );
    if (!proof.ok && proof.reason === "other_session") {
      return this.#refuse(req, identity.subject, "challenge_of_another", 403);
    }
    if (!proof.ok) return this.#refuse(req, identity.subject, proof.reason);
    // One key per session: a second offer's proof, even sent at the same
    // moment, finds the session already claimed.
    if (!(await this.#keys.firstRegistration(identity.jti))) {
      return this.#refuse(req, identity.subject, "already_registered", 403);
    }
    const nowS = Math.floor(this.#now() / 1000);
    const end = identity.expiresAt;
    const bound = await this.bound.mint(
      DEVICE,
      identity.subject,
      Math.min(nowS + this.#life, end),
    );
    const { jti, issuedAt } = bound.identity;
    const record: DeviceKeyRecord = {
      s: identity.subject,
      i: issuedAt,
      e: end,
      a: proof.alg,
      k: proof.jwk,
    };
    await this.#keys.put(jti, record);
    // From now on the unbound token (and any copy of it) is dead.
    await this.#manager.revoke(identity);
    if (this.#registry !== null) {
      const ua = req.headers.get("user-agent");
      await this.#registry.remove(identity.subject, identity.jti)
        .then(() =>
          this.#registry!.add({ ...bound.identity, expiresAt: end }, ua)
        )
        .catch(() => {}); // the list is a convenience: the binding stands
    }
    this.#hook?.({ type: "session_bound", subject: identity.subject, req });
    return this.#instructions(req, jti, bound.identity, bound.token, true);
  }

  async #refresh(req: Request): Promise<Response> {
    const id = req.headers.get("sec-secure-session-id");
    if (!isSessionId(id)) {
      return errorResponse(
        req,
        400,
        "invalid_session_id",
        "Sec-Secure-Session-Id is missing or malformed",
      );
    }
    const jwt = req.headers.get("secure-session-response");
    if (jwt === null) return this.#challenge(id);
    let record = await this.#keys.get(id);
    // A record kept under a later jti (`d`) is no session id to renew.
    if (record === null || record.d !== undefined) {
      return this.#end(req, id, null, "unknown_session");
    }
    const proof = await this.#keys.checkProof("dbsc.refresh", jwt, record);
    // Signed by the session's own key, but over a challenge that expired,
    // was used, or names another session: a fresh challenge lets the
    // browser sign again instead of ending a session that is sound (a
    // thief holding such a proof cannot sign the new one).
    const stale = proof.ok
      ? proof.id !== id
      : proof.reason === "challenge" || proof.reason === "replayed";
    if (stale) {
      this.#hook?.({
        type: "binding_proof_refused",
        subject: record.s,
        reason: proof.ok ? "challenge" : proof.reason,
        req,
      });
      return this.#challenge(id);
    }
    if (!proof.ok) return this.#refuse(req, record.s, proof.reason);
    let fresh = await this.#continue(record, id);
    // "Sign out everywhere else" from this very browser revokes the
    // session a moment before it moves it to a new jti: a refresh that
    // falls in between looks again, for a second at most, before it ends
    // the session.
    for (let wait = 0; fresh === null && wait < RESEATED_WAIT_MS;) {
      await new Promise((r) => setTimeout(r, RESEATED_POLL_MS));
      wait += RESEATED_POLL_MS;
      const now = await this.#keys.get(id);
      if (now === null || now.d !== undefined) break;
      if (now.j !== record.j) {
        record = now;
        fresh = await this.#continue(record, id);
      }
    }
    if (fresh === null) return this.#end(req, id, record.s, "revoked");
    this.#hook?.({ type: "session_refreshed", subject: record.s, req });
    return this.#instructions(req, id, fresh.identity, fresh.token, false);
  }

  /**
   * A fresh bound cookie for the session a key record names (its current
   * jti: the id itself, or the one it took when it signed in again), or
   * `null` when that session is over (revoked, or past its absolute end).
   */
  async #continue(
    record: DeviceKeyRecord,
    id: string,
  ): Promise<IssuedSession | null> {
    const nowS = Math.floor(this.#now() / 1000);
    const fresh = await this.bound.mint(
      DEVICE,
      record.s,
      Math.min(nowS + this.#life, record.e),
      { jti: record.j ?? id, issuedAt: record.i },
    );
    return record.e <= nowS || !(await this.bound.isLive(fresh.identity))
      ? null
      : fresh;
  }

  /** 403 with a fresh refresh challenge for session `id`. */
  async #challenge(id: string): Promise<Response> {
    const challenge = await this.#keys.challenge("dbsc.refresh", id);
    return new Response(null, {
      status: 403,
      headers: {
        "secure-session-challenge": `"${challenge}";id="${id}"`,
        "cache-control": "no-store",
      },
    });
  }

  #instructions(
    req: Request,
    id: string,
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
    const credentials = [{
      type: "cookie",
      name: this.cookie.name,
      attributes: this.#attributes,
    }];
    return new Response(
      JSON.stringify({
        session_identifier: id,
        refresh_url: this.refreshPath,
        scope: { origin, include_site: false, scope_specification: [] },
        credentials,
      }),
      { status: 200, headers },
    );
  }

  /**
   * The answer to a refresh refused for good (a revoked session, its
   * absolute lifetime passed, an unknown id): the draft's session
   * instructions with `"continue": false`, so the browser ends the session
   * and stops trying, and no cookie.
   */
  #end(
    req: Request,
    id: string,
    subject: string | null,
    reason: string,
  ): Response {
    this.#hook?.({ type: "binding_proof_refused", subject, reason, req });
    return new Response(
      JSON.stringify({ session_identifier: id, continue: false }),
      {
        status: 200,
        headers: {
          "content-type": "application/json",
          "cache-control": "no-store",
        },
      },
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
}

export type { DeviceBoundEvent, DeviceBoundOptions };
