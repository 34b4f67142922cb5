/**
 * The HTML pages: `GET /`, `/login`, `/register`, `/account`.
 *
 * @module
 */
import { currentUser, safeNextPath } from "@portcullis/auth";
import type { AppContext } from "../context.ts";
import { page } from "../respond.ts";
import { accountPage } from "../views/auth/account.ts";
import { homePage } from "../views/auth/home.ts";
import { loginPage } from "../views/auth/login.ts";
import { registerPage } from "../views/auth/register.ts";
import { accountSections } from "../views/auth/account_sections.ts";
import { activityViews, sessionViews } from "./sessions.ts";
import { totpAccountSection } from "./totp.ts";
import { oidcAccountSection, oidcLoginLinks } from "./oidc.ts";
import { passkeysAccountSection, passkeysLoginButton } from "./passkeys.ts";
import { type Html, html } from "../views/html.ts";
import { reauthSection } from "../views/auth/reauth.ts";
import { hasPassword } from "../reauth.ts";

/**
 * The signed-in user's email and verification state, or `null`.
 *
 * @param ctx The app.
 * @param req The request, after `identityMiddleware`.
 * @returns The user, or `null` when anonymous (or the account is gone).
 */
export async function signedInUser(
  ctx: AppContext,
  req: Request,
): Promise<
  | { subject: string; email: string; verified: boolean; password: boolean }
  | null
> {
  const subject = currentUser(req);
  if (subject === null) return null;
  const user = await ctx.credentials.findById(subject);
  if (user === null) return null;
  return {
    subject,
    email: user.email,
    verified: user.verifiedAt > 0,
    password: hasPassword(user),
  };
}

/** `GET /`. */
export async function home(ctx: AppContext, req: Request): Promise<Response> {
  const { flash, clear } = await ctx.flash.take(req);
  const user = await signedInUser(ctx, req);
  // "Welcome back" only for someone who signed in before, not for an
  // account that registration just created.
  const returning = user !== null &&
    (await ctx.eventStore.list(user.subject, 50).catch(() => []))
      .some((e) => e.type === "login");
  return page(homePage({ user, flash, returning }), 200, [clear]);
}

/** `GET /login`. */
export async function loginForm(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  const { flash, clear } = await ctx.flash.take(req);
  const next = safeNextPath(new URL(req.url).searchParams.get("next"));
  return page(
    loginPage({
      next,
      error: null,
      flash,
      extra: html`${passkeysLoginButton(ctx, next)}${
        oidcLoginLinks(ctx, next)
      }`,
    }),
    200,
    [clear],
  );
}

/** `GET /register`. */
export function registerForm(): Response {
  return page(registerPage({ email: "", error: null }));
}

/** `GET /account` (behind `requireAuth()`). */
export async function account(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  const user = await signedInUser(ctx, req);
  if (user === null) return page("Account not found", 404);
  const { flash, clear } = await ctx.flash.take(req);
  const passwordless = !user.password;
  const sections = accountSections({
    sessions: await sessionViews(ctx, req),
    activity: await activityViews(ctx, user.subject),
    passwordless,
  });
  return page(
    accountPage({
      email: user.email,
      verified: user.verified,
      passwordless,
      flash,
      sections: html`${
        passwordless ? await reauthView(ctx, req, user.subject) : null
      }${await totpAccountSection(
        ctx,
        user.subject,
        passwordless,
      )}${await oidcAccountSection(
        ctx,
        user.subject,
      )}${await passkeysAccountSection(
        ctx,
        user.subject,
        passwordless,
      )}${sections}`,
    }),
    200,
    [clear],
  );
}

/** The "Confirm it's you" section: the linked providers and passkeys. */
async function reauthView(
  ctx: AppContext,
  req: Request,
  subject: string,
): Promise<Html> {
  const oidc = ctx.methods.oidc;
  const linked = oidc === null ? [] : await oidc.identities.listFor(subject);
  const providers = oidc === null
    ? []
    : oidc.providers.filter((p) => linked.some((l) => l.provider === p.id));
  const passkeys = ctx.methods.passkeys !== null &&
    (await ctx.methods.passkeys.list(subject)).length > 0;
  return reauthSection({
    fresh: await ctx.reauth.isFresh(req),
    providers,
    passkeys,
  });
}
