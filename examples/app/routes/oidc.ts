/**
 * OpenID Connect sign-in: `GET /login/oidc/:provider` (to the provider),
 * `GET /login/oidc/:provider/callback` (back, every check, then the
 * account rule), `GET /login/oidc/:provider/reauth` (a signed-in user
 * confirms it is them, `oidc_reauth.ts`) and `POST /login/oidc/link`
 * (prove the password once to link a provider to an existing account).
 * Each sign-in ends in `signIn`, as the password flow does.
 *
 * @module
 */
import {
  currentUser,
  errorResponse,
  normalizeEmail,
  safeNextPath,
} from "@portcullis/auth";
import type { AppContext } from "../context.ts";
import { record, startSession, VERIFY_FIRST } from "../lifecycle.ts";
import { page, redirect } from "../respond.ts";
import { ShortCookie } from "../sign_in_cookie.ts";
import type { OidcMethod, OidcProviderMethod } from "../sign_in_methods.ts";
import type { Html } from "../views/html.ts";
import { secondFactorStep } from "./totp.ts";
import { finishReauth, startReauth } from "./oidc_reauth.ts";
import { hasPassword, NO_PASSWORD } from "../reauth.ts";
import {
  linkedProvidersSection,
  linkPage,
  providerLinks,
} from "../views/auth/oidc.ts";

const LINK_SECONDS = 600;

/** What a refused sign-in says, by reason. */
export const REFUSALS: Record<string, string> = {
  email_missing: "The provider did not share an email address.",
  email_unverified:
    "The provider has not verified the address it gave, so it neither creates nor signs in to an account by that address. Log in with your password and link the provider from your account page.",
  account_unverified: VERIFY_FIRST,
  linked_elsewhere: "That provider account is linked to another user.",
  totp_on:
    "An account with this email exists and has two-factor authentication on. Log in with your password and code, then link the provider from your account page.",
  no_password:
    "An account with this email exists and has no password to confirm the link with. Sign in the way you did before (your provider or a passkey), then link this provider from your account page.",
};

function stateCookie(ctx: AppContext): ShortCookie {
  return new ShortCookie("oidc", ctx.methods.cookieSecure);
}

/** The cookie of the "link after the password" value. */
export function linkCookie(ctx: AppContext): ShortCookie {
  return new ShortCookie("oidc-link", ctx.methods.cookieSecure);
}

/** A refused OIDC step: an error page or JSON. */
export function refused(
  req: Request,
  status: number,
  message: string,
): Response {
  return errorResponse(req, status, "oidc_refused", message);
}

/**
 * Runs `then` with the configured provider `id` names, or answers 404
 * (unknown provider, or OpenID Connect off).
 */
function withProvider(
  ctx: AppContext,
  req: Request,
  id: string,
  then: (oidc: OidcMethod, provider: OidcProviderMethod) => Promise<Response>,
): Promise<Response> | Response {
  const oidc = ctx.methods.oidc;
  const provider = oidc?.providers.find((p) => p.id === id);
  if (oidc === null || provider === undefined) {
    return errorResponse(req, 404, "not_found", "Nothing here");
  }
  return then(oidc, provider);
}

/** `GET /login/oidc/:provider?next=…`: to the provider. */
export function oidcStart(
  ctx: AppContext,
  req: Request,
  id: string,
): Promise<Response> | Response {
  return withProvider(ctx, req, id, (_, p) => start(ctx, req, p));
}

/** `GET /login/oidc/:provider/callback`: back from the provider. */
export function oidcCallback(
  ctx: AppContext,
  req: Request,
  id: string,
): Promise<Response> | Response {
  return withProvider(ctx, req, id, (o, p) => callback(ctx, req, o, p));
}

/** `GET /login/oidc/:provider/reauth?next=…`: "confirm it's you". */
export function oidcReauth(
  ctx: AppContext,
  req: Request,
  id: string,
): Promise<Response> | Response {
  return withProvider(ctx, req, id, (o, p) => startReauth(ctx, req, o, p));
}

/**
 * Sends the browser to the provider (303 with the state cookie), or 503
 * when its discovery document cannot be read.
 */
export async function start(
  ctx: AppContext,
  req: Request,
  provider: OidcProviderMethod,
  reauthenticate = false,
): Promise<Response> {
  const next = safeNextPath(new URL(req.url).searchParams.get("next"));
  let started;
  try {
    started = await provider.start(next, { reauthenticate });
  } catch {
    ctx.log(`oidc: provider "${provider.id}" is unreachable`);
    return errorResponse(
      req,
      503,
      "unavailable",
      "The sign-in provider is unreachable, try again shortly",
      { "retry-after": "5" },
    );
  }
  return redirect(started.authorizationUrl, [
    stateCookie(ctx).set(started.state, started.maxAge),
  ]);
}

async function callback(
  ctx: AppContext,
  req: Request,
  oidc: OidcMethod,
  provider: OidcProviderMethod,
): Promise<Response> {
  const url = new URL(req.url);
  const cookie = stateCookie(ctx);
  const outcome = await provider.finish(
    new URL(url.pathname + url.search, ctx.appOrigin).href,
    cookie.read(req),
  );
  const clear = cookie.clear();
  if (outcome.kind === "refused") {
    ctx.methods.emit({
      type: "login_failed",
      method: "oidc",
      reason: outcome.reason,
    });
    const res = refused(
      req,
      400,
      "The sign-in could not be completed. Start again from the login page.",
    );
    res.headers.append("set-cookie", clear);
    return res;
  }
  const { identity } = outcome;
  if (outcome.reauthenticated) {
    return await finishReauth(ctx, req, oidc, provider, outcome, clear);
  }
  let email: string | null = null;
  try {
    email = identity.email === null ? null : normalizeEmail(identity.email);
  } catch {
    email = null;
  }
  const linked = await oidc.identities.find(
    identity.provider,
    identity.subject,
  );
  const withEmail = email === null
    ? null
    : await ctx.credentials.findByEmail(email);
  const current = currentUser(req);
  const currentVerified = current !== null &&
    ((await ctx.credentials.findById(current))?.verifiedAt ?? 0) > 0;
  let decision = oidc.decide({
    identity: { ...identity, email },
    linkedSubject: linked?.subject ?? null,
    currentSubject: current,
    currentVerified,
    userWithEmail: withEmail?.id ?? null,
    userWithEmailVerified: (withEmail?.verifiedAt ?? 0) > 0,
  });
  if (
    decision.kind === "confirmLink" &&
    (await ctx.methods.totp?.isEnabled(decision.subject))
  ) decision = { kind: "refuse", reason: "totp_on" };
  if (decision.kind === "confirmLink") {
    // The link is confirmed with the account's password: without one,
    // the owner signs in as before and links from the account page.
    const owner = await ctx.credentials.findById(decision.subject);
    if (owner !== null && !hasPassword(owner)) {
      decision = { kind: "refuse", reason: "no_password" };
    }
  }

  const record = (subject: string) => ({
    provider: identity.provider,
    providerSubject: identity.subject,
    subject,
    email: email ?? "",
    createdAt: ctx.now(),
  });
  switch (decision.kind) {
    case "signIn":
      return await finishSignIn(
        ctx,
        req,
        decision.subject,
        outcome.next,
        clear,
      );
    case "link": {
      // Signed in: the user confirms with a same-origin POST, so a page
      // elsewhere that sends the browser through a provider cannot link an
      // identity to the account unseen.
      const value = await oidc.linkSigner.sign(new TextEncoder().encode(
        JSON.stringify({
          ...record(decision.subject),
          next: "/account",
          m: "session",
          e: Math.floor(ctx.now() / 1000) + LINK_SECONDS,
        }),
      ));
      const owner = await ctx.credentials.findById(decision.subject);
      return page(
        linkPage({
          provider: provider.name,
          email: email ?? "",
          error: null,
          signedIn: true,
          // The POST re-checks: the password, or a fresh re-authentication.
          askPassword: owner !== null && hasPassword(owner) &&
            !(await ctx.reauth.isFresh(req)),
        }),
        200,
        [clear, linkCookie(ctx).set(value, LINK_SECONDS)],
      );
    }
    case "create": {
      const id = randomId();
      const created = await ctx.credentials.create({
        id,
        email: decision.email,
        // No password: this marker is no hash any hasher accepts.
        passwordHash: NO_PASSWORD,
        createdAt: ctx.now(),
      });
      if (created.kind === "emailTaken") {
        return refused(
          req,
          409,
          "That email was registered meanwhile: start again",
        );
      }
      if (identity.emailVerified) {
        await ctx.credentials.markVerified(id, decision.email, ctx.now());
      }
      await oidc.identities.link(record(id));
      ctx.methods.emit({ type: "user_created", subject: id, method: "oidc" });
      return await finishSignIn(ctx, req, id, outcome.next, clear);
    }
    case "confirmLink": {
      const value = await oidc.linkSigner.sign(new TextEncoder().encode(
        JSON.stringify({
          ...record(decision.subject),
          next: outcome.next,
          e: Math.floor(ctx.now() / 1000) + LINK_SECONDS,
        }),
      ));
      return page(
        linkPage({ provider: provider.name, email: email ?? "", error: null }),
        200,
        [clear, linkCookie(ctx).set(value, LINK_SECONDS)],
      );
    }
    case "refuse": {
      ctx.methods.emit({
        type: "login_failed",
        method: "oidc",
        reason: decision.reason,
      });
      const res = refused(
        req,
        403,
        REFUSALS[decision.reason] ?? "Sign-in refused",
      );
      res.headers.append("set-cookie", clear);
      return res;
    }
  }
}

/** Signs in after a provider (through the TOTP step when it is on). */
export async function finishSignIn(
  ctx: AppContext,
  req: Request,
  subject: string,
  next: string,
  clear: string,
): Promise<Response> {
  // A user who turned TOTP on gives a code after the provider too.
  const second = await secondFactorStep(ctx, subject, safeNextPath(next), true);
  if (second !== null) {
    second.headers.append("set-cookie", clear);
    return second;
  }
  // As POST /login: the session is listed and the login recorded.
  const session = await startSession(ctx, req, subject);
  await record(ctx, "login", subject, req);
  ctx.methods.emit({ type: "login", method: "oidc", subject });
  return redirect(safeNextPath(next), [session.setCookie, clear]);
}

/** The login page's provider links (empty when OIDC is off). */
export function oidcLoginLinks(ctx: AppContext, next: string): Html | null {
  const oidc = ctx.methods.oidc;
  return oidc === null ? null : providerLinks(oidc.providers, next);
}

/** The account page's providers section, or `null` when OIDC is off. */
export async function oidcAccountSection(
  ctx: AppContext,
  subject: string,
): Promise<Html | null> {
  const oidc = ctx.methods.oidc;
  if (oidc === null) return null;
  return linkedProvidersSection({
    providers: oidc.providers,
    linked: await oidc.identities.listFor(subject),
  });
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(
    /\//g,
    "_",
  ).replace(/=+$/, "");
}
