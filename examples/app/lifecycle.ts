/**
 * The account lifecycle's glue: sessions that enter "my sessions" when
 * they begin, and the security events the routes record.
 *
 * @module
 */
import { normalizeEmail, signIn } from "@portcullis/auth";
import {
  type CheckedCredential,
  type SignInResult,
} from "@portcullis/auth/http";
import type { SecurityEventType } from "@portcullis/auth/events";
import type { AppContext } from "./context.ts";

/**
 * Signs the request in (`signIn`: a new session, the presented one
 * revoked) and records the new session for "my sessions".
 *
 * @param ctx The app.
 * @param req The request.
 * @param who The user, or a checked credential (`login`'s `ok`).
 * @returns What `signIn` answered (`null`: the credential changed
 * meanwhile; answer it as a wrong password).
 */
export async function startSession(
  ctx: AppContext,
  req: Request,
  who: string,
): Promise<SignInResult>;
export async function startSession(
  ctx: AppContext,
  req: Request,
  who: CheckedCredential,
): Promise<SignInResult | null>;
export async function startSession(
  ctx: AppContext,
  req: Request,
  who: string | CheckedCredential,
): Promise<SignInResult | null> {
  const session = typeof who === "string"
    ? await signIn(req, who)
    : await signIn(req, who);
  if (session === null) return null;
  try {
    await ctx.registry.add(session.identity, req.headers.get("user-agent"));
  } catch (error) {
    // The session works and stays revocable (sign out everywhere); only
    // its line on the sessions page is missing until its next hourly touch.
    ctx.log(`session list not updated: ${(error as Error)?.message}`);
  }
  return session;
}

/**
 * Records a security event through the app's one hook; never throws.
 *
 * @param ctx The app.
 * @param type What happened.
 * @param subject The user, or `null`.
 * @param req The request, for the user agent.
 */
export async function record(
  ctx: AppContext,
  type: SecurityEventType,
  subject: string | null,
  req: Request,
): Promise<void> {
  await ctx.events.emit(type, subject, req);
}

/**
 * The user an email (as typed) belongs to, for events about failed or
 * throttled logins; `null` when nobody has it or it is not an address.
 * Runs after the answer is decided, for known and unknown addresses alike.
 *
 * @param ctx The app.
 * @param email The email as typed.
 * @returns The subject, or `null`.
 */
export async function subjectOfEmail(
  ctx: AppContext,
  email: string,
): Promise<string | null> {
  try {
    return (await ctx.credentials.findByEmail(normalizeEmail(email)))?.id ??
      null;
  } catch {
    return null;
  }
}
