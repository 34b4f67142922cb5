/**
 * The OpenID Connect sign-in's public types.
 *
 * @module
 */

/** One OpenID Provider the application trusts. */
export interface OidcProviderConfig {
  /** A short id used in URLs and stored with identities, for example `"google"`. */
  id: string;
  /** The provider's issuer identifier (discovery is read from it). */
  issuer: string;
  /** The client id registered with the provider. */
  clientId: string;
  /** The client secret (sent with HTTP Basic to the token endpoint). */
  clientSecret: string;
  /** Scopes to ask for; default `"openid email"`. */
  scope?: string;
  /**
   * Allows a provider on plain `http://` (a development or test provider on
   * 127.0.0.1). Never for a real provider: the code, the tokens and the
   * discovery document would cross the network in clear.
   */
  allowInsecureHttp?: boolean;
}

/** What the provider asserted about the user, once every check passed. */
export interface OidcIdentity {
  /** The provider's id (from the configuration). */
  provider: string;
  /** The `sub` claim: the user's stable id at the provider. */
  subject: string;
  /** The `email` claim, or `null`. */
  email: string | null;
  /** Whether the provider says it verified the email (`email_verified`). */
  emailVerified: boolean;
}

/** Why a callback was refused. */
export type OidcRefusal =
  | "state_missing"
  | "state_invalid"
  | "state_mismatch"
  | "provider_error"
  | "issuer_mismatch"
  | "code_rejected"
  | "nonce_mismatch"
  | "id_token_invalid"
  | "reauthentication_stale"
  | "provider_unreachable";

/**
 * The outcome of `OidcClient.finish`. `reauthenticated` is `true` when the
 * flow was started with `reauthenticate` (the user logged in at the
 * provider again just now), `false` for a sign-in.
 */
export type OidcOutcome =
  | {
    kind: "ok";
    identity: OidcIdentity;
    next: string;
    reauthenticated: boolean;
  }
  | { kind: "refused"; reason: OidcRefusal };

/** Options of `OidcClient.start`. */
export interface OidcStartOptions {
  /**
   * Ask the provider for a fresh login (`prompt=login`, `max_age=0`) and
   * require an `auth_time` at most five minutes old at the callback: for
   * a signed-in user confirming it is them before a sensitive action.
   */
  reauthenticate?: boolean;
}

/** What `OidcClient.start` answers. */
export interface OidcStart {
  /** Where to send the browser (303). */
  authorizationUrl: string;
  /** The signed state value, for a short-lived cookie. */
  state: string;
  /** The cookie's life, in seconds. */
  maxAge: number;
}
