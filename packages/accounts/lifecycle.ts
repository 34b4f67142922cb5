/**
 * The account lifecycle's glue: sessions that enter "my sessions" when
 * they begin, the security events the routes record, the proof of an
 * address (every method's part through `ctx.lifecycle`, once), and the
 * rule that an unverified account gains no sign-in method.
 *
 * @module
 */
import { errorResponse, normalizeEmail, signIn } from "@portcullis/auth";
import type { CheckedCredential, SignInResult } from "@portcullis/auth/http";
import type { SecurityEventType } from "@portcullis/auth/events";
import type {
  AddressProofKind,
  LifecycleOutcome,
} from "@portcullis/auth/passwords";
import {
  EMAIL_CHANGE_PURPOSE,
  PASSWORD_RESET_PURPOSE,
} from "@portcullis/auth/verification";
import type { EmailContent } from "./views/emails/email_content.ts";
import type { ModuleContext } from "./context.ts";
import { mailTokenLink } from "./mailed_link.ts";
import { json } from "./respond.ts";

/** What the 403 of {@linkcode refuseUnverified} says. */
export const VERIFY_FIRST =
  "Verify your email address first: open the link we mailed you (or ask for a new one on your account page), then add a sign-in method";

/**
 * The rule that holds the account invariant at the door: an account whose
 * address is not verified gains no sign-in method (a provider, a passkey,
 * TOTP). 403 `unverified` with {@linkcode VERIFY_FIRST}, or `null` to go
 * on.
 *
 * @param ctx The app.
 * @param req The request.
 * @param subject The signed-in user.
 * @returns The refusal, or `null`.
 */
export async function refuseUnverified(
  ctx: ModuleContext,
  req: Request,
  subject: string,
): Promise<Response | null> {
  const user = await ctx.credentials.findById(subject);
  if ((user?.verifiedAt ?? 0) > 0) return null;
  return errorResponse(req, 403, "unverified", VERIFY_FIRST);
}

/**
 * The account's address was proven (a verification link, a reset link, an
 * email-change link): every sign-in method's part runs, through the one
 * lifecycle. On the first proof this removes whatever a party that had not
 * proven the address set up, and the outstanding email-change links such a
 * party may have asked for; when anything was removed, every session of
 * the account is revoked and the activity says so
 * (`credentials_removed`). Throws (`STORE_UNAVAILABLE`, answered 503) when
 * a part fails: the caller has then consumed and stamped nothing.
 *
 * @param ctx The app.
 * @param req The request.
 * @param proof Whose address, how, the account's earlier proof, and
 * whether the password stays.
 * @returns What was removed.
 */
/**
 * Ends the account's outstanding email-change links, and what each module
 * lets an earlier holder keep (`ModuleParts.holderEvicted`: a passkey
 * recovery session, its links). Runs after every write that evicts an
 * earlier holder of the account (the first proof of the address, an email
 * change, a password change or reset, signing out everywhere): a link
 * asked for by whoever held the password before must not outlive the
 * owner's recovery, or one click by the owner would move the account to
 * that party's address.
 *
 * @param ctx The app.
 * @param subject The account.
 */
export async function cancelEmailChanges(
  ctx: ModuleContext,
  subject: string,
): Promise<void> {
  await ctx.tokens.revokeFor(subject, EMAIL_CHANGE_PURPOSE);
  for (const { parts } of ctx.modules) await parts.holderEvicted?.(subject);
}

export async function proveAddress(
  ctx: ModuleContext,
  req: Request,
  proof: {
    subject: string;
    kind: AddressProofKind;
    verifiedBefore: number;
    keepPassword: boolean;
  },
): Promise<LifecycleOutcome> {
  const outcome = await ctx.lifecycle.addressProven({
    ...proof,
    at: Math.max(1, Math.floor(ctx.now())),
  });
  if (proof.kind === "emailChange") {
    // The account moved to another address: what a holder of the old one
    // may still keep of a module's ends (a passkey recovery session).
    for (const { parts } of ctx.modules) {
      await parts.holderEvicted?.(proof.subject);
    }
  }
  if (proof.verifiedBefore <= 0 && proof.kind !== "emailChange") {
    await cancelEmailChanges(ctx, proof.subject);
    // Device cookies minted before the first proof came from a party nobody
    // had checked: they no longer exempt a browser from the lockout.
    const email = (await ctx.credentials.findById(proof.subject))?.email;
    if (email !== undefined) await ctx.throttle.forgetDevices(email);
  }
  if (outcome.total > 0) {
    await ctx.sessions.revokeAll(proof.subject);
    await ctx.registry.clear(proof.subject).catch(() => {});
    await record(ctx, "credentials_removed", proof.subject, req);
    ctx.log(
      `account ${proof.subject}: ${proof.kind} removed ${
        JSON.stringify(outcome.removed)
      }`,
    );
  }
  return outcome;
}

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
  ctx: ModuleContext,
  req: Request,
  who: string,
): Promise<SignInResult>;
/**
 * Signs the request in with a checked credential (`login`'s `ok`): `null`
 * when the credential changed meanwhile (answer it as a wrong password).
 *
 * @param ctx The app.
 * @param req The request.
 * @param who The checked credential.
 * @returns What `signIn` answered, or `null`.
 */
export async function startSession(
  ctx: ModuleContext,
  req: Request,
  who: CheckedCredential,
): Promise<SignInResult | null>;
export async function startSession(
  ctx: ModuleContext,
  req: Request,
  who: string | CheckedCredential,
): Promise<SignInResult | null> {
  // A banned account starts no session, whatever proved it: the app
  // answers as to a wrong password (`SignInRefused`).
  const subject = typeof who === "string" ? who : who.subject;
  if (await signInRefused(ctx, subject)) throw new SignInRefused(subject);
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
 * What {@linkcode startSession} throws when a module refuses every sign-in
 * of the account (a ban): the app answers it as a wrong password (401
 * `invalid_credentials`, or the login page for a browser), whichever method
 * proved the subject, and records a failed sign-in.
 */
export class SignInRefused extends Error {
  /** The account whose sign-in was refused. */
  readonly subject: string;

  /**
   * Makes the refusal.
   *
   * @param subject The account.
   */
  constructor(subject: string) {
    super("Sign-in refused");
    this.name = "SignInRefused";
    this.subject = subject;
  }
}

/**
 * Whether a module refuses every sign-in of the account (a ban).
 *
 * @param ctx The app.
 * @param subject The account a credential proved.
 * @returns `true` when one does.
 */
export async function signInRefused(
  ctx: Pick<ModuleContext, "modules">,
  subject: string,
): Promise<boolean> {
  for (const { parts } of ctx.modules) {
    if (await parts.refusesSignIn?.(subject)) return true;
  }
  return false;
}

/**
 * A new session's token for a JSON answer. `tokenType` says how to send
 * it: `"DPoP"` for a token bound to the client's DPoP key
 * (`Authorization: DPoP` with a fresh proof), `"Bearer"` for a plain one.
 * A browser's device-bound session (`"cookie"`) gets no token in the body:
 * its cookie is the credential (see {@linkcode sessionJson}).
 *
 * @param session What `startSession` answered.
 * @returns `{token, tokenType, expiresAt}`, or `{tokenType, expiresAt}`.
 */
export function tokenFields(session: SignInResult): {
  token?: string;
  tokenType: "DPoP" | "Bearer" | "cookie";
  expiresAt: number;
} {
  const binding = session.identity.binding;
  if (binding === "device") {
    return { tokenType: "cookie", expiresAt: session.expiresAt };
  }
  return {
    token: session.token,
    tokenType: binding === "dpop" ? "DPoP" : "Bearer",
    expiresAt: session.expiresAt,
  };
}

/**
 * The JSON answer of a sign-in: {@linkcode tokenFields} and `extra`, with
 * the bound cookie set for a browser's device-bound session.
 *
 * @param session What `startSession` answered.
 * @param extra More fields of the answer.
 * @param status The status; default 200.
 * @returns The answer.
 */
export function sessionJson(
  session: SignInResult,
  extra: Record<string, unknown> = {},
  status = 200,
): Response {
  const headers = new Headers();
  if (session.identity.binding === "device" && session.setCookie) {
    headers.append("set-cookie", session.setCookie);
  }
  return json({ ...extra, ...tokenFields(session) }, status, headers);
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
  ctx: ModuleContext,
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
  ctx: ModuleContext,
  email: string,
): Promise<string | null> {
  try {
    return (await ctx.credentials.findByEmail(normalizeEmail(email)))?.id ??
      null;
  } catch {
    return null;
  }
}

/**
 * The modules' steps after a right first factor (a password, a provider's
 * sign-in): the first answer, or `null` to start the session.
 *
 * @param ctx The app.
 * @param req The first step's request.
 * @param subject Who proved the first factor.
 * @param next Where to go afterwards.
 * @param form Whether the request is a browser's form.
 * @returns The answer that replaces the session start, or `null`.
 */
export async function stepAfterPassword(
  ctx: ModuleContext,
  req: Request,
  subject: string,
  next: string,
  form: boolean,
): Promise<Response | null> {
  for (const { parts } of ctx.modules) {
    const answer = await parts.afterPassword?.(req, subject, next, form);
    if (answer) return answer;
  }
  return null;
}

/**
 * Whether any module holds a second factor of the user.
 *
 * @param ctx The app.
 * @param subject The user.
 * @returns `true` when one does.
 */
export async function hasSecondFactor(
  ctx: ModuleContext,
  subject: string,
): Promise<boolean> {
  for (const { parts } of ctx.modules) {
    if (await parts.hasSecondFactor?.(subject)) return true;
  }
  return false;
}

/**
 * The modules' checks before a signed-in user creates data (an unverified
 * account is refused while the verification module is in the app): the
 * first refusal, or `null` to go on.
 *
 * @param ctx The app.
 * @param req The signed-in request.
 * @returns The refusal, or `null`.
 */
export async function beforeWrite(
  ctx: ModuleContext,
  req: Request,
): Promise<Response | null> {
  for (const { parts } of ctx.modules) {
    const refused = await parts.beforeWrite?.(req);
    if (refused) return refused;
  }
  return null;
}

/**
 * Mails a password-reset link (one hour, single use) to the account's
 * stored address, never to what was typed; `view` words it (reset or set).
 *
 * @param ctx The app.
 * @param user The account.
 * @param view The mail's words.
 */
export async function mailResetLink(
  ctx: ModuleContext,
  user: { id: string; email: string },
  view: (data: { link: string }) => EmailContent,
): Promise<void> {
  await mailTokenLink(ctx, user, {
    tokens: ctx.tokens,
    purpose: PASSWORD_RESET_PURPOSE,
    path: "/password/reset",
    view,
  });
}

/**
 * Runs every module's step after a registration (the verification link's
 * mail, …): the lines they add to the welcome message.
 *
 * @param ctx The app.
 * @param subject The new account.
 * @returns The lines, in the order of the modules.
 */
export async function afterRegister(
  ctx: ModuleContext,
  subject: string,
): Promise<string[]> {
  // The stored (normalised) address, for the modules' mail.
  const user = await ctx.credentials.findById(subject);
  if (user === null) return [];
  const lines: string[] = [];
  for (const { parts } of ctx.modules) {
    const line = await parts.afterRegister?.({
      subject: user.id,
      email: user.email,
    });
    if (line) lines.push(line);
  }
  return lines;
}
