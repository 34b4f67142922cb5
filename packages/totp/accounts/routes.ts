/**
 * TOTP as a second factor: the step after the password (`GET|POST
 * /login/totp`) and enrolment on the account page (`POST /account/totp`,
 * `/account/totp/confirm`, `/account/totp/disable`).
 *
 * After a right password, a user with TOTP on gets no session: a
 * "second factor pending" value (signed for that purpose alone, five
 * minutes) in a cookie or, for JSON clients, in the answer. A right code
 * with it then issues the session with `signIn`, as the password flow does.
 *
 * @module
 */
import { currentUser, errorResponse, safeNextPath } from "@portcullis/auth";
import type { SQLTotpStore } from "@portcullis/sql";
import { dpopKeyOf } from "@portcullis/auth/http";
import {
  bodyOrBadRequest,
  emit,
  json,
  limit,
  type ModuleContext,
  recheck,
  recheckRefusal,
  record,
  redirect,
  refuseUnverified,
  render,
  requireRecheck,
  sessionJson,
  ShortCookie,
  signInWith,
  soleFactorRefusal,
  tooManyRequests,
  trustThisDevice,
} from "@portcullis/accounts/plugin";
import { raw } from "@portcullis/accounts/views";
import type { TotpAuthenticator } from "../totp_authenticator.ts";
import type { TotpViews } from "./views.ts";

/** What the TOTP module's `setup` builds. */
export interface TotpSettings {
  /** Enrolment, codes, and the pending value between the two steps. */
  authenticator: TotpAuthenticator;
  /** Where the sealed secrets and recovery codes live. */
  store: SQLTotpStore;
  /** The module's pages. */
  views: TotpViews;
}

const PENDING_SECONDS = 300;
/** One answer for a wrong code and a missing, forged or expired pending value. */
const REFUSED = "The code is incorrect or the sign-in has expired";
const TOTP_ATTEMPTS = { max: 10, windowSeconds: 15 * 60 };
const TOTP_ATTEMPTS_PER_ADDRESS = { max: 100, windowSeconds: 15 * 60 };

/** The one answer for a refused second step, page or JSON. */
function refused(
  ctx: ModuleContext,
  views: TotpViews,
  form: boolean,
): Response {
  return form
    ? render(ctx, views.login({ error: REFUSED }), 401)
    : json({ error: "invalid_code", message: REFUSED }, 401);
}

function pendingCookie(ctx: ModuleContext): ShortCookie {
  return new ShortCookie("2fa", ctx.cookieSecure);
}

/**
 * Called after a right password (or a provider's sign-in): when the user
 * has TOTP on, answers the second-factor step instead of a session (form:
 * 303 to `/login/totp` with the pending cookie; JSON: 202
 * `{secondFactor: "totp", pending}`); otherwise `null`. A JSON client that
 * signs in with a DPoP proof gets a pending value tied to its key: only a
 * second step with a proof by that key opens it.
 */
export async function secondFactorStep(
  ctx: ModuleContext,
  { authenticator }: TotpSettings,
  req: Request,
  subject: string,
  next: string,
  form: boolean,
): Promise<Response | null> {
  if (!(await authenticator.isEnabled(subject))) return null;
  const pending = await authenticator.issuePending(subject, next, {
    boundTo: dpopKeyOf(req),
  });
  emit(ctx, { type: "second_factor_required", subject });
  if (form) {
    return redirect("/login/totp", [
      pendingCookie(ctx).set(pending, PENDING_SECONDS),
    ]);
  }
  return json({ secondFactor: "totp", pending }, 202);
}

/** `GET /login/totp`: the code form (or back to `/login` without a pending value). */
export async function totpForm(
  ctx: ModuleContext,
  { authenticator, views }: TotpSettings,
  req: Request,
): Promise<Response> {
  const value = pendingCookie(ctx).read(req);
  if (value === null || (await authenticator.readPending(value)) === null) {
    return redirect("/login");
  }
  return render(ctx, views.login({ error: null }));
}

/**
 * `POST /login/totp`: form `code` (pending value from the cookie) or JSON
 * `{pending, code}`. A right code or recovery code issues the session (and,
 * from a form, the device cookie of the login throttle, which the first
 * step held back); anything else is 401 with one answer, whatever was
 * wrong. Attempts are counted per account and per address before the
 * check; past a limit, 429.
 *
 * The pending value serves one successful second step: it stops opening
 * after it, and after a password change or reset or a change of the TOTP
 * enrolment (it is bound to them), so a copy of it is worth nothing.
 *
 * Hard stop: at most `limits.totpConsecutiveFailures.max` (100) failed
 * second steps in a row per account, then 429 with `Retry-After` and a
 * `throttled` event until a success, a password reset or the window's end.
 * It counts only attempts that carry a valid pending value, so only someone
 * who gave the account's password can trip it: a stranger cannot lock the
 * owner out.
 */
export async function loginTotp(
  ctx: ModuleContext,
  { authenticator, views }: TotpSettings,
  req: Request,
): Promise<Response> {
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const form = body.kind === "form";
  const cookie = pendingCookie(ctx);
  const value = form ? cookie.read(req) : body.fields.pending ?? null;
  // A value tied to a DPoP key opens only with a proof by that key (and
  // one tied to none only without): anything else is no pending value.
  const pending = value === null
    ? null
    : await authenticator.readPending(value, { boundTo: dpopKeyOf(req) });
  const limits = [
    limit("totp-address", ctx.clientAddress(req), TOTP_ATTEMPTS_PER_ADDRESS),
  ];
  const perAccount = pending &&
    limit("totp-account", pending.subject, TOTP_ATTEMPTS);
  if (perAccount) limits.push(perAccount);
  const wait = await ctx.limiter.take(limits);
  if (wait > 0) return tooManyRequests(req, wait);
  // Counted before the check, so concurrent guesses cannot pass together;
  // keyed by the credentials' fingerprint, which a success, a password
  // change or reset and a new enrolment change, and nothing else does.
  const streak = pending &&
    limit(
      "totp-consecutive",
      `${pending.subject}:${pending.fingerprint}`,
      ctx.limits.totpConsecutiveFailures,
    );
  if (streak) {
    const stop = await ctx.limiter.take([streak]);
    if (stop > 0) {
      await record(ctx, "throttled", pending.subject, req);
      emit(ctx, {
        type: "login_failed",
        method: "totp",
        reason: "too_many_failures",
      });
      return errorResponse(
        req,
        429,
        "too_many_failures",
        "Too many wrong codes in a row for this account: try again later, or reset your password to sign in sooner",
        { "retry-after": String(Math.max(1, Math.ceil(stop))) },
      );
    }
  }

  const factor = pending === null
    ? null
    : await authenticator.verify(pending.subject, body.fields.code ?? "");
  if (pending === null || factor === null) {
    await record(ctx, "login_failed", pending?.subject ?? null, req);
    emit(ctx, {
      type: "login_failed",
      method: "totp",
      reason: pending === null ? "no_pending_value" : "wrong_code",
    });
    return refused(ctx, views, form);
  }
  // One sign-in per pending value: two right codes sent at once (two
  // recovery codes, say) both pass the check before either moves the
  // credentials on; only the first is counted as a success.
  const once = limit(
    "totp-signed-in",
    `${pending.subject}:${pending.fingerprint}`,
    { max: 1, windowSeconds: PENDING_SECONDS },
  );
  if ((await ctx.limiter.take([once])) > 0) {
    emit(ctx, { type: "login_failed", method: "totp", reason: "used" });
    return refused(ctx, views, form);
  }
  if (perAccount && streak) await ctx.limiter.reset([perAccount, streak]);
  const session = await signInWith(
    ctx,
    req,
    pending.subject,
    factor === "totp" ? "totp" : "recovery_code",
  );
  if (!form) {
    return sessionJson(session);
  }
  // The sign-in is complete: only now is this browser trusted for the
  // account's login throttle (the first step set no device cookie).
  const email = (await ctx.credentials.findById(pending.subject))?.email;
  return redirect(safeNextPath(pending.next), [
    session.setCookie,
    cookie.clear(),
    email === undefined ? null : await trustThisDevice(ctx, req, email),
  ]);
}

/**
 * `POST /account/totp` (`password`, or a fresh re-authentication): starts
 * enrolment (form: the QR page; JSON: `{secret, uri}`). Wrong password:
 * 401; no password and no re-authentication: 403; an unverified address:
 * 403 `unverified` (verify first).
 */
export async function startTotp(
  ctx: ModuleContext,
  { authenticator, views }: TotpSettings,
  req: Request,
): Promise<Response> {
  const subject = currentUser(req)!;
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const user = await ctx.credentials.findById(subject);
  if (user === null) return errorResponse(req, 404, "not_found", "No account");
  const unverified = await refuseUnverified(ctx, req, subject);
  if (unverified) return unverified;
  if (await authenticator.isEnabled(subject)) return alreadyOn(req);
  // A session alone must not turn TOTP on (it would lock the owner out).
  const refused = await requireRecheck(ctx, req, subject, body.fields.password);
  if (refused) return refused;
  const enrolment = await authenticator.startEnrolment(subject, user.email);
  if (enrolment === null) return alreadyOn(req);
  if (body.kind === "json") {
    return json({ secret: enrolment.secret, uri: enrolment.uri });
  }
  return render(
    ctx,
    views.enrol({
      email: user.email,
      // The QR library's own markup: rects and a path, no text from the user.
      qrSvg: raw(enrolment.qrSvg),
      secret: enrolment.secret,
      error: null,
    }),
  );
}

function alreadyOn(req: Request): Response {
  return errorResponse(
    req,
    409,
    "totp_enabled",
    "Two-factor authentication is already on",
  );
}

/**
 * `POST /account/totp/confirm`: `code` → TOTP on, recovery codes shown
 * once; an unverified address: 403 `unverified`.
 */
export async function confirmTotp(
  ctx: ModuleContext,
  { authenticator, views }: TotpSettings,
  req: Request,
): Promise<Response> {
  const subject = currentUser(req)!;
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const unverified = await refuseUnverified(ctx, req, subject);
  if (unverified) return unverified;
  const perAccount = limit("totp-account", subject, TOTP_ATTEMPTS);
  const wait = await ctx.limiter.take([perAccount]);
  if (wait > 0) return tooManyRequests(req, wait);
  const codes = await authenticator.confirmEnrolment(
    subject,
    body.fields.code ?? "",
  );
  const email = (await ctx.credentials.findById(subject))?.email ?? "";
  if (codes === null) {
    const message =
      "That code did not match. Start the set-up again from your account page.";
    return body.kind === "json"
      ? json({ error: "invalid_code", message }, 422)
      : render(
        ctx,
        ctx.views.message({ title: "Code not accepted", message, email }),
        422,
      );
  }
  await ctx.limiter.reset([perAccount]);
  await record(ctx, "totp_enabled", subject, req);
  emit(ctx, { type: "totp_enabled", subject });
  return body.kind === "json"
    ? json({ recoveryCodes: codes })
    : render(ctx, views.recoveryCodes({ email, codes }));
}

/**
 * `POST /account/totp/disable`: `password` (or a fresh re-authentication)
 * and `code` (or a recovery code) → TOTP off. A wrong password and a wrong
 * code answer the same 401; no password and no re-authentication: 403.
 * The check and the removal run in the account's critical section
 * (`ModuleContext.exclusive`), as a change to a shorter password does.
 */
export async function disableTotp(
  ctx: ModuleContext,
  { authenticator }: TotpSettings,
  req: Request,
): Promise<Response> {
  const subject = currentUser(req)!;
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const perAccount = limit("totp-account", subject, TOTP_ATTEMPTS);
  const wait = await ctx.limiter.take([
    perAccount,
    limit("totp-address", ctx.clientAddress(req), TOTP_ATTEMPTS_PER_ADDRESS),
  ]);
  if (wait > 0) return tooManyRequests(req, wait);
  const user = await ctx.credentials.findById(subject);
  // The check and the removal run alone among the account's factor
  // changes in this process: a change to a password that needs a second
  // factor waits (see `ModuleContext.exclusive`).
  const off = await ctx.exclusive(subject, async () => {
    // The password (through the login throttle: a session must not buy
    // extra guesses) or a fresh re-authentication, then the code.
    const checked = await recheck(ctx, req, subject, body.fields.password);
    if (checked.kind === "throttled" || checked.kind === "reauthRequired") {
      return recheckRefusal(req, checked);
    }
    // NIST SP 800-63B-4: without a second factor the password is the only
    // one and needs 15 characters; a shorter one must be changed first.
    const sole = checked.kind === "ok"
      ? await soleFactorRefusal(ctx, {
        subject,
        method: "totp",
        password: body.fields.password || undefined,
      })
      : null;
    if (sole !== null) {
      return body.kind === "json"
        ? json({ error: "password_too_short", message: sole }, 409)
        : render(
          ctx,
          ctx.views.message({
            title: "Two-factor authentication is still on",
            message: sole,
            email: user?.email ?? null,
          }),
          409,
        );
    }
    return checked.kind === "ok" &&
      await authenticator.disable(subject, body.fields.code ?? "");
  });
  if (off instanceof Response) return off;
  if (!off) {
    const message = "The password or the code is incorrect";
    return body.kind === "json"
      ? json({ error: "invalid_credentials", message }, 401)
      : render(
        ctx,
        ctx.views.message({
          title: "Two-factor authentication is still on",
          message,
          email: user?.email ?? null,
        }),
        401,
      );
  }
  await ctx.limiter.reset([perAccount]);
  await record(ctx, "totp_disabled", subject, req);
  emit(ctx, { type: "totp_disabled", subject });
  if (body.kind === "json") return new Response(null, { status: 204 });
  return redirect("/account", [
    await ctx.flash.set({
      kind: "notice",
      message: "Two-factor authentication is off.",
    }),
  ]);
}
