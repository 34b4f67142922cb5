/**
 * What every step with an OpenID Provider shares: the module's settings,
 * the short-lived cookies of the state and of the "link after the
 * password" value, the refusals, and the start of the redirect to the
 * provider (a sign-in and a re-authentication alike).
 *
 * @module
 */
import { errorResponse, safeNextPath } from "@portcullis/auth";
import type { SQLIdentityStore } from "@portcullis/sql";
import {
  type ModuleContext,
  type PurposeSigner,
  redirect,
  ShortCookie,
  VERIFY_FIRST,
} from "@portcullis/accounts/plugin";
import type { OidcClient } from "../mod.ts";
import type { OidcViews } from "./views.ts";

/** One OpenID Provider: its id (in URLs), its name (on buttons), its client. */
export interface OidcProvider {
  /** The id in `/login/oidc/<id>` and in the identities table. */
  id: string;
  /** The name on the "Sign in with …" link. */
  name: string;
  /** The relying party's client for it. */
  client: OidcClient;
}

/** What the OpenID Connect module's `setup` builds. */
export interface OidcSettings {
  /** The providers. */
  providers: readonly OidcProvider[];
  /** Which provider user is linked to which app user. */
  identities: SQLIdentityStore;
  /** Signs the "link after the password" value (its own purpose). */
  linkSigner: PurposeSigner;
  /** The module's pages. */
  views: OidcViews;
}

/** How long the "link after the password" value lives, in seconds. */
export const LINK_SECONDS = 600;

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

/** The cookie of the state, nonce and PKCE verifier between the redirect and the callback. */
export function stateCookie(ctx: ModuleContext): ShortCookie {
  return new ShortCookie("oidc", ctx.cookieSecure);
}

/** The cookie of the "link after the password" value. */
export function linkCookie(ctx: ModuleContext): ShortCookie {
  return new ShortCookie("oidc-link", ctx.cookieSecure);
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
 * Runs `then` with the provider `id` names, or answers 404 (no such
 * provider).
 */
export function withProvider(
  req: Request,
  oidc: OidcSettings,
  id: string,
  then: (provider: OidcProvider) => Promise<Response>,
): Promise<Response> | Response {
  const provider = oidc.providers.find((p) => p.id === id);
  return provider === undefined
    ? errorResponse(req, 404, "not_found", "Nothing here")
    : then(provider);
}

/**
 * Sends the browser to the provider (303 with the state cookie), or 503
 * when its discovery document cannot be read.
 */
export async function start(
  ctx: ModuleContext,
  req: Request,
  provider: OidcProvider,
  reauthenticate = false,
): Promise<Response> {
  const next = safeNextPath(new URL(req.url).searchParams.get("next"));
  let started;
  try {
    started = await provider.client.start(next, { reauthenticate });
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
