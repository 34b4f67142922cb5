/**
 * `POST /login/oidc/link`: links a provider's identity to an account, after
 * that account's password (an existing account whose email the provider
 * verified) or a same-origin confirmation (the signed-in user).
 *
 * @module
 */
import { currentUser, errorResponse } from "@portcullis/auth";
import type { AppContext } from "../context.ts";
import { readBody } from "../request_body.ts";
import { page, redirect, tooManyRequests } from "../respond.ts";
import { linkPage } from "../views/auth/oidc.ts";
import { finishSignIn, linkCookie, REFUSALS, refused } from "./oidc.ts";

/**
 * `POST /login/oidc/link`: the password of the account the provider's
 * verified email names; right → link, sign in; wrong → 401. Counted per
 * account and per address, like logins.
 */
export async function confirmLink(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  const oidc = ctx.methods.oidc;
  if (oidc === null) {
    return errorResponse(req, 404, "not_found", "Nothing here");
  }
  const body = await readBody(req);
  if (body === null) {
    return errorResponse(req, 400, "bad_request", "Unreadable request body");
  }
  const cookie = linkCookie(ctx);
  const value = cookie.read(req);
  const payload = value === null ? null : await oidc.linkSigner.verify(value);
  let pending: {
    provider: string;
    providerSubject: string;
    subject: string;
    email: string;
    next: string;
    m?: string;
    e: number;
  } | null = null;
  try {
    pending = payload === null
      ? null
      : JSON.parse(new TextDecoder().decode(payload));
  } catch {
    pending = null;
  }
  if (
    pending === null || typeof pending.e !== "number" ||
    pending.e * 1000 <= ctx.now()
  ) {
    return refused(
      req,
      400,
      "The link request expired. Start again from the login page.",
    );
  }
  if (pending.m === "session") {
    // Linking to the signed-in account: no password, the same user only.
    if (currentUser(req) !== pending.subject) {
      return refused(
        req,
        400,
        "Sign in again and link from your account page.",
      );
    }
    const { next: _n, e: _e, m: _m, ...linked } = pending;
    if (!(await oidc.identities.link({ ...linked, createdAt: ctx.now() }))) {
      return refused(req, 409, REFUSALS.linked_elsewhere);
    }
    ctx.methods.emit({
      type: "identity_linked",
      subject: linked.subject,
      provider: linked.provider,
    });
    const name = oidc.providers.find((p) => p.id === linked.provider)?.name ??
      linked.provider;
    return redirect("/account", [
      cookie.clear(),
      await ctx.flash.set({
        kind: "notice",
        message: `${name} is linked to your account.`,
      }),
    ]);
  }
  const user = await ctx.credentials.findById(pending.subject);
  // Through the login throttle, as at POST /login.
  const result = user === null
    ? null
    : await ctx.passwords.login(user.email, body.fields.password ?? "", {
      address: ctx.clientAddress(req),
    });
  if (result?.kind === "throttled") {
    return tooManyRequests(req, result.retryAfterSeconds);
  }
  const ok = result?.kind === "ok" && result.subject === pending.subject;
  const name = oidc.providers.find((p) => p.id === pending!.provider)?.name ??
    pending.provider;
  if (!ok) {
    return page(
      linkPage({
        provider: name,
        email: pending.email,
        error: "The password is incorrect",
      }),
      401,
    );
  }
  const { next, e: _e, m: _m, ...record } = pending;
  if (!(await oidc.identities.link({ ...record, createdAt: ctx.now() }))) {
    return refused(req, 409, REFUSALS.linked_elsewhere);
  }
  ctx.methods.emit({
    type: "identity_linked",
    subject: record.subject,
    provider: record.provider,
  });
  return await finishSignIn(ctx, req, record.subject, next, cookie.clear());
}
