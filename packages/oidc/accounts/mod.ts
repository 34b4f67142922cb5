/**
 * Sign-in with OpenID Providers for `@portcullis/accounts`: the provider
 * links on `/login`, the callback that signs in (or links after the
 * account's password), linking from `/account`, and re-authentication by the
 * provider before a sensitive change. Its table is in `@portcullis/sql`'s
 * migrations.
 *
 * @example Usage
 * ```ts ignore
 * import { accounts, password } from "@portcullis/accounts";
 * import { oidc } from "@portcullis/oidc/accounts";
 *
 * const app = accounts({
 *   ...parts,
 *   modules: [password(), oidc({
 *     providers: [{ id: "example", name: "Example", issuer: "https://id.example.com", clientId, clientSecret }],
 *   })],
 * });
 * ```
 *
 * @module
 */
import { Hono } from "hono";
import { SQLIdentityStore } from "@portcullis/sql";
import type { AccountsEnv, AccountsModule } from "@portcullis/accounts";
import { handleWith } from "@portcullis/accounts/plugin";
import { OidcClient } from "../oidc_client.ts";
import { identityLifecyclePart } from "../identity_lifecycle.ts";
import { confirmLink } from "./link.ts";
import { oidcCallback, oidcStart } from "./routes.ts";
import type { OidcSettings } from "./provider_flow.ts";
import { oidcReauth } from "./reauth.ts";
import { defaultOidcViews, type OidcViews } from "./views.ts";

export {
  defaultOidcViews,
  linkedProvidersSection,
  linkPage,
  type OidcViews,
  providerLinks,
  providerReauthLink,
} from "./views.ts";

/** One OpenID Provider the app signs in with. */
export interface OidcProviderSettings {
  /** The id in `/login/oidc/<id>` and in the identities table (`[a-z0-9-]`). */
  id: string;
  /** The name on the "Sign in with …" link. */
  name: string;
  /** The issuer URL (its discovery document is read on first use). */
  issuer: string;
  /** The client id the provider gave the app. */
  clientId: string;
  /** The client secret the provider gave the app. */
  clientSecret: string;
  /**
   * Allows an `http:` issuer: for a provider on the same machine in tests
   * only. Default `false`.
   */
  allowInsecureHttp?: boolean;
}

/** Options of {@linkcode oidc}. */
export interface OidcModuleOptions {
  /** The providers, in the order of their links on `/login`. */
  providers: readonly OidcProviderSettings[];
  /** The module's pages, over its defaults ({@linkcode defaultOidcViews}). */
  views?: Partial<OidcViews>;
}

/**
 * The OpenID Connect module.
 *
 * @param options The providers and the views.
 * @returns The module.
 */
export function oidc(options: OidcModuleOptions): AccountsModule {
  return {
    name: "oidc",
    setup(ctx) {
      const settings: OidcSettings = {
        providers: options.providers.map((p) => ({
          id: p.id,
          name: p.name,
          client: new OidcClient({
            provider: {
              id: p.id,
              issuer: p.issuer,
              clientId: p.clientId,
              clientSecret: p.clientSecret,
              allowInsecureHttp: p.allowInsecureHttp ?? false,
            },
            redirectUri: `${ctx.appOrigin}/login/oidc/${p.id}/callback`,
            // State, nonce and PKCE verifier travel in one value signed for
            // "oidc-state" alone.
            signer: ctx.signer("oidc-state"),
            now: ctx.now,
          }),
        })),
        identities: new SQLIdentityStore(ctx.db),
        linkSigner: ctx.signer("oidc-link"),
        views: { ...defaultOidcViews, ...options.views },
      };
      const on = handleWith(ctx, settings);
      const routes = new Hono<AccountsEnv>();
      routes.post("/login/oidc/link", on(confirmLink));
      routes.get("/login/oidc/:provider", on(oidcStart));
      routes.get("/login/oidc/:provider/callback", on(oidcCallback));
      routes.get("/login/oidc/:provider/reauth", on(oidcReauth));
      return {
        routes,
        lifecycle: [identityLifecyclePart(settings.identities)],
        loginButtons: (next) =>
          settings.views.providerLinks(settings.providers, next),
        async accountSection(_req, user) {
          return settings.views.linkedProviders({
            providers: settings.providers,
            linked: await settings.identities.listFor(user.subject),
          });
        },
        async reauthWays(subject) {
          const linked = await settings.identities.listFor(subject);
          return settings.providers
            .filter((p) => linked.some((l) => l.provider === p.id))
            .map(settings.views.reauthLink);
        },
      };
    },
  };
}
