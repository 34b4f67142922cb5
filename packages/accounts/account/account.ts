/**
 * Deleting the account (`POST /account/delete`), and the re-check with
 * its refusal that the account's forms share (the deletion and the email
 * change of `email_change.ts`).
 *
 * @module
 */
import { currentUser, signOut } from "@portcullis/auth";
import {
  EMAIL_CHANGE_PURPOSE,
  EMAIL_VERIFICATION_PURPOSE,
  PASSWORD_RESET_PURPOSE,
} from "@portcullis/auth/verification";
import type { ModuleContext } from "../context.ts";
import { record } from "../lifecycle.ts";
import { bodyOrBadRequest, type ParsedBody } from "../request_body.ts";
import { json, redirect, tooManyRequests } from "../respond.ts";
import { accountPageWithError } from "../pages.ts";
import {
  passwordCheckLimits,
  REAUTH_REQUIRED,
  recheck,
  recheckRefusal,
  WRONG_PASSWORD,
} from "../recheck.ts";

/**
 * Reads the body and re-checks the signed-in user before an account form
 * (the email change, the deletion): the password (counted per account and
 * per address, as at `POST /account/password`), or a fresh
 * re-authentication (the only way for an account without a password).
 *
 * @param ctx The app.
 * @param req The signed-in request.
 * @returns The user, the body and the user's email when it passes, else
 * the answer: 400 (unreadable body), 401 (wrong password), 403
 * (re-authentication needed), or 429.
 */
export async function recheckAccountForm(
  ctx: ModuleContext,
  req: Request,
): Promise<{ subject: string; body: ParsedBody; email: string } | Response> {
  const subject = currentUser(req)!;
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const outcome = await recheck(
    ctx,
    req,
    subject,
    body.fields.password,
    passwordCheckLimits(ctx, req, subject),
  );
  if (outcome.kind === "ok") return { subject, body, email: outcome.email };
  if (outcome.kind === "throttled") {
    return tooManyRequests(req, outcome.retryAfterSeconds);
  }
  if (outcome.kind === "notOwner") return recheckRefusal(req, outcome);
  return await refuseAccountForm(
    ctx,
    body,
    subject,
    outcome.kind === "reauthRequired"
      ? {
        status: 403,
        code: "reauthentication_required",
        message: REAUTH_REQUIRED,
      }
      : { status: 401, code: "invalid_credentials", message: WRONG_PASSWORD },
  );
}

/**
 * Refuses an account form: JSON `{error, message}`, or for a browser's
 * form the account page again with the message.
 *
 * @param ctx The app.
 * @param body The form's body.
 * @param subject The signed-in user.
 * @param r The status, the error code and the message.
 * @returns The response.
 */
export async function refuseAccountForm(
  ctx: ModuleContext,
  body: ParsedBody,
  subject: string,
  r: { status: number; code: string; message: string },
): Promise<Response> {
  if (body.kind !== "form") {
    return json({ error: r.code, message: r.message }, r.status);
  }
  return await accountPageWithError(ctx, subject, r.message, r.status);
}

/**
 * `POST /account/delete` (signed in; form or JSON `{password}`): after the
 * re-check (the password, or a fresh re-authentication), revokes every
 * session, deletes the user's outstanding tokens, activity and sessions
 * list, then, through the account's lifecycle, every module's data (the
 * sign-in methods' credentials (provider links, passkeys, TOTP secret and recovery
 * codes) and last the user, and clears the cookie. A store that fails
 * answers 503 and keeps the account for a retry. Form: 303 to `/`; JSON: 204. The address can register
 * again.
 */
export async function deleteAccount(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const checked = await recheckAccountForm(ctx, req);
  if (checked instanceof Response) return checked;
  const { subject, body } = checked;
  await ctx.sessions.revokeAll(subject);
  // Browsers trusted for this address stop being trusted: whoever
  // registers it next starts with none.
  const email = (await ctx.credentials.findById(subject))?.email;
  if (email !== undefined) await ctx.throttle.forgetDevices(email);
  for (
    const purpose of [
      EMAIL_VERIFICATION_PURPOSE,
      PASSWORD_RESET_PURPOSE,
      EMAIL_CHANGE_PURPOSE,
      "magic-link",
    ]
  ) {
    await ctx.tokens.revokeFor(subject, purpose);
  }
  await record(ctx, "account_deleted", subject, req);
  await ctx.eventStore.deleteFor(subject);
  await ctx.registry.clear(subject);
  // Every sign-in method's credentials, then the account record itself
  // (in SQL its foreign keys cascade too). A part that fails answers 503
  // and keeps the account and its password for the retry.
  await ctx.lifecycle.accountDeleted(subject);
  const { clearCookie } = await signOut(req);
  if (body.kind !== "form") return new Response(null, { status: 204 });
  return redirect("/", [
    clearCookie,
    ctx.reauth.clear(),
    await ctx.flash.set({
      kind: "notice",
      message: "Your account and everything in it are deleted.",
    }),
  ]);
}
