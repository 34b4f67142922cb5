/**
 * Password reset: `GET|POST /password/forgot` (a link by mail) and
 * `GET|POST /password/reset?token=…` (a new password); and the first
 * password of an account without one, `POST /account/password/link`.
 *
 * @module
 */
import { AuthError, currentUser, errorResponse } from "@portcullis/auth";
import { PASSWORD_RESET_PURPOSE } from "@portcullis/auth/verification";
import { limit, type ModuleContext } from "../context.ts";
import {
  cancelEmailChanges,
  mailResetLink,
  proveAddress,
  record,
} from "../lifecycle.ts";
import { requestMailedLink } from "../mailed_link.ts";
import { bodyOrBadRequest } from "../request_body.ts";
import { trustThisDevice } from "../password_login.ts";
import { HashingBusyError } from "../hashing_gate.ts";
import {
  json,
  redirect,
  render,
  strictOrigin,
  tooManyRequests,
} from "../respond.ts";
import { hasPassword } from "../reauth.ts";
import { passwordAdvice } from "./password_advice.ts";

const SENT =
  "If an account uses that address, a link to choose a new password is on its way. It works for one hour.";
const REFUSED =
  "The password-reset link is unknown, was already used, or has expired. Ask for a new one.";

/** `GET /password/forgot`: the form. */
export function forgotForm(ctx: ModuleContext): Response {
  return render(ctx, ctx.views.forgotPassword({ email: "", error: null }));
}

/**
 * `POST /password/forgot` (form or JSON `{email}`): the same answer
 * whether or not the address is registered (form: 303 to `/login` with a
 * flash; JSON: 202 `{}`). The lookup, the token and the mail run after the
 * answer (`ctx.defer`), so its timing tells nothing either. Limited per
 * address asked for and per client address (429).
 */
export function forgot(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  return requestMailedLink(ctx, req, {
    limit: "reset",
    perEmail: ctx.limits.resetPerEmail,
    perAddress: ctx.limits.resetPerAddress,
    sent: SENT,
    invalidForm: ({ email, error }) =>
      ctx.views.forgotPassword({ email, error }),
    mail: (user) => mailResetLink(ctx, user, ctx.views.emails.resetPassword),
    what: "password-reset",
  });
}

/**
 * `POST /account/password/link` (signed in; an account without a password,
 * made by signing in with a provider): mails a link to set a first
 * password to the account's own address (a password-reset link: the same
 * `/password/reset` page, one hour, every session signed out when used).
 * Form: 303 to `/account` with a flash; JSON: 202 `{}`. An account with a
 * password: 409 `has_password`. Limited like `/password/forgot`, on the
 * same counters: 429.
 *
 * The link, not a form behind a recent sign-in, because whoever holds only
 * a stolen session cookie must not be able to give the account a password
 * (which would then pass every password re-check and outlive the session);
 * the mailbox is a second proof.
 */
export async function passwordLink(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const user = await ctx.credentials.findById(currentUser(req)!);
  if (user === null) return errorResponse(req, 404, "not_found", "No account");
  if (hasPassword(user)) {
    return errorResponse(
      req,
      409,
      "has_password",
      "This account has a password: change it with the current one, or use the forgotten-password page",
    );
  }
  const wait = await ctx.limiter.take([
    limit("reset-email", user.email, ctx.limits.resetPerEmail),
    limit("reset-address", ctx.clientAddress(req), ctx.limits.resetPerAddress),
  ]);
  if (wait > 0) return tooManyRequests(req, wait);
  let message =
    `A link to set your password is on its way to ${user.email}. It works for one hour.`;
  try {
    await mailResetLink(ctx, user, ctx.views.emails.setPassword);
  } catch (error) {
    ctx.log(`set-password email failed: ${(error as Error)?.message}`);
    message = "The email could not be sent. Try again later.";
  }
  if (body.kind !== "form") return json({}, 202);
  return redirect("/account", [
    await ctx.flash.set({ kind: "notice", message }),
  ]);
}

/**
 * Whether the account keeps a second factor through a reset: an account
 * never verified loses every other method at the reset's address proof,
 * so its new password is its only factor.
 */
async function keepsSecondFactor(
  ctx: ModuleContext,
  subject: string,
): Promise<boolean> {
  const owner = await ctx.credentials.findById(subject);
  return owner !== null && owner.verifiedAt !== 0 &&
    await ctx.lifecycle.hasSecondFactor(subject);
}

function currentEmail(ctx: ModuleContext) {
  return async (subject: string) =>
    (await ctx.credentials.findById(subject))?.email ?? null;
}

/**
 * `GET /password/reset?token=…`: the new-password form when the token is
 * good (never consumed here); a 400 page otherwise. The token stays out of
 * referrers (`strict-origin`: only the origin is ever sent on).
 */
export async function resetForm(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const token = new URL(req.url).searchParams.get("token") ?? "";
  const found = await ctx.tokens.peek(token, PASSWORD_RESET_PURPOSE, {
    currentEmail: currentEmail(ctx),
  });
  if (found === null) return strictOrigin(refusedPage(ctx, 400));
  const secondFactor = await keepsSecondFactor(ctx, found.subject);
  return strictOrigin(
    render(
      ctx,
      ctx.views.resetPassword({
        token,
        email: found.email,
        error: null,
        minPasswordLength: ctx.passwords.minPasswordLength({ secondFactor }),
      }),
    ),
  );
}

/**
 * `POST /password/reset` (form or JSON `{token, password}`): checks the new
 * password first (refused: 422, the token stays usable), revokes every
 * session of the user, proves the address through the account's lifecycle
 * (an account never verified loses every sign-in method someone else set
 * up, and the activity says so), then consumes the token, writes the new
 * hash (revocation always before the write), stamps the address verified,
 * and lifts the account's login and password-check limits. Form: 303 to `/login` with a flash; JSON: 200 `{}`. An unknown,
 * used or expired token: 400. Never signs anyone in. Limited per client
 * address.
 */
export async function reset(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const form = body.kind === "form";
  const wait = await ctx.limiter.take([
    limit("reset-address", ctx.clientAddress(req), ctx.limits.resetPerAddress),
  ]);
  if (wait > 0) return strictOrigin(tooManyRequests(req, wait));
  const token = body.fields.token ?? "";
  const password = body.fields.password ?? "";
  const check = { currentEmail: currentEmail(ctx) };
  const found = await ctx.tokens.peek(token, PASSWORD_RESET_PURPOSE, check);
  if (found === null) return strictOrigin(refused(ctx, req, form));
  // NIST SP 800-63B-4: 15 characters for a password that is the only
  // factor, 8 when the account keeps a second factor through the reset.
  const secondFactor = await keepsSecondFactor(ctx, found.subject);
  const minPasswordLength = ctx.passwords.minPasswordLength({ secondFactor });
  try {
    await ctx.passwords.checkNewPassword(password, { secondFactor });
  } catch (error) {
    if (error instanceof AuthError && error.code === "INVALID_PASSWORD") {
      const message = passwordAdvice(error.reason, minPasswordLength);
      return strictOrigin(
        form
          ? render(
            ctx,
            ctx.views.resetPassword({
              token,
              email: found.email,
              error: message,
              minPasswordLength,
            }),
            422,
          )
          : json({ error: "invalid_password", message }, 422),
      );
    }
    throw error;
  }
  // The hashing bound is full: 503 before anything is revoked or proven
  // (the link still works).
  if (!ctx.hashing.admits(false)) throw new HashingBusyError();
  // Revoke first: a session stolen with the old password must not outlive
  // the write. Should the store fail here, nothing is spent or written and
  // the link still works.
  await ctx.sessions.revokeAll(found.subject);
  await ctx.registry.clear(found.subject).catch(() => {});
  // The link proves the address: through the account's lifecycle, an
  // account never verified loses whatever someone else set up on it (the
  // password is replaced just below). A part that fails answers 503 and
  // the link still works.
  const owner = await ctx.credentials.findById(found.subject);
  if (owner === null) return strictOrigin(refused(ctx, req, form));
  await proveAddress(ctx, req, {
    subject: owner.id,
    kind: "passwordReset",
    verifiedBefore: owner.verifiedAt,
    keepPassword: true,
  });
  // The new password's hash runs inside the hashing bound, its slot taken
  // before the link is spent: a full bound answers 503 and the link still
  // works.
  const done = await ctx.hashing.run(async () => {
    const redeemed = await ctx.tokens.redeem(
      token,
      PASSWORD_RESET_PURPOSE,
      check,
    );
    if (redeemed === null || redeemed.subject !== found.subject) return null;
    const changed = await ctx.passwords.changePassword(
      redeemed.subject,
      password,
      { secondFactor },
    );
    return changed ? redeemed : null;
  });
  if (done === null) return strictOrigin(refused(ctx, req, form));
  const redeemed = done;
  // After the write: a link asked for with the old password, even one
  // issued while this reset ran, dies here.
  await cancelEmailChanges(ctx, redeemed.subject);
  if (
    owner.verifiedAt === 0 &&
    await ctx.credentials.markVerified(
      redeemed.subject,
      redeemed.email,
      Math.max(1, Math.floor(ctx.now())),
    )
  ) await record(ctx, "verified", redeemed.subject, req);
  // The reset lifts the account's login throttle (its hard stop too) and
  // its password-check count.
  await ctx.throttle.reset(redeemed.email);
  // Browsers trusted with the old password are trusted no more.
  await ctx.throttle.forgetDevices(redeemed.email);
  await ctx.limiter.reset([
    limit(
      "password-change-account",
      redeemed.subject,
      ctx.limits.passwordChangePerAccount,
    ),
  ]);
  await record(ctx, "password_reset", redeemed.subject, req);
  // The browser that reset the password proved the mailbox and set the
  // password: it is trusted for the account from now on, so a stranger who
  // stops the account's password sign-in again at once (100 failures from
  // fresh addresses, seconds after the reset lifted the stop) cannot keep
  // its owner out of it.
  const device = await trustThisDevice(ctx, req, redeemed.email);
  const cookies = device === null ? [] : [device];
  if (!form) {
    return strictOrigin(
      json({}, 200, cookies.length > 0 ? { "set-cookie": cookies[0] } : {}),
    );
  }
  return strictOrigin(redirect("/login", [
    ...cookies,
    await ctx.flash.set({
      kind: "notice",
      message:
        "Your password is changed and every session is signed out. Log in with the new password.",
    }),
  ]));
}

function refusedPage(ctx: ModuleContext, status: number): Response {
  return render(
    ctx,
    ctx.views.message({
      title: "This link does not work",
      message: REFUSED,
      email: null,
    }),
    status,
  );
}

function refused(ctx: ModuleContext, req: Request, form: boolean): Response {
  return form
    ? refusedPage(ctx, 400)
    : errorResponse(req, 400, "invalid_link", REFUSED);
}
