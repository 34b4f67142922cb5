/**
 * The sign-in methods beside the password, as the app sees them: TOTP as a
 * second factor (`@portcullis/totp`), OpenID Connect (`@portcullis/oidc`)
 * and passkeys (`@portcullis/passkeys`). Each is on when its part is given
 * to `createApp` (`signInMethods`), off otherwise.
 *
 * The app only uses their types here, so a runtime entry that leaves a
 * method off does not bundle its package; the entry that turns one on (see
 * `main.ts`) builds it, wiring in a key derived for that purpose alone
 * through {@linkcode purposeSigner}.
 *
 * @module
 */
import type { SecretProvider } from "@portcullis/auth";
import type { AccountLifecyclePart } from "@portcullis/auth/passwords";
import { signToken, verifyToken } from "@portcullis/auth/tokens";

/** The TOTP operations the routes use (`TotpAuthenticator`). */
export interface SecondFactorMethod {
  /** Starts enrolment; `null` when TOTP is already on. */
  startEnrolment(
    subject: string,
    accountName: string,
  ): Promise<{ secret: string; uri: string; qrSvg: string } | null>;
  /** Confirms enrolment; the recovery codes, or `null`. */
  confirmEnrolment(subject: string, code: string): Promise<string[] | null>;
  /** Whether TOTP is on. */
  isEnabled(subject: string): Promise<boolean>;
  /** Recovery codes left. */
  recoveryCodesLeft(subject: string): Promise<number>;
  /** Checks a code or a recovery code. */
  verify(subject: string, code: string): Promise<"totp" | "recovery" | null>;
  /** Turns TOTP off after a valid code. */
  disable(subject: string, code: string): Promise<boolean>;
  /** Mints the "second factor pending" value. */
  issuePending(subject: string, next?: string): Promise<string>;
  /**
   * Reads a pending value; `null` when forged, expired, or no longer bound
   * to the credentials (used, password changed, TOTP off or re-enrolled).
   * The fingerprint changes only with those events.
   */
  readPending(
    value: string,
  ): Promise<{ subject: string; next: string; fingerprint: string } | null>;
  /**
   * Its part in the account's lifecycle (`totpLifecyclePart`): the secret
   * and recovery codes go on the first proof of the address and on
   * deletion.
   */
  lifecycle: AccountLifecyclePart;
}

/** One OpenID Provider as the routes use it (`OidcClient`). */
export interface OidcProviderMethod {
  /** The provider's id, in URLs and the identities table. */
  readonly id: string;
  /** The name on the "Sign in with …" button. */
  readonly name: string;
  /**
   * Starts a sign-in: the provider's URL and the signed state value; with
   * `reauthenticate`, a forced fresh login of a signed-in user.
   */
  start(
    next: string,
    options?: { reauthenticate?: boolean },
  ): Promise<{ authorizationUrl: string; state: string; maxAge: number }>;
  /** Checks the callback against the state value. */
  finish(callbackUrl: string, state: string | null): Promise<
    | {
      kind: "ok";
      identity: {
        provider: string;
        subject: string;
        email: string | null;
        emailVerified: boolean;
      };
      next: string;
      /** The flow was a re-authentication (`reauthenticate` at start). */
      reauthenticated: boolean;
    }
    | { kind: "refused"; reason: string }
  >;
}

/** A provider user linked to an app user (`IdentityRecord`). */
export interface LinkedIdentity {
  /** The provider's id. */
  provider: string;
  /** The `sub` at that provider. */
  providerSubject: string;
  /** The app user. */
  subject: string;
  /** The email the provider gave. */
  email: string;
  /** Unix milliseconds of the link. */
  createdAt: number;
}

/** OpenID Connect as the routes use it. */
export interface OidcMethod {
  /** The providers, by id. */
  providers: readonly OidcProviderMethod[];
  /** The identities store (`SQLIdentityStore`). */
  identities: {
    find(
      provider: string,
      providerSubject: string,
    ): Promise<LinkedIdentity | null>;
    link(record: LinkedIdentity): Promise<boolean>;
    listFor(subject: string): Promise<LinkedIdentity[]>;
  };
  /** The account-linking rule (`decideAccount` of `@portcullis/oidc`). */
  decide(facts: {
    identity: {
      provider: string;
      subject: string;
      email: string | null;
      emailVerified: boolean;
    };
    linkedSubject: string | null;
    currentSubject: string | null;
    currentVerified: boolean;
    userWithEmail: string | null;
    userWithEmailVerified: boolean;
  }):
    | { kind: "signIn" | "link" | "confirmLink"; subject: string }
    | { kind: "create"; email: string }
    | { kind: "refuse"; reason: string };
  /** Signs the "link after the password" value (its own purpose). */
  linkSigner: {
    sign(payload: Uint8Array): Promise<string>;
    verify(value: string): Promise<Uint8Array | null>;
  };
  /**
   * Its part in the account's lifecycle (`identityLifecyclePart`): the
   * links go on the first proof of the address and on deletion.
   */
  lifecycle: AccountLifecyclePart;
}

/** A stored passkey as the account page shows it. */
export interface PasskeyInfo {
  /** The credential id, base64url. */
  credentialId: string;
  /** The user's name for it. */
  name: string;
  /** Unix milliseconds of registration. */
  createdAt: number;
  /** Unix milliseconds of the last sign-in; 0 before any. */
  lastUsedAt: number;
}

/** Passkeys as the routes use them (`PasskeyAuthenticator` and its store). */
export interface PasskeysMethod {
  /** Options for `navigator.credentials.create`. */
  registrationOptions(
    user: { subject: string; email: string },
  ): Promise<unknown>;
  /** Checks a registration and stores the passkey. */
  register(subject: string, response: unknown, name: string): Promise<
    { kind: "ok"; passkey: PasskeyInfo } | { kind: "refused"; reason: string }
  >;
  /** Options for `navigator.credentials.get` (discoverable credentials). */
  authenticationOptions(): Promise<unknown>;
  /** Checks a sign-in; whose passkey it was. */
  authenticate(response: unknown): Promise<
    | { kind: "ok"; subject: string; credentialId: string }
    | { kind: "refused"; reason: string }
  >;
  /** A user's passkeys. */
  list(subject: string): Promise<PasskeyInfo[]>;
  /** Renames a user's passkey. */
  rename(subject: string, credentialId: string, name: string): Promise<boolean>;
  /** Removes a user's passkey. */
  remove(subject: string, credentialId: string): Promise<boolean>;
  /** The browser module (`@simplewebauthn/browser` and its driver). */
  script: string;
  /**
   * Its part in the account's lifecycle (`passkeyLifecyclePart`): the
   * passkeys go on the first proof of the address and on deletion.
   */
  lifecycle: AccountLifecyclePart;
}

/** Something a sign-in method did, for logs and the security activity. */
export type SignInEvent =
  | {
    type: "login";
    method: "totp" | "recovery_code" | "oidc" | "passkey";
    subject: string;
  }
  | {
    type: "login_failed";
    method: "totp" | "oidc" | "passkey";
    reason: string;
  }
  | { type: "second_factor_required"; subject: string }
  | { type: "totp_enabled" | "totp_disabled"; subject: string }
  | { type: "identity_linked"; subject: string; provider: string }
  | { type: "user_created"; subject: string; method: "oidc" }
  | { type: "passkey_added" | "passkey_removed"; subject: string }
  | { type: "reauthenticated"; method: "oidc" | "passkey"; subject: string };

/** What `createApp` takes to turn methods on. */
export interface SignInMethodsDeps {
  /** TOTP as a second factor after the password. */
  totp?: SecondFactorMethod;
  /** Sign-in with OpenID Providers. */
  oidc?: OidcMethod;
  /** Passkeys: added on /account, used from /login. */
  passkeys?: PasskeysMethod;
  /**
   * Receives the methods' events; default one line through the app's
   * `log` (no token, code or secret is ever in an event).
   */
  onEvent?: (event: SignInEvent) => void;
}

/** The methods as the routes see them. */
export interface SignInMethods {
  /**
   * The lifecycle parts of the methods that are on, for
   * `accountLifecycle`: one per method, so none can be left out.
   */
  lifecycleParts: AccountLifecyclePart[];
  /** TOTP, or `null` when off. */
  totp: SecondFactorMethod | null;
  /** OpenID Connect, or `null` when off. */
  oidc: OidcMethod | null;
  /** Passkeys, or `null` when off. */
  passkeys: PasskeysMethod | null;
  /** Whether the methods' cookies are `Secure` and `__Host-` prefixed. */
  cookieSecure: boolean;
  /** Reports an event. */
  emit(event: SignInEvent): void;
}

/**
 * Resolves the configuration once.
 *
 * @param deps What `createApp` was given.
 * @param log The app's log.
 * @param cookieSecure Whether cookies are `Secure`.
 * @returns The methods.
 */
export function signInMethods(
  deps: SignInMethodsDeps | undefined,
  log: (line: string) => void,
  cookieSecure: boolean,
): SignInMethods {
  const onEvent = deps?.onEvent ??
    ((event: SignInEvent) => log(`auth event: ${JSON.stringify(event)}`));
  return {
    lifecycleParts: [deps?.totp, deps?.oidc, deps?.passkeys].flatMap((m) =>
      m === undefined ? [] : [m.lifecycle]
    ),
    totp: deps?.totp ?? null,
    oidc: deps?.oidc ?? null,
    passkeys: deps?.passkeys ?? null,
    cookieSecure,
    emit: (event) => {
      try {
        onEvent(event);
      } catch {
        // An event hook never breaks a sign-in.
      }
    },
  };
}

/**
 * A signer for one purpose's short-lived values (`totp-pending`,
 * `oidc-state`, `webauthn-challenge`): `signToken`/`verifyToken` over
 * `secret.keys(purpose)`, so the value passes nowhere else, not as a
 * session, not as a flash message. The packages take it as a plain object
 * and never import the session layer.
 *
 * @param secret The application secret.
 * @param purpose The purpose label.
 * @returns `{ sign, verify }`.
 */
export function purposeSigner(secret: SecretProvider, purpose: string): {
  sign(payload: Uint8Array): Promise<string>;
  verify(value: string): Promise<Uint8Array | null>;
} {
  const keys = secret.keys(purpose);
  return {
    sign: async (payload) => signToken((await keys).current, purpose, payload),
    verify: async (value) => verifyToken(await keys, purpose, value),
  };
}

/**
 * Every HMAC key of one purpose, the current one first: what a package
 * derives its own keys from (TOTP seals secrets with AES-GCM keys derived
 * from these), so rotation of `AUTH_SECRET` keeps older values readable.
 *
 * @param secret The application secret.
 * @param purpose The purpose label.
 * @returns The keys.
 */
export async function purposeKeyList(
  secret: SecretProvider,
  purpose: string,
): Promise<CryptoKey[]> {
  const keys = await secret.keys(purpose);
  const current = keys.current.key;
  return [current, ...[...keys.byKid.values()].filter((k) => k !== current)];
}
