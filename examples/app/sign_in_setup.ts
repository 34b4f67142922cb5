/**
 * Builds the sign-in methods beside the password for a runtime entry, from
 * configuration. This is the only app file that imports the methods'
 * packages, so an entry that leaves them off bundles none of them.
 *
 * Configuration (environment variables):
 * - `SIGN_IN_METHODS=off` — every method below off (password only).
 * - `TOTP` — `on` (default) or `off`: TOTP as a second factor.
 * - `OIDC_ISSUER`, `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET` — sign-in with an
 *   OpenID Provider, on when the issuer is set; `OIDC_PROVIDER_ID` (in
 *   URLs, default `oidc`), `OIDC_PROVIDER_NAME` (on the button, default
 *   `OpenID Connect`), `OIDC_ALLOW_HTTP=true` only for a development
 *   provider on 127.0.0.1. The callback to register at the provider is
 *   `<APP_ORIGIN>/login/oidc/<id>/callback`.
 * - `PASSKEYS` — `on` (default) or `off`: passkeys, with the relying party
 *   id `PASSKEYS_RP_ID` (default: `APP_ORIGIN`'s host name) and the name
 *   `PASSKEYS_RP_NAME` (default `Portcullis`).
 *
 * @module
 */
import type { SecretProvider } from "@portcullis/auth";
import type { SQLDatabase } from "@portcullis/sql";
// [totp] begin
import { SQLCredentialStore, SQLTotpStore } from "@portcullis/sql";
import { deriveSecretKey, TotpAuthenticator } from "@portcullis/totp";
import { totpLifecyclePart } from "@portcullis/totp/lifecycle";
// [totp] end
// [oidc] begin
import { SQLIdentityStore } from "@portcullis/sql";
import {
  decideAccount,
  identityLifecyclePart,
  OidcClient,
} from "@portcullis/oidc";
// [oidc] end
// [passkeys] begin
import { SQLPasskeyStore, SQLVerificationTokenStore } from "@portcullis/sql";
import {
  PasskeyAuthenticator,
  passkeyLifecyclePart,
} from "@portcullis/passkeys";
import { PASSKEYS_BROWSER_SCRIPT } from "@portcullis/passkeys/browser-script";
// [passkeys] end
import * as methods from "./sign_in_methods.ts";

/** What {@linkcode signInMethodsFromEnv} needs. */
export interface SignInSetup {
  /** The environment (or any map of settings). */
  env: Record<string, string | undefined>;
  /** The migrated drizzle database (migration 0003 holds the tables). */
  db: SQLDatabase;
  /** The application secret; each method gets keys of its own purpose. */
  secret: SecretProvider;
  /** The public origin (callback URLs are built from it). */
  appOrigin: string;
  /** The site's name, shown by authenticator apps; default `"Portcullis"`. */
  issuer?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

/**
 * The methods the configuration turns on.
 *
 * @param setup The environment, the database, the secret.
 * @returns What `createApp` takes as `signInMethods`.
 */
export function signInMethodsFromEnv(
  setup: SignInSetup,
): methods.SignInMethodsDeps {
  const out: methods.SignInMethodsDeps = {};
  if (setup.env.SIGN_IN_METHODS === "off") return out;
  // [totp] begin
  if ((setup.env.TOTP ?? "on") !== "off") {
    const users = new SQLCredentialStore(setup.db);
    const store = new SQLTotpStore(setup.db);
    const totp = new TotpAuthenticator({
      store,
      issuer: setup.issuer ?? "Portcullis",
      // TOTP secrets are sealed at rest with AES-GCM keys derived from the
      // "totp-secret" purpose; the pending value is signed for its own.
      secretKeys: methods.purposeKeyList(setup.secret, "totp-secret").then((
        keys,
      ) => Promise.all(keys.map(deriveSecretKey))),
      pending: methods.purposeSigner(setup.secret, "totp-pending"),
      // The pending value is bound to the password hash as well: a password
      // change or reset between the two steps ends that sign-in.
      accountState: async (subject) =>
        (await users.findById(subject))?.passwordHash ?? null,
      now: setup.now,
    });
    // The method and its part in the account's lifecycle, together.
    out.totp = Object.assign(totp, { lifecycle: totpLifecyclePart(store) });
  }
  // [totp] end
  // [oidc] begin
  const issuer = setup.env.OIDC_ISSUER;
  if (issuer) {
    const id = setup.env.OIDC_PROVIDER_ID ?? "oidc";
    const client = new OidcClient({
      provider: {
        id,
        issuer,
        clientId: setup.env.OIDC_CLIENT_ID ?? "",
        clientSecret: setup.env.OIDC_CLIENT_SECRET ?? "",
        allowInsecureHttp: setup.env.OIDC_ALLOW_HTTP === "true",
      },
      redirectUri: `${setup.appOrigin}/login/oidc/${id}/callback`,
      // State, nonce and PKCE verifier travel in one value signed for
      // "oidc-state" alone.
      signer: methods.purposeSigner(setup.secret, "oidc-state"),
      now: setup.now,
    });
    const identities = new SQLIdentityStore(setup.db);
    out.oidc = {
      providers: [{
        id,
        name: setup.env.OIDC_PROVIDER_NAME ?? "OpenID Connect",
        start: (next, options) => client.start(next, options),
        finish: (url, state) => client.finish(url, state),
      }],
      identities,
      decide: decideAccount,
      linkSigner: methods.purposeSigner(setup.secret, "oidc-link"),
      lifecycle: identityLifecyclePart(identities),
    };
  }
  // [oidc] end
  // [passkeys] begin
  if ((setup.env.PASSKEYS ?? "on") !== "off") {
    const store = new SQLPasskeyStore(setup.db);
    const tokens = new SQLVerificationTokenStore(setup.db);
    const now = setup.now ?? Date.now;
    const authenticator = new PasskeyAuthenticator({
      rpId: setup.env.PASSKEYS_RP_ID ?? new URL(setup.appOrigin).hostname,
      rpName: setup.env.PASSKEYS_RP_NAME ?? "Portcullis",
      origins: [setup.appOrigin],
      store,
      // Each challenge waits for its one use in the single-use token table
      // (an atomic consume); its id is the subject, so challenges in flight
      // do not replace each other. Issuing one also removes the table's
      // expired rows (at most once a minute): an expired single-use token
      // of any purpose is refused anyway, and abandoned ceremonies must not
      // pile up.
      challenges: {
        put: (id, expiresAt) =>
          tokens.put({
            tokenHash: id,
            purpose: "webauthn-challenge",
            subject: id,
            email: "",
            expiresAt,
            createdAt: now(),
          }),
        consume: async (id) =>
          ((await tokens.consume(id, "webauthn-challenge"))?.expiresAt ?? 0) >
            now(),
        deleteExpired: (at) => tokens.deleteExpired(at + 1),
      },
      signer: methods.purposeSigner(setup.secret, "webauthn-challenge"),
      now,
    });
    out.passkeys = {
      registrationOptions: (user) => authenticator.registrationOptions(user),
      register: (subject, response, name) =>
        authenticator.register(subject, response, name),
      authenticationOptions: () => authenticator.authenticationOptions(),
      authenticate: (response) => authenticator.authenticate(response),
      list: (subject) => store.listFor(subject),
      rename: (subject, id, name) => store.rename(subject, id, name),
      remove: (subject, id) => store.remove(subject, id),
      script: PASSKEYS_BROWSER_SCRIPT,
      lifecycle: passkeyLifecyclePart(store),
    };
  }
  // [passkeys] end
  return out;
}
