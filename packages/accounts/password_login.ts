/**
 * Password sign-in through the login throttle, with the device cookie
 * (OWASP "device cookies"). A browser that signed in to an account with
 * its right password (and its second factor, when it has one: the cookie
 * waits for that step) gets `__Host-device` (`HttpOnly`, `Secure`,
 * `SameSite=Lax`, 180 days): the library's signed device token for that
 * account. Its later attempts on that account are trusted, so strangers
 * guessing from any number of addresses, who stop the account at its hard
 * stop for every other browser, never lock the owner's own browser out.
 *
 * @module
 */
import { normalizeEmail } from "@portcullis/auth";
import { HASHING_BUSY_RETRY_SECONDS } from "./hashing_gate.ts";
import type { LoginResult } from "@portcullis/auth/passwords";
import type { ModuleContext } from "./context.ts";

/**
 * The name input that is not an address is throttled under: the one
 * `PasswordAuthenticator` uses (no normalised email contains a space).
 */
const NOT_AN_ADDRESS = "(not an address)";

/**
 * The account a typed email is throttled as: its normalised form, so every
 * Unicode spelling shares one counter.
 *
 * @param email The email as typed.
 * @returns The throttle's account name.
 */
export function throttleAccount(email: string): string {
  try {
    return normalizeEmail(email);
  } catch {
    return NOT_AN_ADDRESS;
  }
}

/**
 * What {@linkcode passwordLogin} answers: `PasswordAuthenticator.login`'s
 * `ok` or `invalid`, `throttled` with the rule that refused (`hardStop`:
 * the account's failures reached the hard stop, which a password reset
 * lifts; the same for a registered and an unknown email), or `busy` when
 * the password-hashing bound ({@linkcode ModuleContext.hashing}) had no
 * slot and no place in its queue (answer 503).
 */
export type PasswordLoginResult =
  | Exclude<LoginResult, { kind: "throttled" }>
  | {
    readonly kind: "throttled";
    readonly retryAfterSeconds: number;
    readonly reason: "address" | "delay" | "hardStop";
  }
  | { readonly kind: "busy"; readonly retryAfterSeconds: number };

/**
 * Checks an email and password: the login throttle first (with the
 * browser's device cookie, if any), then the password, and a right one
 * reported back to the throttle.
 *
 * @param ctx The app.
 * @param req The request (its address and device cookie).
 * @param email The email as typed.
 * @param password The password as typed.
 * @returns `ok`, `invalid` or `throttled` (with the throttle's reason).
 */
export async function passwordLogin(
  ctx: ModuleContext,
  req: Request,
  email: string,
  password: string,
): Promise<PasswordLoginResult> {
  const account = throttleAccount(email);
  const address = ctx.clientAddress(req);
  const device = ctx.deviceCookie.read(req);
  const busy = {
    kind: "busy",
    retryAfterSeconds: HASHING_BUSY_RETRY_SECONDS,
  } as const;
  // The browser's place in the hashing bound is taken before the throttle
  // counts anything: refused (saturated, the queue full), the sign-in
  // answers 503 and nothing is counted, and a place taken cannot go to
  // another while the attempt is counted. A browser whose device cookie
  // the account trusts may take a reserved slot; any other cookie (forged,
  // foreign, forgotten) is judged as none.
  const trusted = device !== null &&
    await ctx.throttle.trustsDevice(account, device);
  let ticket = ctx.hashing.enter(trusted, account);
  if (ticket === null) return busy;
  let decision: Awaited<ReturnType<typeof ctx.throttle.attempt>>;
  try {
    decision = await ctx.throttle.attempt(account, address, device);
  } catch (error) {
    ticket.cancel();
    throw error;
  }
  if (!decision.allowed) {
    ticket.cancel();
    return {
      kind: "throttled",
      retryAfterSeconds: decision.retryAfterSeconds,
      reason: decision.reason,
    };
  }
  // A token the attempt no longer trusts (past its failure limit) waits in
  // the anonymous lane: that attempt is counted already, so a refusal
  // there is one failure, as a wrong password would have been.
  if (trusted && decision.trustedDevice !== true) {
    ticket.cancel();
    ticket = ctx.hashing.enter(false, account);
    if (ticket === null) return busy;
  }
  // A trusted browser goes first and may use the reserve, in a lane fair
  // between accounts (where a place may go to an account served longer
  // ago: then 503).
  const release = await ticket.ready;
  if (release === null) return busy;
  let result: LoginResult;
  try {
    result = await ctx.checkPassword(email, password, { slotTaken: true });
  } finally {
    release();
  }
  if (result.kind === "ok") {
    // Best effort, as in PasswordAuthenticator: a count left only delays.
    await ctx.throttle.succeeded(account, address, device).catch(() => {});
  }
  // `checkPassword` has no throttle of its own; were one to answer, it
  // holds this account like a delay.
  return result.kind === "throttled" ? { ...result, reason: "delay" } : result;
}

/**
 * The `Set-Cookie` that makes this browser trusted for the account it has
 * just signed in to (a renewed token when it already was). Call it once the
 * sign-in is complete, after the second factor when one is owed.
 *
 * @param ctx The app.
 * @param req The request.
 * @param email The account's email (as typed at sign-in, or as stored).
 * @returns The header value, or `null` when it could not be made (logged:
 * the sign-in itself stands).
 */
export async function trustThisDevice(
  ctx: ModuleContext,
  req: Request,
  email: string,
): Promise<string | null> {
  try {
    const { token, maxAgeSeconds } = await ctx.throttle.trustDevice(
      throttleAccount(email),
      ctx.deviceCookie.read(req),
    );
    return ctx.deviceCookie.set(token, maxAgeSeconds);
  } catch (error) {
    ctx.log(`device cookie not set: ${(error as Error)?.message}`);
    return null;
  }
}
