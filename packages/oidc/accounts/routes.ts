/**
 * OpenID Connect sign-in: `GET /login/oidc/:provider` (to the provider)
 * and `GET /login/oidc/:provider/callback` (back, every check, then the
 * account rule). A re-authentication (`reauth.ts`) and the link after the
 * password (`link.ts`) share the callback. Each sign-in ends in `signIn`,
 * as the password flow does.
 *
 * @module
 */
import { currentUser, normalizeEmail, safeNextPath } from "@portcullis/auth";
import { type AccountDecision, decideAccount } from "../mod.ts";
import {
  emit,
  hasPassword,
  hasSecondFactor,
  type ModuleContext,
  NO_PASSWORD,
  redirect,
  render,
  signInWith,
  stepAfterPassword,
} from "@portcullis/accounts/plugin";
import { finishReauth } from "./reauth.ts";
import {
  LINK_SECONDS,
  linkCookie,
  type OidcProvider,
  type OidcSettings,
  REFUSALS,
  refused,
  start,
  stateCookie,
  withProvider,
} from "./provider_flow.ts";

/** `GET /login/oidc/:provider?next=…`: to the provider. */
export function oidcStart(
  ctx: ModuleContext,
  oidc: OidcSettings,
  req: Request,
  id: string,
): Promise<Response> | Response {
  return withProvider(req, oidc, id, (p) => start(ctx, req, p));
}

/** `GET /login/oidc/:provider/callback`: back from the provider. */
export function oidcCallback(
  ctx: ModuleContext,
  oidc: OidcSettings,
  req: Request,
  id: string,
): Promise<Response> | Response {
  return withProvider(req, oidc, id, (p) => callback(ctx, req, oidc, p));
}

async function callback(
  ctx: ModuleContext,
  req: Request,
  oidc: OidcSettings,
  provider: OidcProvider,
): Promise<Response> {
  const url = new URL(req.url);
  const cookie = stateCookie(ctx);
  const outcome = await provider.client.finish(
    new URL(url.pathname + url.search, ctx.appOrigin).href,
    cookie.read(req),
  );
  const clear = cookie.clear();
  if (outcome.kind === "refused") {
    emit(ctx, { type: "login_failed", method: "oidc", reason: outcome.reason });
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
  let decision: AccountDecision | { kind: "refuse"; reason: string } =
    decideAccount({
      identity: { ...identity, email },
      linkedSubject: linked?.subject ?? null,
      currentSubject: current,
      currentVerified,
      userWithEmail: withEmail?.id ?? null,
      userWithEmailVerified: (withEmail?.verifiedAt ?? 0) > 0,
    });
  if (
    decision.kind === "confirmLink" &&
    (await hasSecondFactor(ctx, decision.subject))
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
  const linkValue = (fields: Record<string, unknown>) =>
    oidc.linkSigner.sign(new TextEncoder().encode(JSON.stringify({
      ...fields,
      e: Math.floor(ctx.now() / 1000) + LINK_SECONDS,
    })));
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
      const value = await linkValue({
        ...record(decision.subject),
        next: "/account",
        m: "session",
      });
      const owner = await ctx.credentials.findById(decision.subject);
      return render(
        ctx,
        oidc.views.link({
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
      emit(ctx, { type: "user_created", subject: id, method: "oidc" });
      return await finishSignIn(ctx, req, id, outcome.next, clear);
    }
    case "confirmLink": {
      const value = await linkValue({
        ...record(decision.subject),
        next: outcome.next,
      });
      return render(
        ctx,
        oidc.views.link({
          provider: provider.name,
          email: email ?? "",
          error: null,
        }),
        200,
        [clear, linkCookie(ctx).set(value, LINK_SECONDS)],
      );
    }
    case "refuse": {
      emit(ctx, {
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

/** Signs in after a provider (through a second factor when the user has one). */
export async function finishSignIn(
  ctx: ModuleContext,
  req: Request,
  subject: string,
  next: string,
  clear: string,
): Promise<Response> {
  // A user who turned TOTP on gives a code after the provider too.
  const second = await stepAfterPassword(
    ctx,
    req,
    subject,
    safeNextPath(next),
    true,
  );
  if (second !== null) {
    second.headers.append("set-cookie", clear);
    return second;
  }
  const session = await signInWith(ctx, req, subject, "oidc");
  return redirect(safeNextPath(next), [session.setCookie, clear]);
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(
    /\//g,
    "_",
  ).replace(/=+$/, "");
}
