/**
 * The project's configuration: which modules the app has, in order, and
 * their settings, read from the environment. The order is the order of
 * their routes, of their sections on `/account` and of their buttons on
 * `/login`.
 *
 * Settings (environment variables; an on/off setting takes `1`, `true`,
 * `yes`, `on` or `0`, `false`, `no`, `off` in any case, and any other value
 * stops the start):
 * - `SIGN_IN_METHODS=off`: the password only (every method below off);
 * - `MAGIC_LINK`, `TOTP`, `PASSKEYS`: on by default;
 * - `TOTP_ISSUER`: the name authenticator apps show (default `Portcullis`);
 * - `OIDC_ISSUER` turns sign-in with an OpenID Provider on, with
 *   `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET`, `OIDC_PROVIDER_ID` (default
 *   `oidc`), `OIDC_PROVIDER_NAME` and `OIDC_ALLOW_HTTP` (a provider on this
 *   machine, for tests);
 * - `PASSKEYS_RP_ID`, `PASSKEYS_RP_NAME`: the relying party;
 * - `DPOP`: DPoP-bound API sessions, on by default (not a sign-in method).
 *
 * @module
 */
import {
  type AccountsModule,
  allMethodsOff,
  deviceBound,
  dpop,
  envFlag,
  magicLink,
  methodOn,
  password,
  verification,
} from "@portcullis/accounts";
import { totp } from "@portcullis/totp/accounts";
import { oidc } from "@portcullis/oidc/accounts";
import { passkeys } from "@portcullis/passkeys/accounts";
import { notes } from "./notes.ts";

/**
 * The app's modules for an environment.
 *
 * @param env The environment (or any map of settings).
 * @returns The modules, in order.
 * @throws {TypeError} For an on/off setting that is neither.
 */
export function modules(
  env: Record<string, string | undefined>,
): AccountsModule[] {
  // Every switch is read, so a typo in any stops the start.
  const magicLinkOn = methodOn(env, "MAGIC_LINK");
  const totpOn = methodOn(env, "TOTP");
  const passkeysOn = methodOn(env, "PASSKEYS");
  const allowHttp = envFlag(env, "OIDC_ALLOW_HTTP");
  const dpopOn = envFlag(env, "DPOP", true);
  const oidcOn = Boolean(env.OIDC_ISSUER) && !allMethodsOff(env);
  return [
    password(),
    verification(),
    ...magicLinkOn ? [magicLink()] : [],
    ...totpOn ? [totp({ issuer: env.TOTP_ISSUER })] : [],
    ...oidcOn
      ? [oidc({
        providers: [{
          id: env.OIDC_PROVIDER_ID ?? "oidc",
          name: env.OIDC_PROVIDER_NAME ?? "OpenID Connect",
          issuer: env.OIDC_ISSUER!,
          clientId: env.OIDC_CLIENT_ID ?? "",
          clientSecret: env.OIDC_CLIENT_SECRET ?? "",
          allowInsecureHttp: allowHttp,
        }],
      })]
      : [],
    ...passkeysOn
      ? [passkeys({
        rpId: env.PASSKEYS_RP_ID,
        rpName: env.PASSKEYS_RP_NAME,
      })]
      : [],
    deviceBound(),
    ...dpopOn ? [dpop()] : [],
    notes(),
  ];
}
