/**
 * The re-check before a sensitive action (email change, account deletion,
 * TOTP on or off, a passkey added or removed, a provider linked): the
 * current password, or a re-authentication of this session in the last
 * five minutes (`reauth.ts`), which is the only way for an account without
 * a password. A session alone, however fresh, never passes, and neither
 * does an API key or an operator acting as the user.
 *
 * @module
 */
import { currentIdentity, errorResponse } from "@portcullis/auth";
import type { Limit } from "@portcullis/auth/throttle";
import { limit, type ModuleContext } from "./context.ts";
import { hasPassword } from "./reauth.ts";
import { HashingBusyError } from "./hashing_gate.ts";
import { throttleAccount } from "./password_login.ts";
import { tooManyRequests } from "./respond.ts";

/** What the re-check found. */
export type RecheckOutcome =
  /** Passed: by the password or a fresh re-authentication. */
  | { kind: "ok"; email: string; via: "password" | "reauth" }
  /** Too many password checks: wait. */
  | { kind: "throttled"; retryAfterSeconds: number }
  /** The password was wrong (or the user is gone). */
  | { kind: "wrongPassword" }
  /** An account without a password, and no fresh re-authentication. */
  | { kind: "reauthRequired" }
  /**
   * Not the owner in person: an API key, or an operator acting as the user
   * (no password, however right, and no re-authentication passes).
   */
  | { kind: "notOwner"; reason: "apiKey" | "impersonation" };

/** What a password-less account is told when it has not re-authenticated. */
export const REAUTH_REQUIRED =
  "This account has no password: confirm it's you first by signing in again with your provider or a passkey (your account page has the buttons)";

/** What a wrong current password is told. */
export const WRONG_PASSWORD = "The current password is incorrect";

/**
 * Re-checks the signed-in user. A fresh re-authentication of this session
 * passes without a password; otherwise an account with a password gives
 * it, counted by `limits` (taken first: per account, per address and per
 * session, see {@linkcode passwordCheckLimits}). The login throttle plays
 * no part: a stranger who stopped the account's login with a flood of
 * guesses must not also block its signed-in owner (issue 16 finding 7).
 *
 * @param ctx The app.
 * @param req The signed-in request.
 * @param subject The signed-in user.
 * @param password The password the request carries, if any.
 * @param limits Limits to count a password check against.
 * @returns The outcome.
 */
export async function recheck(
  ctx: ModuleContext,
  req: Request,
  subject: string,
  password: string | undefined,
  limits: Limit[] = [],
): Promise<RecheckOutcome> {
  const identity = currentIdentity(req);
  if (identity?.apiKey !== undefined) {
    return { kind: "notOwner", reason: "apiKey" };
  }
  if (identity?.actor !== undefined) {
    return { kind: "notOwner", reason: "impersonation" };
  }
  const user = await ctx.credentials.findById(subject);
  if (user === null) return { kind: "wrongPassword" };
  if (await ctx.reauth.isFresh(req)) {
    return { kind: "ok", email: user.email, via: "reauth" };
  }
  if (!hasPassword(user)) return { kind: "reauthRequired" };
  // The signed-in owner's check takes its slot in the hashing bound's
  // trusted lane (an anonymous flood does not refuse it) before any limit
  // counts it: refused (the account has a check running, or the queue is
  // full), it answers 503 and counts nothing.
  const release = await ctx.hashing.acquire(true, throttleAccount(user.email));
  if (release === null) throw new HashingBusyError();
  try {
    if (limits.length > 0) {
      const wait = await ctx.limiter.take(limits);
      if (wait > 0) return { kind: "throttled", retryAfterSeconds: wait };
    }
    // At most 100 wrong passwords in a row per account (NIST SP 800-63B-4
    // §3.2.2), counted before the check so concurrent guesses cannot pass
    // together; keyed by the password hash's digest, so a reset starts
    // over.
    const streak = await recheckStreak(ctx, subject, user.passwordHash);
    const stop = await ctx.limiter.take([streak]);
    if (stop > 0) return { kind: "throttled", retryAfterSeconds: stop };
    const result = await ctx.checkPassword(user.email, password ?? "", {
      slotTaken: true,
    });
    if (result.kind === "ok" && result.subject === subject) {
      await ctx.limiter.reset([streak]).catch(() => {});
      return { kind: "ok", email: user.email, via: "password" };
    }
    return { kind: "wrongPassword" };
  } finally {
    release();
  }
}

/**
 * The counter of one account's wrong passwords in a row at the signed-in
 * checks (the re-check, the current password of a change): at most
 * `limits.recheckConsecutiveFailures.max` (100) attempts, keyed by the
 * stored hash's digest so that a new password starts it afresh. Take it
 * before the check; reset it after a right password.
 *
 * @param ctx The app.
 * @param subject The account.
 * @param passwordHash The account's stored hash.
 * @returns The limit.
 */
export async function recheckStreak(
  ctx: ModuleContext,
  subject: string,
  passwordHash: string,
): Promise<Limit> {
  return limit(
    "recheck-consecutive",
    `${subject}:${await digest(passwordHash)}`,
    ctx.limits.recheckConsecutiveFailures,
  );
}

async function digest(text: string): Promise<string> {
  const bytes = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return Array.from(
    bytes.subarray(0, 12),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/**
 * The answer to a failed re-check (JSON, or a small page for a browser):
 * 429, 401 `invalid_credentials`, 403 `reauthentication_required`, or 403
 * `api_key_refused` / `impersonation_refused`.
 *
 * @param req The request.
 * @param outcome A refusal.
 * @returns The response.
 */
export function recheckRefusal(
  req: Request,
  outcome: Exclude<RecheckOutcome, { kind: "ok" }>,
): Response {
  switch (outcome.kind) {
    case "throttled":
      return tooManyRequests(req, outcome.retryAfterSeconds);
    case "wrongPassword":
      return errorResponse(req, 401, "invalid_credentials", WRONG_PASSWORD);
    case "reauthRequired":
      return errorResponse(
        req,
        403,
        "reauthentication_required",
        REAUTH_REQUIRED,
      );
    case "notOwner":
      return outcome.reason === "apiKey"
        ? errorResponse(
          req,
          403,
          "api_key_refused",
          "An API key cannot do this: sign in to the account",
        )
        : errorResponse(
          req,
          403,
          "impersonation_refused",
          "An operator acting as this user cannot do this",
        );
  }
}

/**
 * The re-check before a sensitive action, answered: the password counted
 * by {@linkcode passwordCheckLimits}, or a fresh re-authentication.
 *
 * @example Usage
 * ```ts ignore
 * const refused = await requireRecheck(ctx, req, subject, body.fields.password);
 * if (refused) return refused;
 * ```
 *
 * @param ctx The app.
 * @param req The signed-in request.
 * @param subject The signed-in user.
 * @param password The password the request carries, if any.
 * @returns `null` to go on, or the refusal to send (see
 * {@linkcode recheckRefusal}).
 */
export async function requireRecheck(
  ctx: ModuleContext,
  req: Request,
  subject: string,
  password: string | undefined,
): Promise<Response | null> {
  const checked = await recheck(
    ctx,
    req,
    subject,
    password,
    passwordCheckLimits(ctx, req, subject),
  );
  return checked.kind === "ok" ? null : recheckRefusal(req, checked);
}

/**
 * The limits a password re-check counts against: the ones of
 * `POST /account/password`, per account and per client address, and one
 * per session.
 *
 * @param ctx The app.
 * @param req The request.
 * @param subject The signed-in user.
 * @returns The limits.
 */
export function passwordCheckLimits(
  ctx: ModuleContext,
  req: Request,
  subject: string,
): Limit[] {
  return [
    limit(
      "password-change-account",
      subject,
      ctx.limits.passwordChangePerAccount,
    ),
    limit(
      "password-change-address",
      ctx.clientAddress(req),
      ctx.limits.passwordChangePerAddress,
    ),
    limit(
      "password-check-session",
      currentIdentity(req)?.jti ?? subject,
      ctx.limits.passwordCheckPerSession,
    ),
  ];
}
