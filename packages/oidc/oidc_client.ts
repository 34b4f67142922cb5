/**
 * `OidcClient`: OpenID Connect sign-in (authorization code flow with PKCE
 * S256, `state` and `nonce`) over `oauth4webapi`, Web APIs only.
 *
 * @module
 */
import * as oauth from "oauth4webapi";
import type { PurposeSigner } from "./signed_values.ts";
import { readState, signState } from "./_state.ts";

/**
 * A re-authentication's ID token must show a login at the provider at most
 * this many seconds before the callback (`auth_time`, checked by
 * oauth4webapi on its own clock, as `exp` is).
 */
const REAUTH_MAX_AGE_SECONDS = 300;

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

/** Options of {@linkcode OidcClient}. */
export interface OidcClientOptions {
  /** The provider. */
  provider: OidcProviderConfig;
  /** This application's callback URL, exactly as registered. */
  redirectUri: string;
  /**
   * Signs the browser-bound state value (state, nonce, PKCE verifier); its
   * key serves nothing else (`secret.keys("oidc-state")`).
   */
  signer: PurposeSigner;
  /** How long a sign-in may take at the provider, in seconds; default 600. */
  stateSeconds?: number;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

/**
 * One OpenID Provider's sign-in. `start` makes a random `state`, `nonce`
 * and PKCE verifier, signs them (with where to go next) into one value for
 * a short-lived cookie, and answers the provider's authorization URL.
 * `finish` checks the callback against that value: the `state`, the `iss`
 * parameter (RFC 9207, when the provider advertises it), the code at the
 * token endpoint with the verifier, and the ID token (issuer, audience,
 * expiry, `nonce`). Any failure is a refusal with a reason; nothing throws
 * for bad input. It issues no session: the application maps the identity to
 * a user and calls `signIn(req, subject)`.
 *
 * `start(next, { reauthenticate: true })` asks the provider for a fresh
 * login (`prompt=login`, `max_age=0`) and `finish` then also requires an
 * `auth_time` at most five minutes old and answers `reauthenticated: true`:
 * an application's "confirm it's you" step before a sensitive action.
 *
 * @example Usage
 * ```ts
 * import { OidcClient } from "@portcullis/oidc";
 * const client = new OidcClient({
 *   provider: { id: "example", issuer: "https://op.example.com", clientId: "app", clientSecret: "secret" },
 *   redirectUri: "https://app.example.com/login/oidc/example/callback",
 *   signer: { sign: async () => "signed", verify: async () => null }, // use signToken/verifyToken
 * });
 * console.assert(client.provider.id === "example");
 * ```
 */
export class OidcClient {
  #config: OidcProviderConfig;
  #redirectUri: string;
  #signer: PurposeSigner;
  #stateSeconds: number;
  #now: () => number;
  #client: oauth.Client;
  #as: Promise<oauth.AuthorizationServer> | null = null;

  /**
   * Makes the client; nothing is fetched until the first sign-in.
   *
   * @param options The provider, the callback URL and the signer.
   * @throws {TypeError} When the issuer or callback is not an https URL
   * (or http with `allowInsecureHttp`).
   */
  constructor(options: OidcClientOptions) {
    const p = options.provider;
    for (
      const [name, value] of [["issuer", p.issuer], [
        "redirectUri",
        options.redirectUri,
      ]]
    ) {
      let url: URL | null = null;
      try {
        url = new URL(value);
      } catch {
        // reported below
      }
      if (
        url === null ||
        !(url.protocol === "https:" ||
          (url.protocol === "http:" &&
            (p.allowInsecureHttp || name === "redirectUri")))
      ) {
        throw new TypeError(
          `${name} must be an https URL: received "${value}"`,
        );
      }
    }
    if (!/^[a-z0-9-]{1,32}$/.test(p.id)) {
      throw new TypeError(
        `provider id must be 1 to 32 of a-z, 0-9 and "-": received "${p.id}"`,
      );
    }
    this.#config = p;
    this.#redirectUri = options.redirectUri;
    this.#signer = options.signer;
    this.#stateSeconds = options.stateSeconds ?? 600;
    this.#now = options.now ?? Date.now;
    this.#client = { client_id: p.clientId };
  }

  /** The provider's configuration (without reading its secret, please). */
  get provider(): Readonly<OidcProviderConfig> {
    return this.#config;
  }

  /**
   * Starts a sign-in (or, with `reauthenticate`, a fresh login of a user
   * who is signed in already).
   *
   * @param next Where to go afterwards (a local path the application checked).
   * @param options `reauthenticate: true` forces a login at the provider.
   * @returns The authorization URL and the signed state value.
   * @throws {Error} When the provider's discovery document cannot be read.
   */
  async start(next = "/", options: OidcStartOptions = {}): Promise<OidcStart> {
    const as = await this.#server();
    const saved = {
      state: oauth.generateRandomState(),
      nonce: oauth.generateRandomNonce(),
      verifier: oauth.generateRandomCodeVerifier(),
      next,
      reauthenticate: options.reauthenticate === true,
    };
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set("client_id", this.#config.clientId);
    url.searchParams.set("redirect_uri", this.#redirectUri);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("scope", this.#config.scope ?? "openid email");
    url.searchParams.set("state", saved.state);
    url.searchParams.set("nonce", saved.nonce);
    url.searchParams.set(
      "code_challenge",
      await oauth.calculatePKCECodeChallenge(saved.verifier),
    );
    url.searchParams.set("code_challenge_method", "S256");
    if (saved.reauthenticate) {
      // OpenID Connect Core 3.1.2.1: the provider must authenticate the
      // user again, and then return auth_time.
      url.searchParams.set("prompt", "login");
      url.searchParams.set("max_age", "0");
    }
    const expires = Math.floor(this.#now() / 1000) + this.#stateSeconds;
    return {
      authorizationUrl: url.href,
      state: await signState(this.#signer, this.#config.id, saved, expires),
      maxAge: this.#stateSeconds,
    };
  }

  /**
   * Finishes a sign-in at the callback.
   *
   * @param callbackUrl The URL the provider sent the browser to.
   * @param stateValue The signed value from the cookie, or `null`.
   * @returns The identity and next path, or a refusal with its reason.
   */
  async finish(
    callbackUrl: string | URL,
    stateValue: string | null,
  ): Promise<OidcOutcome> {
    const refuse = (reason: OidcRefusal): OidcOutcome => ({
      kind: "refused",
      reason,
    });
    if (stateValue === null || stateValue === "") {
      return refuse("state_missing");
    }
    const saved = await readState(
      this.#signer,
      this.#config.id,
      stateValue,
      this.#now(),
    );
    if (saved === null) return refuse("state_invalid");
    let as: oauth.AuthorizationServer;
    try {
      as = await this.#server();
    } catch {
      return refuse("provider_unreachable");
    }
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(
        as,
        this.#client,
        new URL(callbackUrl),
        saved.state,
      );
    } catch (error) {
      if (error instanceof oauth.AuthorizationResponseError) {
        return refuse("provider_error");
      }
      const text = String((error as Error)?.message);
      return refuse(/"iss"/.test(text) ? "issuer_mismatch" : "state_mismatch");
    }
    let result: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        this.#client,
        oauth.ClientSecretBasic(this.#config.clientSecret),
        params,
        this.#redirectUri,
        saved.verifier,
        this.#httpOptions(),
      );
      result = await oauth.processAuthorizationCodeResponse(
        as,
        this.#client,
        response,
        {
          expectedNonce: saved.nonce,
          requireIdToken: true,
          ...(saved.reauthenticate ? { maxAge: REAUTH_MAX_AGE_SECONDS } : {}),
        },
      );
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError) {
        return refuse("code_rejected");
      }
      if (error instanceof oauth.OperationProcessingError) {
        const claim = (error.cause as { claim?: string } | undefined)?.claim;
        return refuse(
          claim === "nonce"
            ? "nonce_mismatch"
            : claim === "auth_time"
            ? "reauthentication_stale"
            : "id_token_invalid",
        );
      }
      return refuse("provider_unreachable");
    }
    const claims = oauth.getValidatedIdTokenClaims(result);
    if (claims === undefined || typeof claims.sub !== "string") {
      return refuse("id_token_invalid");
    }
    return {
      kind: "ok",
      identity: {
        provider: this.#config.id,
        subject: claims.sub,
        email: typeof claims.email === "string" ? claims.email : null,
        emailVerified: claims.email_verified === true,
      },
      next: saved.next,
      reauthenticated: saved.reauthenticate,
    };
  }

  #httpOptions(): { [oauth.allowInsecureRequests]?: boolean } {
    return this.#config.allowInsecureHttp
      ? { [oauth.allowInsecureRequests]: true }
      : {};
  }

  #server(): Promise<oauth.AuthorizationServer> {
    if (this.#as === null) {
      const issuer = new URL(this.#config.issuer);
      const pending = oauth.discoveryRequest(issuer, {
        algorithm: "oidc",
        ...this.#httpOptions(),
      }).then((res) => oauth.processDiscoveryResponse(issuer, res));
      // A failed discovery is tried again on the next sign-in.
      pending.catch(() => {
        this.#as = null;
      });
      this.#as = pending;
    }
    return this.#as;
  }
}
