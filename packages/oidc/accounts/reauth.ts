/**
 * "Confirm it's you" with an OpenID Provider: `GET
 * /login/oidc/:provider/reauth` sends a signed-in user to the provider
 * for a forced fresh login (`prompt=login`, `max_age=0`); the shared
 * callback then checks that the identity is the one linked to **this**
 * user and grants the re-authentication cookie (`reauth.ts`). It never
 * signs anyone in, creates or links anything.
 *
 * @module
 */
import {
  currentUser,
  requireAuthenticated,
  safeNextPath,
} from "@portcullis/auth";
import {
  emit,
  type ModuleContext,
  redirect,
} from "@portcullis/accounts/plugin";
import {
  type OidcProvider,
  type OidcSettings,
  refused,
  start,
  withProvider,
} from "./provider_flow.ts";

/**
 * `GET /login/oidc/:provider/reauth?next=…` (signed in, the provider
 * linked to the account): 303 to the provider with the state cookie.
 * Anonymous: 401; a provider the account is not linked to: 403.
 */
export function oidcReauth(
  ctx: ModuleContext,
  oidc: OidcSettings,
  req: Request,
  id: string,
): Promise<Response> | Response {
  return withProvider(req, oidc, id, async (provider) => {
    // Gated here rather than with `on.signedIn` at the mount: an unknown
    // provider answers 404 first, signed in or not.
    const denied = requireAuthenticated(req);
    if (denied) return denied;
    const subject = currentUser(req)!;
    const linked = await oidc.identities.listFor(subject);
    if (!linked.some((l) => l.provider === provider.id)) {
      return refused(
        req,
        403,
        `${provider.name} is not linked to your account: confirm another way`,
      );
    }
    return await start(ctx, req, provider, true);
  });
}

/**
 * The callback of a re-authentication: the signed-in user's own linked
 * identity → 303 to `next` with the re-authentication cookie; no session,
 * or an identity that is not linked to this user → 403, nothing granted.
 */
export async function finishReauth(
  ctx: ModuleContext,
  req: Request,
  oidc: OidcSettings,
  provider: OidcProvider,
  outcome: {
    identity: { provider: string; subject: string };
    next: string;
  },
  clear: string,
): Promise<Response> {
  const subject = currentUser(req);
  const linked = await oidc.identities.find(
    outcome.identity.provider,
    outcome.identity.subject,
  );
  const cookie = subject !== null && linked?.subject === subject
    ? await ctx.reauth.grant(req, "oidc")
    : null;
  if (cookie === null) {
    emit(ctx, {
      type: "login_failed",
      method: "oidc",
      reason: subject === null ? "reauth_signed_out" : "reauth_another_user",
    });
    const res = refused(
      req,
      403,
      subject === null
        ? "Sign in first, then confirm it's you from your account page."
        : `That ${provider.name} account is not the one linked to yours.`,
    );
    res.headers.append("set-cookie", clear);
    return res;
  }
  emit(ctx, { type: "reauthenticated", method: "oidc", subject: subject! });
  return redirect(safeNextPath(outcome.next), [
    clear,
    cookie,
    await ctx.flash.set({
      kind: "notice",
      message:
        "Confirmed. For the next five minutes, changes that ask for your password or a confirmation go through.",
    }),
  ]);
}
