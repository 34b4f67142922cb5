/**
 * Who may redeem a mailed link that proves an address, and what redeeming
 * it does: the rules of `POST /verify`, shared by every route that
 * redeems such a link (a sign-in link too), so none of them can take a
 * weaker path (docs/security.md, "One account owns every credential").
 *
 * @module
 */
import type { ModuleContext } from "./context.ts";
import { ownSession } from "./handle.ts";
import { proveAddress, record } from "./lifecycle.ts";
import { hasPassword } from "./reauth.ts";

/** The account a link was mailed to, as a proof needs it. */
export interface LinkOwner {
  /** The subject id. */
  id: string;
  /** The stored, normalised address. */
  email: string;
  /** When the address was first proven; `0` never. */
  verifiedAt: number;
  /** The stored password hash (empty or `!…` for none). */
  passwordHash: string;
}

/**
 * How the link is redeemed: `proven` (the address was proven before:
 * nothing to decide), `session` (the account's own signed-in browser) or
 * `password` (the account's password given here: the same party holds
 * password and mailbox, which both stay), `disown` ("This wasn't me", and
 * any account without a password: every session, the password and every
 * sign-in method someone else set up go).
 */
export type ProofWay = "proven" | "session" | "password" | "disown";

/** What {@linkcode proofWay} answers when the link may not be redeemed yet. */
export type ProofRefusal =
  | { kind: "throttled"; retryAfterSeconds: number }
  | { kind: "passwordNeeded" };

/**
 * Decides how a link for `owner` may be redeemed from this request, by
 * the rules of `POST /verify`: an address proven before needs nothing
 * more; for one never proven, `disown=1` disowns, the account's own
 * signed-in browser confirms (an account signed up with a passkey keeps
 * it), any other browser disowns an account without a password, and
 * anyone else must give the account's password (through the login
 * throttle).
 *
 * @param ctx The app.
 * @param req The request (its session and address).
 * @param owner The account the link was mailed to.
 * @param fields The form's `password` and `disown`.
 * @returns The way, or why not (throttled, or the password is needed).
 */
export async function proofWay(
  ctx: ModuleContext,
  req: Request,
  owner: LinkOwner,
  fields: { password?: string; disown?: string },
): Promise<ProofWay | ProofRefusal> {
  if (owner.verifiedAt > 0) return "proven";
  if (fields.disown === "1") return "disown";
  // The account's own session (never an API key or an operator acting as
  // the user): the same party that set the account up (its password, or
  // the passkey it signed up with).
  if (ownSession(req) === owner.id) return "session";
  if (!hasPassword(owner)) return "disown";
  const result = await ctx.passwords.login(owner.email, fields.password ?? "", {
    address: ctx.clientAddress(req),
  });
  if (result.kind === "throttled") {
    return { kind: "throttled", retryAfterSeconds: result.retryAfterSeconds };
  }
  if (result.kind !== "ok" || result.subject !== owner.id) {
    return { kind: "passwordNeeded" };
  }
  return "password";
}

/**
 * Proves the address through the account's lifecycle, before anything is
 * consumed (a part that fails throws `STORE_UNAVAILABLE`, answered 503,
 * and the link still works), then redeems the link and stamps
 * `verified_at`. `disown` revokes every session first and removes the
 * password with the other methods; the caller then tells the user how to
 * get a password. `proven` only redeems.
 *
 * @param ctx The app.
 * @param req The request.
 * @param owner The account.
 * @param way How (from {@linkcode proofWay}).
 * @param redeem Consumes the link: its subject and address, or `null`.
 * @returns Whether the link was redeemed for `owner` (and, unless
 * `proven`, the address stamped); `false` changes nothing more.
 */
export async function proveByLink(
  ctx: ModuleContext,
  req: Request,
  owner: LinkOwner,
  way: ProofWay,
  redeem: () => Promise<{ subject: string; email: string } | null>,
): Promise<boolean> {
  if (way === "proven") {
    return (await redeem())?.subject === owner.id;
  }
  const disown = way === "disown";
  if (disown) await ctx.sessions.revokeAll(owner.id);
  await proveAddress(ctx, req, {
    subject: owner.id,
    kind: disown ? "disowned" : "verification",
    verifiedBefore: owner.verifiedAt,
    keepPassword: !disown,
  });
  const redeemed = await redeem();
  const stamped = redeemed !== null && redeemed.subject === owner.id &&
    await ctx.credentials.markVerified(
      redeemed.subject,
      redeemed.email,
      Math.max(1, Math.floor(ctx.now())),
    );
  if (!stamped) return false;
  await record(ctx, "verified", owner.id, req);
  if (disown) await ctx.registry.clear(owner.id).catch(() => {});
  return true;
}

/**
 * The check a mailed link's redemption makes: the address it was sent to
 * must still be the account's.
 *
 * @param ctx The app.
 * @returns The `currentEmail` option of `OneTimeTokens.peek`/`redeem`.
 */
export function currentEmailCheck(ctx: ModuleContext): {
  currentEmail: (subject: string) => Promise<string | null>;
} {
  return {
    currentEmail: async (subject: string) =>
      (await ctx.credentials.findById(subject))?.email ?? null,
  };
}

/**
 * The signed-in user's email, for the header of a page.
 *
 * @param ctx The app.
 * @param user The signed-in subject, or `null`.
 * @returns The email, or `null`.
 */
export async function emailOf(
  ctx: ModuleContext,
  user: string | null,
): Promise<string | null> {
  return user === null
    ? null
    : (await ctx.credentials.findById(user))?.email ?? null;
}
