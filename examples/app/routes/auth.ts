/**
 * Registration, login, logout and password change: forms and JSON on the
 * same routes.
 *
 * @module
 */
import {
  AuthError,
  currentIdentity,
  errorResponse,
  requireAuthenticated,
  safeNextPath,
  signIn,
  signOut,
} from "@portcullis/auth";
import { type AppContext, limit } from "../context.ts";
import { readBody } from "../request_body.ts";
import { json, page, redirect, tooManyRequests } from "../respond.ts";
import { accountPage } from "../views/auth/account.ts";
import { loginPage } from "../views/auth/login.ts";
import { registerPage } from "../views/auth/register.ts";
// [verification] begin
import { sendVerificationLink } from "./verify.ts";
// [verification] end

const INVALID_CREDENTIALS = "Email or password is incorrect";

/** `POST /register`: form → 303 to `/`; JSON → 201 `{subject, token}`. */
export async function register(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  const body = await readBody(req);
  if (body === null) {
    return errorResponse(req, 400, "bad_request", "Unreadable request body");
  }
  const form = body.kind === "form";
  const email = body.fields.email ?? "";
  const password = body.fields.password ?? "";
  const refuse = (status: number, code: string, message: string) =>
    form
      ? page(registerPage({ email, error: message }), status)
      : json({ error: code, message }, status);

  const perAddress = [
    limit(
      "register-address",
      ctx.clientAddress(req),
      ctx.limits.registerPerAddress,
    ),
  ];
  const wait = await ctx.limiter.blocked(perAddress);
  if (wait > 0) return tooManyRequests(req, wait);
  await ctx.limiter.hit(perAddress);

  let result;
  try {
    result = await ctx.passwords.register(email, password);
  } catch (error) {
    if (
      error instanceof AuthError &&
      (error.code === "INVALID_EMAIL" || error.code === "INVALID_PASSWORD")
    ) {
      const message = error.code === "INVALID_EMAIL"
        ? "Enter a valid email address"
        : "Passwords need at least 8 characters";
      return refuse(422, error.code.toLowerCase(), message);
    }
    throw error;
  }
  if (result.kind === "emailTaken") {
    return refuse(409, "email_taken", "That email is already registered");
  }
  const session = await signIn(req, result.subject);
  const welcome = ["Your account is ready."];
  // [verification] begin
  const user = await ctx.credentials.findById(result.subject);
  if (user !== null) {
    welcome.push(
      await sendVerificationLink(ctx, user.id, user.email)
        ? "Check your inbox for a link to verify your email address."
        : "The verification email could not be sent: ask for a new one from your account page.",
    );
  }
  // [verification] end
  if (form) {
    return redirect("/", [
      session.setCookie,
      await ctx.flash.set({ kind: "notice", message: welcome.join(" ") }),
    ]);
  }
  return json({ subject: result.subject, token: session.token }, 201);
}

/**
 * `POST /login`: form → 303 to `next` (or `/`); JSON → 200
 * `{token, expiresAt}`. An unknown email and a wrong password get the same
 * answer; repeated failures per email or per address get 429.
 */
export async function login(ctx: AppContext, req: Request): Promise<Response> {
  const body = await readBody(req);
  if (body === null) {
    return errorResponse(req, 400, "bad_request", "Unreadable request body");
  }
  const form = body.kind === "form";
  const email = body.fields.email ?? "";
  const password = body.fields.password ?? "";
  const next = safeNextPath(body.fields.next);
  const limits = [
    limit("login-email", email.trim().toLowerCase(), ctx.limits.loginPerEmail),
    limit("login-address", ctx.clientAddress(req), ctx.limits.loginPerAddress),
  ];
  const wait = await ctx.limiter.blocked(limits);
  if (wait > 0) return tooManyRequests(req, wait);

  const subject = await ctx.passwords.authenticate(email, password);
  if (subject === null) {
    await ctx.limiter.hit(limits);
    return form
      ? page(loginPage({ next, error: INVALID_CREDENTIALS, flash: null }), 401)
      : json(
        { error: "invalid_credentials", message: INVALID_CREDENTIALS },
        401,
      );
  }
  await ctx.limiter.reset([limits[0]]);
  const session = await signIn(req, subject);
  if (form) return redirect(next, [session.setCookie]);
  return json({ token: session.token, expiresAt: session.expiresAt });
}

/**
 * `POST /logout`: revokes the session's jti. Bearer → 204; form or cookie →
 * 303 to `/login` with the clearing cookie.
 */
export async function logout(ctx: AppContext, req: Request): Promise<Response> {
  const bearer = req.headers.has("authorization");
  if (bearer) {
    const denied = requireAuthenticated(req);
    if (denied) return denied;
  }
  const { clearCookie } = await signOut(req);
  if (bearer) return new Response(null, { status: 204 });
  return redirect("/login", [
    clearCookie,
    await ctx.flash.set({ kind: "notice", message: "You are signed out." }),
  ]);
}

/**
 * `POST /account/password`: checks the current password, sets the new one,
 * signs the user out everywhere (`revokeAll`) and signs this browser in
 * again with a new session.
 */
export async function changePassword(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  const denied = requireAuthenticated(req);
  if (denied) return denied;
  const subject = currentIdentity(req)!.subject;
  const body = await readBody(req);
  if (body === null) {
    return errorResponse(req, 400, "bad_request", "Unreadable request body");
  }
  const form = body.kind === "form";
  const refuse = async (status: number, code: string, message: string) => {
    if (!form) return json({ error: code, message }, status);
    const user = await ctx.credentials.findById(subject);
    return page(
      accountPage({
        email: user?.email ?? "",
        verified: (user?.verifiedAt ?? 0) > 0,
        flash: null,
        error: message,
      }),
      status,
    );
  };
  let changed: boolean;
  try {
    changed = await ctx.passwords.changePasswordWithCurrent(subject, {
      currentPassword: body.fields.currentPassword ?? "",
      newPassword: body.fields.newPassword ?? "",
    });
  } catch (error) {
    if (error instanceof AuthError && error.code === "INVALID_PASSWORD") {
      return refuse(
        422,
        "invalid_password",
        "Passwords need at least 8 characters",
      );
    }
    throw error;
  }
  if (!changed) {
    return refuse(
      401,
      "invalid_credentials",
      "The current password is incorrect",
    );
  }
  await ctx.sessions.revokeAll(subject);
  const session = await signIn(req, subject);
  if (!form) {
    return json({ token: session.token, expiresAt: session.expiresAt });
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
