/**
 * `POST /login/oidc/link`: links a provider's identity to an account, after
 * that account's password (an existing account whose email the provider
 * verified) or, for the signed-in user, a same-origin confirmation with the
 * re-check (the password, or a fresh re-authentication).
 *
 * @module
 */
import { currentUser } from "@portcullis/auth";
import {
  bodyOrBadRequest,
  emit,
  hasPassword,
  type ModuleContext,
  passwordCheckLimits,
  REAUTH_REQUIRED,
  recheck,
  recheckRefusal,
  redirect,
  render,
  tooManyRequests,
  WRONG_PASSWORD,
} from "@portcullis/accounts/plugin";
import { finishSignIn } from "./routes.ts";
import {
  linkCookie,
  type OidcSettings,
  REFUSALS,
  refused,
} from "./provider_flow.ts";

/** What the signed "link after the password" value holds. */
interface LinkValue {
  provider: string;
  providerSubject: string;
  subject: string;
  email: string;
  next: string;
  /** `session`: made for the signed-in user (no password step). */
  m?: string;
  /** Unix seconds of expiry. */
  e: number;
}

/**
 * `POST /login/oidc/link`: the password of the account the provider's
 * verified email names; right → link, sign in; wrong → 401; an account
 * without a password → 403. Counted per account and per address, like
 * logins. Signed in (the link value made for this session's user): the
 * re-check, then link and 303 to `/account`; wrong password 401, no
 * password and no re-authentication 403.
 */
export async function confirmLink(
  ctx: ModuleContext,
  oidc: OidcSettings,
  req: Request,
): Promise<Response> {
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const cookie = linkCookie(ctx);
  const value = cookie.read(req);
  const payload = value === null ? null : await oidc.linkSigner.verify(value);
  let pending: LinkValue | null = null;
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
  // Checked again at the link itself: an unverified account gains no
  // provider (its address may belong to someone else).
  const target = await ctx.credentials.findById(pending.subject);
  if ((target?.verifiedAt ?? 0) === 0) {
    return refused(req, 403, REFUSALS.account_unverified);
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
    // A session alone must not link an identity: it would sign in as the
    // user later and pass the re-check itself.
    const checked = await recheck(
      ctx,
      req,
      pending.subject,
      body.fields.password,
      passwordCheckLimits(ctx, req, pending.subject),
    );
    if (checked.kind === "throttled") return recheckRefusal(req, checked);
    if (checked.kind !== "ok") {
      const name = providerName(oidc, pending.provider);
      if (body.kind !== "form") return recheckRefusal(req, checked);
      return render(
        ctx,
        oidc.views.link({
          provider: name,
          email: pending.email,
          error: checked.kind === "reauthRequired"
            ? REAUTH_REQUIRED
            : WRONG_PASSWORD,
          signedIn: true,
          askPassword: checked.kind === "wrongPassword",
        }),
        checked.kind === "reauthRequired" ? 403 : 401,
      );
    }
    const taken = await link(ctx, req, oidc, pending);
    if (taken) return taken;
    const name = providerName(oidc, pending.provider);
    return redirect("/account", [
      cookie.clear(),
      await ctx.flash.set({
        kind: "notice",
        message: `${name} is linked to your account.`,
      }),
    ]);
  }
  const user = await ctx.credentials.findById(pending.subject);
  if (user !== null && !hasPassword(user)) {
    return refused(req, 403, REFUSALS.no_password);
  }
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
  const name = providerName(oidc, pending.provider);
  if (!ok) {
    return render(
      ctx,
      oidc.views.link({
        provider: name,
        email: pending.email,
        error: "The password is incorrect",
      }),
      401,
    );
  }
  const taken = await link(ctx, req, oidc, pending);
  if (taken) return taken;
  return await finishSignIn(
    ctx,
    req,
    pending.subject,
    pending.next,
    cookie.clear(),
  );
}

/** Links the identity the value names: `null`, or 409 when it is another user's. */
async function link(
  ctx: ModuleContext,
  req: Request,
  oidc: OidcSettings,
  pending: LinkValue,
): Promise<Response | null> {
  const { next: _n, e: _e, m: _m, ...record } = pending;
  if (!(await oidc.identities.link({ ...record, createdAt: ctx.now() }))) {
    return refused(req, 409, REFUSALS.linked_elsewhere);
  }
  emit(ctx, {
    type: "identity_linked",
    subject: record.subject,
    provider: record.provider,
  });
  return null;
}

function providerName(oidc: OidcSettings, id: string): string {
  return oidc.providers.find((p) => p.id === id)?.name ?? id;
}
