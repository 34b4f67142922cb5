/**
 * What every route handler and module gets: the app's parts, built once by
 * `accounts()`, and the rate limits' shape.
 *
 * @module
 */
import type { HashingGate } from "./hashing_gate.ts";
import type {
  CredentialStore,
  KeyValueStore,
  RegisterResult,
  SessionManager,
} from "@portcullis/auth";
import type { AccountLifecycle, LoginResult } from "@portcullis/auth/passwords";
import type {
  Limit,
  LoginThrottle,
  SlidingWindowLimiter,
} from "@portcullis/auth/throttle";
import type {
  SecurityEvents,
  SecurityEventStore,
} from "@portcullis/auth/events";
import type { SessionRegistry } from "@portcullis/auth/session-registry";
import type { VerificationTokenStore } from "@portcullis/auth/verification";
import type { SQLDatabase } from "@portcullis/sql";
import type { Flash } from "./flash.ts";
import type { Mailer } from "./mailer.ts";
import type { SetUpModule } from "./module_parts.ts";
import type { Reauth } from "./reauth.ts";
import type { ShortCookie } from "./short_cookie.ts";
import type { AccountViews } from "./views/mod.ts";

/** The password operations the routes use (`PasswordAuthenticator`). */
export interface Passwords {
  /** Creates a user: `created`, `emailTaken` or `rejected` with a reason. */
  register(email: string, password: string): Promise<RegisterResult>;
  /** Checks a password through the login throttle. */
  login(
    email: string,
    password: string,
    options: { address: string },
  ): Promise<LoginResult>;
  /**
   * Changes a password after checking the current one; `secondFactor`
   * (the account has one) lowers the minimum length. The check runs in
   * the hashing bound's trusted lane under the account (throwing
   * `HashingBusyError`, answered 503, when it has no room), or not at all
   * when the caller took the slot itself and says so with `slotTaken`.
   */
  changePasswordWithCurrent(
    subject: string,
    input: {
      currentPassword: string;
      newPassword: string;
      secondFactor?: boolean;
    },
    options?: { slotTaken?: boolean },
  ): Promise<boolean>;
  /** Throws `AuthError` `INVALID_PASSWORD` for a refused new password. */
  checkNewPassword(
    password: string,
    context?: { secondFactor?: boolean },
  ): Promise<void>;
  /** Sets a password without the current one (after a reset). */
  changePassword(
    subject: string,
    newPassword: string,
    context?: { secondFactor?: boolean },
  ): Promise<boolean>;
  /**
   * The fewest characters of a new password: 15 by default when it is the
   * account's only factor, 8 with a second factor (NIST SP 800-63B-4).
   */
  minPasswordLength(context?: { secondFactor?: boolean }): number;
}

/** The single-use token operations the routes use (`OneTimeTokens`). */
export interface SingleUseTokens {
  /** Mints a token and stores its hash. */
  issue(
    input: { subject: string; email: string; purpose: string },
  ): Promise<string>;
  /** Consumes a token; `null` when unknown, used, expired or mismatched. */
  redeem(
    token: string,
    purpose: string,
    options?: { currentEmail?: (subject: string) => Promise<string | null> },
  ): Promise<{ subject: string; email: string } | null>;
  /** Checks a token like `redeem` without consuming it. */
  peek(
    token: string,
    purpose: string,
    options?: { currentEmail?: (subject: string) => Promise<string | null> },
  ): Promise<{ subject: string; email: string } | null>;
  /** Removes a subject's outstanding tokens of one purpose. */
  revokeFor(subject: string, purpose: string): Promise<void>;
}

/**
 * How many hits each rate limit allows, and per how long. Every window
 * slides (`SlidingWindowLimiter` and `LoginThrottle` of
 * `@portcullis/auth/throttle`).
 */
export interface RateLimits {
  /**
   * Password guesses per account (the normalised email) and per (account,
   * address): `freeFailures` consecutive failures, then a delay that
   * doubles from `baseDelaySeconds` up to `maxDelaySeconds`; at `hardStop`
   * failures (at most 100) the account takes no password until it is
   * reset. A success resets the counts.
   */
  loginPerAccount: {
    freeFailures: number;
    baseDelaySeconds: number;
    maxDelaySeconds: number;
    hardStop: number;
  };
  /** Login attempts per client address, successful ones included. */
  loginPerAddress: { max: number; windowSeconds: number };
  /**
   * Current-password checks at `POST /account/password`, per account (a
   * successful change resets the count).
   */
  passwordChangePerAccount: { max: number; windowSeconds: number };
  /** Current-password checks at `POST /account/password`, per client address. */
  passwordChangePerAddress: { max: number; windowSeconds: number };
  /**
   * Password re-checks before a sensitive action, per session (beside the
   * two limits above); the login throttle plays no part, so a stranger's
   * lockout of the login never blocks the signed-in owner.
   */
  passwordCheckPerSession: { max: number; windowSeconds: number };
  /** Registrations per client address. */
  registerPerAddress: { max: number; windowSeconds: number };
  /** Verification emails per account. */
  resendPerAccount: { max: number; windowSeconds: number };
  /** Verification emails and link redemptions per client address. */
  verifyPerAddress: { max: number; windowSeconds: number };
  /** Password-reset mails per address asked for. */
  resetPerEmail: { max: number; windowSeconds: number };
  /** Password-reset mails and reset attempts per client address. */
  resetPerAddress: { max: number; windowSeconds: number };
  /**
   * The hard stop of the TOTP step at `POST /login/totp`: consecutive
   * failed second steps of one account (at most 100, NIST SP 800-63B-4),
   * kept `windowSeconds`. Counted only with a valid pending value, so only
   * someone who gave the account's password can reach it; a success, a
   * password change or reset, or a new enrolment starts it afresh.
   */
  totpConsecutiveFailures: { max: number; windowSeconds: number };
  /**
   * The hard stop of the signed-in password re-check (before an email
   * change, a deletion, TOTP or a passkey changed, …): consecutive wrong
   * passwords of one account (at most 100, NIST SP 800-63B-4 §3.2.2), kept
   * `windowSeconds`. A right password, and any change of the password (a
   * reset), start it afresh. The login has its own (`loginPerAccount`).
   */
  recheckConsecutiveFailures: { max: number; windowSeconds: number };
}

/** A signer for one purpose's short-lived values (see `ModuleContext.signer`). */
export interface PurposeSigner {
  /** Signs a payload for the purpose. */
  sign(payload: Uint8Array): Promise<string>;
  /** The payload of a value signed for the purpose, or `null`. */
  verify(value: string): Promise<Uint8Array | null>;
}

/**
 * The app's shared parts, as every route and module gets them: built once
 * by `accounts()`. This is the plugin API's context: a module's
 * {@linkcode AccountsModule.setup} receives it, and the functions of
 * `@portcullis/accounts/plugin` take it.
 */
export interface ModuleContext {
  /** Sessions. */
  sessions: SessionManager;
  /** Users. */
  credentials: CredentialStore;
  /** The migrated SQL database (users, tokens, events and the modules' tables). */
  db: SQLDatabase;
  /** Registration, login and password change. */
  passwords: Passwords;
  /**
   * Checks an email and password without the login throttle: for callers
   * that count attempts themselves (the password login, with the device
   * cookie; the signed-in re-check, with its own limits). The hash runs in
   * {@linkcode ModuleContext.hashing}'s anonymous lane (throwing
   * `HashingBusyError`, answered 503, when it is full), or not at all when
   * the caller took a slot itself and says so with `slotTaken` (the
   * sign-in, and the signed-in owner's re-check, in the trusted lane under
   * the account).
   */
  checkPassword(
    email: string,
    password: string,
    options?: { slotTaken?: boolean },
  ): Promise<LoginResult>;
  /**
   * Runs `work` alone among the account's changes of its factors in this
   * process (a per-account critical section): a password change that
   * relies on a second factor and the removal of a second factor take it,
   * so neither checks a state the other is about to change. It does not
   * reach other processes: such a change also re-reads after its write
   * (see `docs/security.md`, "Second factors and short passwords").
   */
  exclusive<T>(subject: string, work: () => Promise<T>): Promise<T>;
  /**
   * The device cookie (`__Host-device`): the login throttle's device token
   * for a browser that signed in before.
   */
  deviceCookie: ShortCookie;
  /** Single-use link tokens (verification, reset, email change, magic links). */
  tokens: SingleUseTokens;
  /**
   * The store behind {@linkcode ModuleContext.tokens}: single-use hashes with
   * an atomic consume, for a module's own values (sign-in links of another
   * lifetime, WebAuthn challenges).
   */
  tokenStore: VerificationTokenStore;
  /** The key-value store (rate limits, the modules' short-lived records). */
  kv: KeyValueStore;
  /** Sends mail. */
  mailer: Mailer;
  /** The public origin links are built from (never the `Host` header). */
  appOrigin: string;
  /** Flash messages. */
  flash: Flash;
  /** Rate limits for registration, resend, verification, password change. */
  limiter: SlidingWindowLimiter;
  /**
   * The login throttle (`reset(email)` lifts an account's hard stop; device
   * tokens exempt a browser that signed in before from it).
   */
  throttle: LoginThrottle;
  /** The limits. */
  limits: RateLimits;
  /** The pages and mails: the app's views over the package's defaults. */
  views: AccountViews;
  /** The clock, in unix milliseconds. */
  now: () => number;
  /** Where operational messages go. */
  log: (line: string) => void;
  /** The client's address, for per-address limits. */
  clientAddress: (req: Request) => string;
  /**
   * The bound on password hashing: every hash of `passwords` and
   * `checkPassword` runs in it; a sign-in takes its slot itself (the
   * trusted lane for a browser the account trusts). No slot means 503 with
   * `Retry-After`.
   */
  hashing: HashingGate;
  /** Security events: the one hook, and where the activity page reads them. */
  events: SecurityEvents;
  /** The stored security events. */
  eventStore: SecurityEventStore;
  /** "My sessions". */
  registry: SessionRegistry;
  /**
   * Runs `work` after the answer (mail whose timing must not show): it
   * starts on a timer once the handler has returned, so neither its time
   * nor a blocking call inside it (a local database's) delays the answer.
   */
  defer: (req: Request, work: () => Promise<unknown>) => void;
  /**
   * Whether cookies are `Secure` and `__Host-` prefixed (the modules'
   * short-lived cookies follow it).
   */
  cookieSecure: boolean;
  /** The "confirm it's you" re-authentication before sensitive actions. */
  reauth: Reauth;
  /**
   * A signer for one purpose's short-lived values (`totp-pending`,
   * `oidc-state`, `webauthn-challenge`, …): `signToken`/`verifyToken` over
   * the secret's keys of that purpose, so a value passes nowhere else, not as
   * a session, not as a flash message.
   */
  signer(purpose: string): PurposeSigner;
  /**
   * Every HMAC key of one purpose, the current one first: what a module
   * derives its own keys from, so rotation of the secret keeps older values
   * readable.
   */
  keyList(purpose: string): Promise<CryptoKey[]>;
  /** The modules' parts, in the order the app lists its modules. */
  modules: readonly SetUpModule[];
  /**
   * The account's lifecycle over every module: called once when the
   * address is proven and once when the account is deleted. Built after
   * every module's `setup`: use it from routes and hooks only.
   */
  lifecycle: AccountLifecycle;
}

/** Builds one {@linkcode Limit}. */
export function limit(
  name: string,
  key: string,
  rule: { max: number; windowSeconds: number },
): Limit {
  return { name, key, max: rule.max, windowSeconds: rule.windowSeconds };
}
