/**
 * Sign-in with an OpenID Provider. On while `OIDC_ISSUER` is set (and
 * `SIGN_IN_METHODS` is not off), with `OIDC_CLIENT_ID`,
 * `OIDC_CLIENT_SECRET`, `OIDC_PROVIDER_ID` (default `oidc`, in
 * `/login/oidc/<id>`), `OIDC_PROVIDER_NAME` (on the button) and
 * `OIDC_ALLOW_HTTP` (a provider on this machine, for tests only).
 *
 * @module
 */
import {
  type AccountsModule,
  allMethodsOff,
  envFlag,
} from "@portcullis/accounts";
import { oidc } from "@portcullis/oidc/accounts";
import { defaultOidcViews } from "../views/auth/oidc.ts";

/**
 * The OpenID Connect module, while a provider is configured.
 *
 * @param env The environment.
 * @returns The module, or none.
 * @throws {TypeError} For a switch that is neither yes nor no.
 */
export function oidcModule(
  env: Record<string, string | undefined>,
): AccountsModule[] {
  // Read first, so that a typo stops the start even while the provider is off.
  const allowHttp = envFlag(env, "OIDC_ALLOW_HTTP");
  if (!env.OIDC_ISSUER || allMethodsOff(env)) return [];
  return [oidc({
    providers: [{
      id: env.OIDC_PROVIDER_ID ?? "oidc",
      name: env.OIDC_PROVIDER_NAME ?? "OpenID Connect",
      issuer: env.OIDC_ISSUER,
      clientId: env.OIDC_CLIENT_ID ?? "",
      clientSecret: env.OIDC_CLIENT_SECRET ?? "",
      allowInsecureHttp: allowHttp,
    }],
    views: defaultOidcViews,
  })];
}
