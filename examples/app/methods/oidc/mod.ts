/**
 * Sign-in with an OpenID Provider (`@portcullis/oidc`): the provider links
 * on `/login`, the flow under `/login/oidc/`, the linked providers on
 * `/account`, and a fresh sign-in with a linked provider as a way to
 * confirm a user without a password.
 *
 * Settings (environment variables): `OIDC_ISSUER`, `OIDC_CLIENT_ID`,
 * `OIDC_CLIENT_SECRET` — on when the issuer is set (and
 * `SIGN_IN_METHODS` is not `off`); `OIDC_PROVIDER_ID` (in
 * URLs, default `oidc`), `OIDC_PROVIDER_NAME` (on the button, default
 * `OpenID Connect`), `OIDC_ALLOW_HTTP=true` (or `1`, `yes`, `on`, any
 * case) only for a development provider on 127.0.0.1; a value that is
 * neither yes nor no stops the start. The callback to register at the
 * provider is `<APP_ORIGIN>/login/oidc/<id>/callback`. Its table (`identities`) is in
 * the app's SQL migrations.
 *
 * @module
 */
import { identityLifecyclePart, OidcClient } from "@portcullis/oidc";
import { SQLIdentityStore } from "@portcullis/sql";
import { type AppModule, settingsOf } from "../../module.ts";
import {
  allMethodsOff,
  envFlag,
  purposeSigner,
  whenOn,
} from "../../sign_in_methods.ts";
import { confirmLink } from "./link.ts";
import { oidcCallback, type OidcSettings, oidcStart } from "./routes.ts";
import { oidcReauth } from "./reauth.ts";
import {
  linkedProvidersSection,
  providerLinks,
  providerReauthLink,
} from "./views/auth/oidc.ts";

/** The OpenID Connect module. */
export const oidc: AppModule<OidcSettings> = {
  name: "oidc",
  setup({ env, db, secret, appOrigin, now }) {
    // Read first, so that a value that is neither yes nor no stops the
    // start even while the provider is off.
    const allowHttp = envFlag(env, "OIDC_ALLOW_HTTP");
    const issuer = env.OIDC_ISSUER;
    if (!issuer || allMethodsOff(env)) return null;
    const id = env.OIDC_PROVIDER_ID ?? "oidc";
    const client = new OidcClient({
      provider: {
        id,
        issuer,
        clientId: env.OIDC_CLIENT_ID ?? "",
        clientSecret: env.OIDC_CLIENT_SECRET ?? "",
        allowInsecureHttp: allowHttp,
      },
      redirectUri: `${appOrigin}/login/oidc/${id}/callback`,
      // State, nonce and PKCE verifier travel in one value signed for
      // "oidc-state" alone.
      signer: purposeSigner(secret, "oidc-state"),
      now,
    });
    return {
      providers: [{
        id,
        name: env.OIDC_PROVIDER_NAME ?? "OpenID Connect",
        client,
      }],
      identities: new SQLIdentityStore(db),
      linkSigner: purposeSigner(secret, "oidc-link"),
    };
  },
  routes(app, ctx) {
    const on = whenOn(ctx, oidc);
    app.post("/login/oidc/link", on(confirmLink));
    app.get("/login/oidc/:provider", on(oidcStart));
    app.get("/login/oidc/:provider/callback", on(oidcCallback));
    app.get("/login/oidc/:provider/reauth", on(oidcReauth));
  },
  lifecycle(ctx) {
    const settings = settingsOf(ctx, oidc);
    return settings === null
      ? []
      : [identityLifecyclePart(settings.identities)];
  },
  loginButtons(ctx, next) {
    const settings = settingsOf(ctx, oidc);
    return settings === null ? null : providerLinks(settings.providers, next);
  },
  async accountSection(ctx, _req, user) {
    const settings = settingsOf(ctx, oidc);
    if (settings === null) return null;
    return linkedProvidersSection({
      providers: settings.providers,
      linked: await settings.identities.listFor(user.subject),
    });
  },
  async reauthWays(ctx, subject) {
    const settings = settingsOf(ctx, oidc);
    if (settings === null) return [];
    const linked = await settings.identities.listFor(subject);
    return settings.providers
      .filter((p) => linked.some((l) => l.provider === p.id))
      .map(providerReauthLink);
  },
};
