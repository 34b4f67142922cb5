/**
 * Builds the sign-in methods beside the password for a runtime entry, from
 * configuration. This is the only app file that imports the methods'
 * packages, so an entry that leaves them off bundles none of them.
 *
 * Configuration (environment variables):
 * - `TOTP` — `on` (default) or `off`: TOTP as a second factor.
 *
 * @module
 */
import type { SecretProvider } from "@portcullis/auth";
import { type SQLDatabase, SQLTotpStore } from "@portcullis/auth/stores/sql";
import { deriveSecretKey, TotpAuthenticator } from "@portcullis/totp";
import {
  purposeKeyList,
  purposeSigner,
  type SignInMethodsDeps,
} from "./sign_in_methods.ts";

/** What {@linkcode signInMethodsFromEnv} needs. */
export interface SignInSetup {
  /** The environment (or any map of settings). */
  env: Record<string, string | undefined>;
  /** The migrated drizzle database (migration 0003 holds the tables). */
  db: SQLDatabase;
  /** The application secret; each method gets keys of its own purpose. */
  secret: SecretProvider;
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
export function signInMethodsFromEnv(setup: SignInSetup): SignInMethodsDeps {
  const out: SignInMethodsDeps = {};
  if ((setup.env.TOTP ?? "on") !== "off") {
    out.totp = new TotpAuthenticator({
      store: new SQLTotpStore(setup.db),
      issuer: setup.issuer ?? "Portcullis",
      // TOTP secrets are sealed at rest with AES-GCM keys derived from the
      // "totp-secret" purpose; the pending value is signed for its own.
      secretKeys: purposeKeyList(setup.secret, "totp-secret").then((keys) =>
        Promise.all(keys.map(deriveSecretKey))
      ),
      pending: purposeSigner(setup.secret, "totp-pending"),
      now: setup.now,
    });
  }
  return out;
}
