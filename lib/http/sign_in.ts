/**
 * Starting and ending sessions from a handler.
 *
 * @module
 */
import type { IssuedSession } from "../session/session_manager.ts";
import { AuthError } from "../auth_error.ts";
import { BoundSessions } from "../binding/bound_sessions.ts";
import {
  ANONYMOUS,
  identityOf,
  type RequestState,
  requestStates,
  type Via,
} from "./_request_state.ts";

/** What {@linkcode signIn} made. */
export interface SignInResult extends IssuedSession {
  /** Unix seconds of expiry (also in `identity`). */
  readonly expiresAt: number;
  /**
   * The `Set-Cookie` value for browser clients (the bound cookie for a
   * device-bound session that signed in again), or `null` when the
   * middleware has no cookie transport or the token is DPoP-bound (sent
   * as `Authorization: DPoP`, never in a cookie).
   */
  readonly setCookie: string | null;
}

/** What {@linkcode signOut} did. */
export interface SignOutResult {
  /** Whether a session was put on the denylist. */
  readonly revoked: boolean;
  /** The `Set-Cookie` value that clears the cookie, or `null`. */
  readonly clearCookie: string | null;
}

/**
 * A credential checked moments ago that can tell whether it still holds:
 * the `ok` result of `PasswordAuthenticator.login` is one.
 */
export interface CheckedCredential {
  /** The subject id the credential belongs to. */
  readonly subject: string;
  /**
   * Whether the credential is still the one that was checked.
   *
   * @returns `false` when it changed since (a password change overlapped).
   */
  stillCurrent(): Promise<boolean>;
}

/**
 * Starts a session after a successful credential check (a password, a
 * magic link, a passkey: any method). Always mints a new jti, and revokes
 * the session the request presented, if any (OWASP ASVS 7.2.4: no
 * session fixation). A session that replaces a presented session of the
 * same subject ends no later than it (its absolute end is kept: OWASP ASVS
 * 5.0 V7.3.2), so "sign out everywhere else" with a copied cookie cannot
 * keep a session alive. A device-bound session signing in again as itself
 * ("sign out everywhere else", a password change) stays bound to its
 * browser's key: the new session gets a bound cookie that expires no
 * later than the one presented (only the key extends it), which the
 * browser renews under the session id it registered. A copied bound
 * cookie thus never buys an ordinary session nor a longer one.
 *
 * Given a {@linkcode CheckedCredential} (the result of
 * `PasswordAuthenticator.login`), it asks the credential again **after**
 * the new session's issue time is fixed, and answers `null` (the new
 * session revoked and never handed out) when the credential changed
 * meanwhile: a login with the old password that overlaps a password change
 * cannot keep a session that the change's `revokeAll` missed. Answer
 * `null` as a wrong password.
 *
 * @param req The request, after `identityMiddleware`.
 * @param who The subject id, or a checked credential.
 * @returns The token, its expiry and the cookie to set; `null` only for a
 * credential that changed meanwhile.
 * @throws {TypeError} When `identityMiddleware` did not run.
 * @throws {AuthError} `STORE_UNAVAILABLE` (also when the request presented
 * a session the store could not check, since it could not be revoked),
 * `INVALID_SUBJECT`.
 *
 * @example Usage
 * ```ts ignore
 * const login = await auth.login(email, password, { address });
 * const session = login.kind === "ok" ? await signIn(req, login) : null;
 * if (session !== null) {
 *   return new Response(null, { status: 303, headers: { location: "/", "set-cookie": session.setCookie! } });
 * }
 * ```
 */
export function signIn(req: Request, who: string): Promise<SignInResult>;
/**
 * Starts a session for a checked credential, or answers `null` when the
 * credential changed while the session was being issued (see above).
 *
 * @param req The request, after `identityMiddleware`.
 * @param who A checked credential (`PasswordAuthenticator.login`'s `ok`).
 * @returns The session, or `null`: answer it as a wrong password.
 */
export function signIn(
  req: Request,
  who: CheckedCredential,
): Promise<SignInResult | null>;
export async function signIn(
  req: Request,
  who: string | CheckedCredential,
): Promise<SignInResult | null> {
  const state = requestStates.get(req);
  if (state === undefined) {
    throw new TypeError(
      "signIn needs identityMiddleware to run for this request first",
    );
  }
  const { manager, cookie, device } = state.context;
  const before = state.session;
  if (before.kind === "unavailable") throw storeUnavailable("signed in");
  // An API key is a credential of its own, not a session: a sign-in beside
  // it ends nothing (keys are revoked where they are listed).
  if (
    before.kind === "signedIn" && manager.revocable &&
    before.identity.apiKey === undefined
  ) {
    await manager.revoke(before.identity);
  }
  const subject = typeof who === "string" ? who : who.subject;
  if (
    device !== null && state.proofKey === undefined &&
    before.kind === "signedIn" && before.identity.binding === "device" &&
    before.identity.subject === subject
  ) {
    const renewed = await device.renew(before.identity, req);
    return await settle(state, who, renewed, {
      via: before.via,
      setCookie: device.cookie.serialize(
        renewed.token,
        manager.secondsLeft(renewed.identity),
      ),
    });
  }
  // A session that replaces one of the same subject ("sign out everywhere
  // else", a password change, a sign-in again) ends no later than it: a
  // copied cookie re-minted over and over never outlives its lifetime.
  const same = before.kind === "signedIn" &&
    before.identity.subject === subject &&
    before.identity.apiKey === undefined;
  const notAfter = same ? before.identity.expiresAt : undefined;
  // An operator's session on the subject's behalf (impersonation) stays
  // one when re-minted: same actor, same end, never bound to a key.
  const actor = same ? before.identity.actor : undefined;
  // A sign-in that proved a DPoP key gets a token bound to that key, for
  // the DPoP scheme only (never a cookie).
  const proofKey = actor === undefined ? state.proofKey : undefined;
  const issued = proofKey === undefined
    ? await manager.issueSession(subject, { notAfter, actor })
    : await BoundSessions.of(manager).mint(
      { kind: "dpop", thumbprint: proofKey },
      subject,
      notAfter ?? null,
    );
  // Only a fresh authentication may offer device binding: a re-mint of
  // the session presented ("sign out everywhere else" with a copied cookie)
  // never hands out a registration ticket a thief could bind its key with.
  state.freshSignIn = proofKey === undefined &&
    (typeof who !== "string" || notAfter === undefined);
  return await settle(state, who, issued, {
    via: proofKey !== undefined
      ? "dpop"
      : before.kind === "anonymous"
      ? "cookie"
      : before.via,
    setCookie: cookie === null || proofKey !== undefined
      ? null
      : cookie.serialize(issued.token, manager.secondsLeft(issued.identity)),
  });
}

/**
 * The end of `signIn`: the credential asked again (a changed one gets
 * `null`, the new session revoked and never handed out), then the new
 * session becomes the request's.
 */
async function settle(
  state: RequestState,
  who: string | CheckedCredential,
  issued: IssuedSession,
  answer: { via: Via; setCookie: string | null },
): Promise<SignInResult | null> {
  const { manager } = state.context;
  if (typeof who !== "string" && !(await who.stillCurrent())) {
    // The token never leaves this function; revoking it is belt and braces.
    if (manager.revocable) {
      await manager.revoke(issued.identity).catch(() => {});
    }
    state.session = ANONYMOUS;
    state.changed = true;
    return null;
  }
  state.session = {
    kind: "signedIn",
    identity: issued.identity,
    via: answer.via,
  };
  state.changed = true;
  // A session kept bound sets its new bound cookie: the one the request
  // carried is replaced, not cleared.
  if (issued.identity.binding === "device") state.boundCookie = false;
  return {
    ...issued,
    expiresAt: issued.identity.expiresAt,
    setCookie: answer.setCookie,
  };
}

/**
 * Ends the request's session: revokes its jti (when the manager has a
 * store) and answers the cookie that clears it.
 *
 * @param req The request, after `identityMiddleware`.
 * @returns Whether a session was revoked, and the clearing cookie.
 * @throws {TypeError} When `identityMiddleware` did not run.
 * @throws {AuthError} `STORE_UNAVAILABLE`: the session could not be revoked
 * (answer 503 and keep the cookie: a cleared cookie would look like a
 * sign-out while the token stays valid).
 *
 * @example Usage
 * ```ts ignore
 * const { clearCookie } = await signOut(req);
 * ```
 */
export async function signOut(req: Request): Promise<SignOutResult> {
  const state = requestStates.get(req);
  if (state === undefined) {
    throw new TypeError(
      "signOut needs identityMiddleware to run for this request first",
    );
  }
  const { manager, cookie } = state.context;
  if (state.session.kind === "unavailable") {
    throw storeUnavailable("signed out");
  }
  const identity = identityOf(state);
  let revoked = false;
  if (identity !== null && manager.revocable) {
    revoked = await manager.revoke(identity);
  }
  // A bound cookie, even one revoked already, ends its browser's session
  // as a whole: it may have moved on to another jti meanwhile.
  const device = state.context.device;
  if (state.boundCookie === true && device !== null) await device.end(req);
  state.session = ANONYMOUS;
  state.changed = true;
  return { revoked, clearCookie: cookie === null ? null : cookie.clear() };
}

function storeUnavailable(what: string): AuthError {
  return new AuthError(
    "STORE_UNAVAILABLE",
    `Session store did not answer: the request could not be ${what}`,
    { reason: "failed" },
  );
}
