/**
 * What every route handler gets: the app's parts, built once by `createApp`.
 *
 * @module
 */
import {
  type CredentialStore,
  type KeyValueStore,
  normalizeEmail,
  type Policy,
  type SessionManager,
} from "@portcullis/auth";
import type { Flash } from "./flash.ts";
import type { Mailer } from "./mailer.ts";
import type { NoteStore } from "./notes.ts";
import type { Limit, RateLimiter } from "./rate_limit.ts";
import type { SignInMethods } from "./sign_in_methods.ts";

/** The password operations the routes use (`PasswordAuthenticator`). */
export interface Passwords {
  /** Creates a user; throws `AuthError` for invalid input. */
  register(
    email: string,
    password: string,
  ): Promise<{ kind: "created"; subject: string } | { kind: "emailTaken" }>;
  /** Answers the subject, or `null` for any failure. */
  authenticate(email: string, password: string): Promise<string | null>;
  /** Changes a password after checking the current one. */
  changePasswordWithCurrent(
    subject: string,
    input: { currentPassword: string; newPassword: string },
  ): Promise<boolean>;
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
}

/** How many hits each rate limit allows, and per how long. */
export interface RateLimits {
  /**
   * Login attempts per email (counted before the password check; a
   * successful login resets the count, so in effect failures).
   */
  loginPerEmail: { max: number; windowSeconds: number };
  /** Login attempts per client address, successful ones included. */
  loginPerAddress: { max: number; windowSeconds: number };
  /**
   * Current-password checks at `POST /account/password`, per account (a
   * successful change resets the count).
   */
  passwordChangePerAccount: { max: number; windowSeconds: number };
  /** Current-password checks at `POST /account/password`, per client address. */
  passwordChangePerAddress: { max: number; windowSeconds: number };
  /** Registrations per client address. */
  registerPerAddress: { max: number; windowSeconds: number };
  /** Verification emails per account. */
  resendPerAccount: { max: number; windowSeconds: number };
  /** Verification emails and link redemptions per client address. */
  verifyPerAddress: { max: number; windowSeconds: number };
}

/** The app's parts, shared by the routes. */
export interface AppContext {
  /** Sessions. */
  sessions: SessionManager;
  /** Users. */
  credentials: CredentialStore;
  /** Registration, login and password change. */
  passwords: Passwords;
  /** Verification links. */
  tokens: SingleUseTokens;
  /** The key-value store (rate limits, notes). */
  kv: KeyValueStore;
  /** Sends mail. */
  mailer: Mailer;
  /** The public origin links are built from (never the `Host` header). */
  appOrigin: string;
  /** Flash messages. */
  flash: Flash;
  /** Rate limiting. */
  limiter: RateLimiter;
  /** The limits. */
  limits: RateLimits;
  /** Notes. */
  notes: NoteStore;
  /** Who may view and edit a note. */
  notePolicy: Policy<"view" | "edit">;
  /** The clock, in unix milliseconds. */
  now: () => number;
  /** Where operational messages go. */
  log: (line: string) => void;
  /** The client's address, for per-address limits. */
  clientAddress: (req: Request) => string;
  /** The sign-in methods beside the password (TOTP, OIDC, passkeys). */
  methods: SignInMethods;
}

/** Builds one {@linkcode Limit}. */
export function limit(
  name: string,
  key: string,
  rule: { max: number; windowSeconds: number },
): Limit {
  return { name, key, max: rule.max, windowSeconds: rule.windowSeconds };
}

/**
 * The key an email's rate limits count under: the address as the user
 * store looks it up (`normalizeEmail`: NFKC, trimmed, lower case), so every
 * spelling of one account shares one counter. Input that is not an address
 * shares the one counter `"invalid"`.
 *
 * @param email The email as typed.
 * @returns The counter key.
 */
export function emailKey(email: string): string {
  try {
    return normalizeEmail(email);
  } catch {
    return "invalid";
  }
}
