/**
 * Registration, login and password change with a password: forms and JSON
 * on the same routes.
 *
 * @module
 */
import { AuthError, currentUser, safeNextPath } from "@portcullis/auth";
import type { RegisterRejectionReason } from "@portcullis/auth/passwords";
import { limit, type ModuleContext } from "../context.ts";
import { bodyOrBadRequest } from "../request_body.ts";
import {
  afterRegister,
  cancelEmailChanges,
  record,
  sessionJson,
  startSession,
  stepAfterPassword,
  subjectOfEmail,
} from "../lifecycle.ts";
import { json, redirect, render, tooManyRequests } from "../respond.ts";
import { accountPageWithError, loginAutofill, loginButtons } from "../pages.ts";
import { hasPassword } from "../reauth.ts";
import { recheckStreak } from "../recheck.ts";
import { passwordAdvice } from "./password_advice.ts";
import {
  passwordLogin,
  throttleAccount,
  trustThisDevice,
} from "../password_login.ts";
import {
  HASHING_BUSY_MESSAGE as HASHING_BUSY,
  HashingBusyError,
} from "../hashing_gate.ts";

const INVALID_CREDENTIALS = "Email or password is incorrect";
/**
 * The login's 30-day hard stop, worded for anyone: the same answer comes
 * for a registered and an unknown email, so it never says the account
 * exists.
 */
const LOGIN_PAUSED =
  "Too many failed sign-ins with this email address: signing in with its password is paused. If an account uses this address, resetting its password opens it again at once";
const TOO_MANY = "Too many attempts, try again later";
/** The 503 of the password-hashing bound (`hashing` of `accounts()`). */
const NO_PASSWORD_YET =
  "This account has no password yet: ask for a link to set one on your account page";

/** `POST /register`: form → 303 to `/`; JSON → 201 `{subject, token}`. */
export async function register(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const form = body.kind === "form";
  const email = body.fields.email ?? "";
  const password = body.fields.password ?? "";
  const minPasswordLength = ctx.passwords.minPasswordLength();
  const refuse = (status: number, code: string, message: string) =>
    form
      ? render(
        ctx,
        ctx.views.register({ email, error: message, minPasswordLength }),
        status,
      )
      : json({ error: code, message }, status);

  const perAddress = [
    limit(
      "register-address",
      ctx.clientAddress(req),
      ctx.limits.registerPerAddress,
    ),
  ];
  const wait = await ctx.limiter.take(perAddress);
  if (wait > 0) return tooManyRequests(req, wait);

  // One slow hash: within the app's bound on hashing, or 503.
  let result: Awaited<ReturnType<typeof ctx.passwords.register>>;
  try {
    result = await ctx.passwords.register(email, password);
  } catch (error) {
    if (!(error instanceof HashingBusyError)) throw error;
    const res = refuse(503, "busy", HASHING_BUSY);
    res.headers.set("retry-after", String(error.retryAfterSeconds));
    return res;
  }
  if (result.kind === "rejected") {
    return refuse(
      422,
      result.reason === "emailInvalid" ? "invalid_email" : "invalid_password",
      advice(result.reason, minPasswordLength),
    );
  }
  if (result.kind === "emailTaken") {
    return refuse(409, "email_taken", "That email is already registered");
  }
  const session = await startSession(ctx, req, result.subject);
  await record(ctx, "registered", result.subject, req);
  // The address had no account until now, so the failures typed against
  // it were no guesses at this account's password: a stranger could have
  // stopped its password sign-in for 30 days ahead of its owner. The stop
  // is lifted, and the browser that set the password is trusted (its token
  // is forgotten, like every other, when the address is first proven).
  // Best effort: the browser below is trusted whatever is left.
  await ctx.throttle.clearAccount(throttleAccount(email)).catch(() => {});
  const device = await trustThisDevice(ctx, req, email);
  const welcome = [
    "Your account is ready.",
    ...await afterRegister(ctx, result.subject),
  ];
  if (form) {
    return redirect("/", [
      session.setCookie,
      ...(device === null ? [] : [device]),
      await ctx.flash.set({ kind: "notice", message: welcome.join(" ") }),
    ]);
  }
  const res = sessionJson(session, { subject: result.subject }, 201);
  if (device !== null) res.headers.append("set-cookie", device);
  return res;
}

/**
 * `POST /login`: form → 303 to `next` (or `/`); JSON → 200
 * `{token, expiresAt}`. An unknown email and a wrong password get the same
 * answer (401). The library's `LoginThrottle` counts each attempt before
 * the password is hashed, per address, per (account, address) and per
 * account (as `normalizeEmail` spells it, so every Unicode spelling shares
 * one counter): consecutive failures give growing delays and, at 100, a
 * hard stop. A throttled attempt answers 429 with `Retry-After`, the same
 * for a registered and an unknown email (a documented deviation from
 * SECURITY item 45's "identical to a wrong password": a held owner is told
 * to wait instead of being told their right password is wrong). A success
 * resets the counts. A sign-in completed from a form also sets the device
 * cookie (`password_login.ts`): that browser's later attempts on the account are
 * exempt from its lockout, so a stranger's flood never locks the owner out.
 * With a second factor owed, the password alone sets no device cookie: the
 * second step sets it once it passes.
 * A login whose password changed while it was being checked answers as a
 * wrong password (`signIn` re-checks it).
 */
export async function login(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const form = body.kind === "form";
  const email = body.fields.email ?? "";
  const password = body.fields.password ?? "";
  const next = safeNextPath(body.fields.next);
  // A refused form shows the login page again: the email as typed and
  // every way to sign in (the passkey, a sign-in link, the providers).
  const loginAgain = (error: string, status: number) =>
    render(
      ctx,
      ctx.views.login({
        next,
        error,
        flash: null,
        email,
        extra: loginButtons(ctx, next),
        autofill: loginAutofill(ctx),
      }),
      status,
    );
  const result = await passwordLogin(ctx, req, email, password);
  if (result.kind === "busy") {
    // Hashing is at its bound: the password was not checked.
    const headers = { "retry-after": String(result.retryAfterSeconds) };
    if (form) {
      const res = loginAgain(HASHING_BUSY, 503);
      res.headers.set("retry-after", headers["retry-after"]);
      return res;
    }
    return json({ error: "busy", message: HASHING_BUSY }, 503, headers);
  }
  if (result.kind === "throttled") {
    await record(ctx, "throttled", await subjectOfEmail(ctx, email), req);
    const message = result.reason === "hardStop" ? LOGIN_PAUSED : TOO_MANY;
    const retryAfter = String(Math.max(1, Math.ceil(result.retryAfterSeconds)));
    if (form) {
      const res = loginAgain(message, 429);
      res.headers.set("retry-after", retryAfter);
      return res;
    }
    return json({ error: "rate_limited", message }, 429, {
      "retry-after": retryAfter,
    });
  }
  // A password changed while it was checked falls through to the refusal.
  const current = result.kind === "ok" && await result.stillCurrent();
  if (result.kind === "ok" && current) {
    // With TOTP on, the password alone issues no session, and the browser
    // is not trusted yet: the TOTP step does that once it passes.
    const secondFactor = await stepAfterPassword(
      ctx,
      req,
      result.subject,
      next,
      form,
    );
    if (secondFactor !== null) return secondFactor;
  }
  const session = result.kind === "ok"
    ? await startSession(ctx, req, result)
    : null;
  if (session === null) {
    await record(ctx, "login_failed", await subjectOfEmail(ctx, email), req);
    return form ? loginAgain(INVALID_CREDENTIALS, 401) : json(
      { error: "invalid_credentials", message: INVALID_CREDENTIALS },
      401,
    );
  }
  await record(ctx, "login", session.identity.subject, req);
  // A password set before the rule of NIST SP 800-63B-4 (15 characters as
  // the only factor) keeps working; its owner is asked to lengthen it.
  const advice = await lengthenAdvice(ctx, session.identity.subject, password);
  // The sign-in is complete: a browser's form is trusted for the account
  // from now (an API client keeps its cookie-free answer).
  if (form) {
    const device = await trustThisDevice(ctx, req, email);
    const notice = advice === null
      ? []
      : [await ctx.flash.set({ kind: "notice", message: advice })];
    return redirect(next, [session.setCookie, device, ...notice]);
  }
  return sessionJson(session, advice === null ? {} : { notice: advice });
}

/**
 * The notice for a password shorter than the account's rule asks today
 * (set under an older rule, or before the account's last second factor
 * went), or `null`.
 */
async function lengthenAdvice(
  ctx: ModuleContext,
  subject: string,
  password: string,
): Promise<string | null> {
  const length = [...password].length;
  // Most passwords meet the stricter rule: no question to the modules.
  if (length >= ctx.passwords.minPasswordLength()) return null;
  const secondFactor = await ctx.lifecycle.hasSecondFactor(subject);
  const min = ctx.passwords.minPasswordLength({ secondFactor });
  if (length >= min) return null;
  return `Your password is shorter than ${min} characters, the length we now ask for: please choose a longer one under Security on your account page`;
}

/**
 * `POST /account/password`: checks the current password, signs the user
 * out everywhere and sets the new one (the authenticator revokes before it
 * writes and again after, so a store that fails midway leaves the old
 * password and no session it should have ended), and signs this browser in
 * again with a new session. Each check of the current password is counted
 * per account and per address before it is hashed (someone holding a
 * session must not get unlimited guesses); past a limit the answer is 429.
 * A successful change resets the account's counter. An account without a
 * password gets 409 `no_password`: it sets its first one through a mailed
 * link (`POST /account/password/link`).
 */
export async function changePassword(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const subject = currentUser(req)!;
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const form = body.kind === "form";
  const user = await ctx.credentials.findById(subject);
  const refuse = (status: number, code: string, message: string) => {
    if (!form) return json({ error: code, message }, status);
    return accountPageWithError(ctx, subject, message, status);
  };
  if (user !== null && !hasPassword(user)) {
    // Nothing to change: the first password comes through a mailed link
    // (POST /account/password/link), never from a session alone.
    return refuse(409, "no_password", NO_PASSWORD_YET);
  }
  // The owner's check of the current password takes its slot in the
  // hashing bound's trusted lane under the account (the re-check's and the
  // sign-in's key), before any limit counts it: refused (the account has a
  // check running or waiting, or the queue is full), it answers 503 and
  // counts nothing.
  const release = await ctx.hashing.acquire(
    true,
    user === null ? `subject:${subject}` : throttleAccount(user.email),
  );
  if (release === null) throw new HashingBusyError();
  const perAccount = limit(
    "password-change-account",
    subject,
    ctx.limits.passwordChangePerAccount,
  );
  let changed = false;
  let secondFactor = false;
  let undone = false;
  const newPassword = body.fields.newPassword ?? "";
  try {
    const wait = await ctx.limiter.take([
      perAccount,
      limit(
        "password-change-address",
        ctx.clientAddress(req),
        ctx.limits.passwordChangePerAddress,
      ),
    ]);
    if (wait > 0) return tooManyRequests(req, wait);
    // At most 100 wrong current passwords in a row (NIST SP 800-63B-4
    // §3.2.2), shared with the re-check; a new password starts it afresh.
    if (user !== null) {
      const stop = await ctx.limiter.take([
        await recheckStreak(ctx, subject, user.passwordHash),
      ]);
      if (stop > 0) return tooManyRequests(req, stop);
    }
    // NIST SP 800-63B-4: 15 characters when the password is the account's
    // only factor, 8 with a second factor (a module answers that). The
    // check and the write run alone among the account's factor changes
    // in this process (the removal of a last second factor takes the same
    // section), and a password that needs the second factor looks again
    // after its write: one removed meanwhile by another process undoes
    // the change.
    await ctx.exclusive(subject, async () => {
      secondFactor = await ctx.lifecycle.hasSecondFactor(subject);
      changed = await ctx.passwords.changePasswordWithCurrent(subject, {
        currentPassword: body.fields.currentPassword ?? "",
        newPassword,
        secondFactor,
      }, { slotTaken: true });
      const soleMin = ctx.passwords.minPasswordLength({ secondFactor: false });
      if (
        changed && user !== null && [...newPassword].length < soleMin &&
        !(await ctx.lifecycle.hasSecondFactor(subject))
      ) {
        const written = await ctx.credentials.findById(subject);
        if (written !== null) {
          await ctx.credentials.updatePasswordHash(
            subject,
            user.passwordHash,
            written.passwordHash,
          );
        }
        undone = true;
      }
    });
  } catch (error) {
    if (error instanceof AuthError && error.code === "INVALID_PASSWORD") {
      return refuse(
        422,
        "invalid_password",
        advice(
          error.reason as RegisterRejectionReason | undefined,
          ctx.passwords.minPasswordLength({ secondFactor }),
        ),
      );
    }
    throw error;
  } finally {
    release();
  }
  if (undone) {
    // The sessions were signed out with the write: the old password stays.
    return refuse(
      422,
      "invalid_password",
      `Your last second factor was removed meanwhile, so your password must have at least ${
        ctx.passwords.minPasswordLength({ secondFactor: false })
      } characters: it is unchanged, and every session is signed out`,
    );
  }
  if (!changed) {
    return refuse(
      401,
      "invalid_credentials",
      "The current password is incorrect",
    );
  }
  await cancelEmailChanges(ctx, subject);
  // Best effort: the change is made; a count left behind only delays.
  await ctx.limiter.reset([perAccount]).catch((error) =>
    ctx.log(`password change: limiter reset failed: ${error?.message}`)
  );
  await ctx.registry.clear(subject).catch(() => {});
  const session = await startSession(ctx, req, subject);
  await record(ctx, "password_changed", subject, req);
  // A token client takes its new token from the body; a cookie session (a
  // form or a JSON post alike) gets the new cookie, never the token in a
  // body, which a page's script could read.
  if (req.headers.has("authorization")) {
    return sessionJson(session);
  }
  return redirect("/account", [
    session.setCookie,
    await ctx.flash.set({
      kind: "notice",
      message:
        "Your password is changed and every other session is signed out.",
    }),
  ]);
}

/** What to tell a user whose email or new password was refused. */
function advice(
  reason: RegisterRejectionReason | undefined,
  minPasswordLength: number,
): string {
  return reason === "emailInvalid"
    ? "Enter a valid email address"
    : passwordAdvice(reason, minPasswordLength);
}
