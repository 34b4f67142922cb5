/**
 * What the sign-in methods beside the password share (each lives in its
 * module under `methods/`): keys of a purpose of their own for their
 * short-lived values, their events, routes that answer 404 while the
 * method is off, and the session a sign-in by a method ends in.
 *
 * @module
 */
import {
  errorResponse,
  requireAuthenticated,
  type SecretProvider,
} from "@portcullis/auth";
import type { SignInResult } from "@portcullis/auth/http";
import { signToken, verifyToken } from "@portcullis/auth/tokens";
import type { AppContext } from "./context.ts";
import { record, startSession } from "./lifecycle.ts";
import { type AppHonoContext, type AppModule, settingsOf } from "./module.ts";

/**
 * Whether the environment turns every sign-in method beside the password
 * off (`SIGN_IN_METHODS=off`: password only), whatever their own settings
 * say. The value is read as {@linkcode envFlag} reads one, on when unset.
 *
 * @param env The environment.
 * @returns `true` when they are all off.
 * @throws {TypeError} For a value that is neither yes nor no.
 */
export function allMethodsOff(
  env: Record<string, string | undefined>,
): boolean {
  return !envFlag(env, "SIGN_IN_METHODS", true);
}

/**
 * Whether a sign-in method that is on by default stays on: neither its own
 * switch (`name`, for example `TOTP=off`) nor `SIGN_IN_METHODS=off` turns it
 * off. Both are read as {@linkcode envFlag} reads a value.
 *
 * @param env The environment.
 * @param name The method's switch.
 * @returns `true` when the method is on.
 * @throws {TypeError} For a value that is neither yes nor no.
 */
export function methodOn(
  env: Record<string, string | undefined>,
  name: string,
): boolean {
  // Both are read, so a typo in either stops the start.
  const own = envFlag(env, name, true);
  return !allMethodsOff(env) && own;
}

const YES = ["1", "true", "yes", "on"];
const NO = ["0", "false", "no", "off"];

/**
 * A yes-or-no setting of the environment: `1`, `true`, `yes` and `on` are
 * yes, `0`, `false`, `no` and `off` are no, in any case and with spaces
 * around; unset or empty is `fallback`. Anything else stops the start: a
 * typo must not be read as "no" (or "yes") without a word.
 *
 * @example Usage
 * ```ts ignore
 * const allowHttp = envFlag(env, "OIDC_ALLOW_HTTP"); // "Yes" → true
 * ```
 *
 * @param env The environment.
 * @param name The variable's name.
 * @param fallback The value when it is unset or empty.
 * @returns The setting.
 * @throws {TypeError} For a value that is neither yes nor no, naming the
 * variable and the values it takes.
 */
export function envFlag(
  env: Record<string, string | undefined>,
  name: string,
  fallback = false,
): boolean {
  const value = (env[name] ?? "").trim().toLowerCase();
  if (value === "") return fallback;
  if (YES.includes(value)) return true;
  if (NO.includes(value)) return false;
  throw new TypeError(
    `${name} must be one of ${YES.join(", ")} (yes) or ${
      NO.join(", ")
    } (no), in any case: received "${env[name]!.slice(0, 32)}"`,
  );
}

/**
 * Something a sign-in method did, for the log: its `type` (`login`,
 * `login_failed`, `totp_enabled`, …) and plain fields (`method`,
 * `subject`, `reason`, …). No token, code or secret is ever in one.
 */
export interface SignInEvent {
  /** What happened. */
  type: string;
  /** The fields, in the order they are logged. */
  [field: string]: string;
}

/**
 * Logs an event of a sign-in method on one line (`auth event: {…}`);
 * never throws, so a log never breaks a sign-in.
 *
 * @param ctx The app.
 * @param event What happened.
 */
export function emit(ctx: AppContext, event: SignInEvent): void {
  try {
    ctx.log(`auth event: ${JSON.stringify(event)}`);
  } catch {
    // A log line never breaks a sign-in.
  }
}

/** A route handler of a method: the app, the method's settings, the request, the path's `:param`. */
export type MethodHandler<S> = (
  ctx: AppContext,
  settings: S,
  req: Request,
  param: string,
) => Promise<Response> | Response;

/**
 * A method's handler adapted to Hono: its route answers 404 while the
 * method is off.
 */
export type MethodRoute = (c: AppHonoContext) => Promise<Response> | Response;

/** What {@linkcode whenOn} returns: mounts a method's handlers. */
export interface MethodMount<S> {
  /** A route anyone may call. */
  (handler: MethodHandler<S>): MethodRoute;
  /**
   * A route for signed-in users only: 401 without a session, as
   * `signedIn` of `routes/handle.ts` answers, but after the 404 while the
   * method is off. The handler reads the user with `currentUser(req)!`.
   */
  signedIn(handler: MethodHandler<S>): MethodRoute;
}

/**
 * Mounts a method's handlers: each runs with the method's settings, and
 * its route answers 404 while the method is off.
 *
 * @example Usage
 * ```ts ignore
 * const on = whenOn(ctx, totp);
 * app.get("/login/totp", on(totpForm));
 * app.post("/account/totp", on.signedIn(startTotp));
 * ```
 *
 * @param ctx The app.
 * @param module The method's module.
 * @returns A function that adapts one handler to Hono, and its gated form.
 */
export function whenOn<S>(
  ctx: AppContext,
  module: AppModule<S>,
): MethodMount<S> {
  const on = (handler: MethodHandler<S>): MethodRoute => (c) => {
    const settings = settingsOf(ctx, module);
    if (settings === null) {
      return errorResponse(c.req.raw, 404, "not_found", "Nothing here");
    }
    return handler(
      ctx,
      settings,
      c.req.raw,
      Object.values(c.req.param())[0] ?? "",
    );
  };
  return Object.assign(on, {
    signedIn: (handler: MethodHandler<S>) =>
      on((_, settings, req, param) =>
        requireAuthenticated(req) ?? handler(ctx, settings, req, param)
      ),
  });
}

/**
 * Ends a sign-in by a method as `POST /login` ends one: a new session,
 * listed in "my sessions", the login recorded and logged.
 *
 * @param ctx The app.
 * @param req The request.
 * @param subject Who signed in.
 * @param method How (`totp`, `recovery_code`, `oidc`, `passkey`).
 * @returns The session.
 */
export async function signInWith(
  ctx: AppContext,
  req: Request,
  subject: string,
  method: string,
): Promise<SignInResult> {
  const session = await startSession(ctx, req, subject);
  await record(ctx, "login", subject, req);
  emit(ctx, { type: "login", method, subject });
  return session;
}

/**
 * A signer for one purpose's short-lived values (`totp-pending`,
 * `oidc-state`, `webauthn-challenge`): `signToken`/`verifyToken` over
 * `secret.keys(purpose)`, so the value passes nowhere else, not as a
 * session, not as a flash message. The packages take it as a plain object
 * and never import the session layer.
 *
 * @param secret The application secret.
 * @param purpose The purpose label.
 * @returns `{ sign, verify }`.
 */
export function purposeSigner(secret: SecretProvider, purpose: string): {
  sign(payload: Uint8Array): Promise<string>;
  verify(value: string): Promise<Uint8Array | null>;
} {
  const keys = secret.keys(purpose);
  return {
    sign: async (payload) => signToken((await keys).current, purpose, payload),
    verify: async (value) => verifyToken(await keys, purpose, value),
  };
}

/**
 * Every HMAC key of one purpose, the current one first: what a package
 * derives its own keys from (TOTP seals secrets with AES-GCM keys derived
 * from these), so rotation of `AUTH_SECRET` keeps older values readable.
 *
 * @param secret The application secret.
 * @param purpose The purpose label.
 * @returns The keys.
 */
export async function purposeKeyList(
  secret: SecretProvider,
  purpose: string,
): Promise<CryptoKey[]> {
  const keys = await secret.keys(purpose);
  const current = keys.current.key;
  return [current, ...[...keys.byKid.values()].filter((k) => k !== current)];
}
