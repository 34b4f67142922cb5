/**
 * What the sign-in methods share: keys of a purpose of their own for their
 * short-lived values, their log lines, and the session a sign-in by a
 * method ends in.
 *
 * @module
 */
import type { SecretProvider } from "@portcullis/auth";
import type { SignInResult } from "@portcullis/auth/http";
import { signToken, verifyToken } from "@portcullis/auth/tokens";
import type { ModuleContext } from "./context.ts";
import { record, startSession } from "./lifecycle.ts";

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
export function emit(ctx: ModuleContext, event: SignInEvent): void {
  try {
    ctx.log(`auth event: ${JSON.stringify(event)}`);
  } catch {
    // A log line never breaks a sign-in.
  }
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
  ctx: ModuleContext,
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
