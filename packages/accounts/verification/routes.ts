/**
 * Email verification: sending the link, `GET /verify` (the owner's browser
 * is verified; others get a confirmation form: the account's password, or
 * "This wasn't me"), `POST /verify` (redeems the token, proving the
 * address through the account's lifecycle), `POST /verify/resend`.
 *
 * @module
 */
import { currentUser, errorResponse, safeNextPath } from "@portcullis/auth";
import { EMAIL_VERIFICATION_PURPOSE } from "@portcullis/auth/verification";
import { limit, type ModuleContext } from "../context.ts";
import { bodyOrBadRequest, isFormPost, readBody } from "../request_body.ts";
import {
  json,
  redirect,
  render,
  strictOrigin,
  tooManyRequests,
} from "../respond.ts";
import {
  currentEmailCheck,
  emailOf,
  type LinkOwner,
  type ProofWay,
  proofWay,
  proveByLink,
} from "../address_proof.ts";
import { ownSession } from "../handle.ts";
import { hasPassword } from "../reauth.ts";
import { mailResetLink } from "../lifecycle.ts";

/** The purpose verification tokens are minted for. */
export const VERIFY_PURPOSE: string = EMAIL_VERIFICATION_PURPOSE;

/**
 * Mints a verification token (older links of the user stop working) and
 * mails the link, built from the configured origin, to the stored address.
 *
 * @param ctx The app.
 * @param subject The user.
 * @param email The user's stored, normalised email.
 * @returns `true` when the mail went out.
 */
export async function sendVerificationLink(
  ctx: ModuleContext,
  subject: string,
  email: string,
): Promise<boolean> {
  const token = await ctx.tokens.issue({
    subject,
    email,
    purpose: VERIFY_PURPOSE,
  });
  const link = new URL("/verify", ctx.appOrigin);
  link.searchParams.set("token", token);
  try {
    await ctx.mailer.send({
      to: email,
      ...ctx.views.emails.verifyEmail({ link: link.href }),
    });
    return true;
  } catch (error) {
    ctx.log(`verification email failed: ${(error as Error)?.message}`);
    return false;
  }
}

/**
 * `GET /verify?token=…`. The owner's signed-in browser (its session's
 * subject owns the token) is verified at once: the token is consumed,
 * `verified_at` stamped, a flash set, 303 to `/`. Any other GET (a mail
 * scanner or link preview, another browser, an anonymous one) consumes
 * nothing and gets the confirmation page (`confirmVerifyPage`): confirm
 * with the account's password, or "This wasn't me". Fetching a link
 * verifies nobody, and clicking it elsewhere never hands an account
 * pre-registered under someone else's address to whoever registered it.
 * An unknown, used or expired token: the 400 page. Sends
 * `Referrer-Policy: strict-origin`: the token never leaves in a referrer,
 * and the form's `Origin` header stays real.
 */
export async function confirmVerify(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const token = new URL(req.url).searchParams.get("token") ?? "";
  const found = token === ""
    ? null
    : await ctx.tokens.peek(token, VERIFY_PURPOSE, currentEmailCheck(ctx));
  const owner = found === null
    ? null
    : await ctx.credentials.findById(found.subject);
  if (found === null || owner === null) return await refused(ctx, req);
  const user = currentUser(req);
  if (user !== null && ownSession(req) === found.subject) {
    return await redeemAndStamp(ctx, req, token, "form", owner, "session");
  }
  return strictOrigin(render(
    ctx,
    ctx.views.confirmVerify({
      token,
      mode: modeOf(owner),
      email: await emailOf(ctx, user),
    }),
  ));
}

/**
 * `POST /verify` (form or JSON `token`, and `password` or `disown`):
 * redeems the token, stamps `verified_at`, flashes and redirects (303) to
 * `/`; a JSON body gets 200 `{verified: true, credentialsRemoved, message}`
 * instead. Never signs anyone in. Limited per address.
 *
 * Who may confirm an address that was never proven: the account's own
 * signed-in browser, or anyone who also gives the account's password
 * (through the login throttle): the same party holds the password and the
 * mailbox, so the password and the sessions stay. Without it: 401
 * `invalid_credentials`, nothing consumed. `disown=1` ("This wasn't me",
 * and the only way for an account without a password) proves the address
 * and removes what someone else set up: every session is revoked, then
 * the password and every sign-in method go (the account's lifecycle), the
 * address is stamped verified, the activity records `credentials_removed`,
 * and a set-a-password link goes to the address. An address proven before
 * needs neither. An unknown, used, expired or mismatched token: 400 and
 * nothing changes.
 */
export async function verify(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const perAddress = [
    limit(
      "verify-address",
      ctx.clientAddress(req),
      ctx.limits.verifyPerAddress,
    ),
  ];
  const wait = await ctx.limiter.take(perAddress);
  if (wait > 0) return strictOrigin(tooManyRequests(req, wait));

  // An unreadable body (malformed JSON, not an object) is 400 like every
  // route's, JSON to a client that takes it; nothing is looked up.
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return strictOrigin(body);
  const kind = body.kind === "json" ? "json" : "form";
  const token = body.fields.token ?? "";
  const found = token === ""
    ? null
    : await ctx.tokens.peek(token, VERIFY_PURPOSE, currentEmailCheck(ctx));
  const owner = found === null
    ? null
    : await ctx.credentials.findById(found.subject);
  if (found === null || owner === null) {
    return await refused(ctx, req, kind === "json");
  }
  // Who may prove an address never proven: the rules every mailed link
  // that proves one follows (address_proof.ts).
  const way = await proofWay(ctx, req, owner, body.fields);
  if (typeof way === "string") {
    return await redeemAndStamp(ctx, req, token, kind, owner, way);
  }
  if (way.kind === "throttled") {
    return strictOrigin(tooManyRequests(req, way.retryAfterSeconds));
  }
  if (kind === "json") {
    return strictOrigin(
      errorResponse(req, 401, "invalid_credentials", PASSWORD_NEEDED),
    );
  }
  return strictOrigin(render(
    ctx,
    ctx.views.confirmVerify({
      token,
      mode: "password",
      email: await emailOf(ctx, currentUser(req)),
      error: PASSWORD_NEEDED,
    }),
    401,
  ));
}

const PASSWORD_NEEDED =
  "Enter the password of the account registered with this address, or choose This wasn't me";

function modeOf(
  owner: { verifiedAt: number; passwordHash: string },
): "password" | "none" | "verified" {
  if (owner.verifiedAt > 0) return "verified";
  return hasPassword(owner) ? "password" : "none";
}

/**
 * Proves the address through the account's lifecycle (before anything is
 * consumed: a part that fails answers 503 and the link still works), then
 * consumes the token and stamps `verified_at`. `how`: `session` or
 * `password` (the same party holds the account: its password and sessions
 * stay), `disown` (every session revoked first; password, methods and
 * sessions go; a set-a-password link is mailed).
 */
async function redeemAndStamp(
  ctx: ModuleContext,
  req: Request,
  token: string,
  kind: "form" | "json",
  owner: LinkOwner,
  how: ProofWay,
): Promise<Response> {
  const disown = how === "disown";
  // An address proven before is stamped again, as a session's proof.
  const stamped = await proveByLink(
    ctx,
    req,
    owner,
    how === "proven" ? "session" : how,
    () => ctx.tokens.redeem(token, VERIFY_PURPOSE, currentEmailCheck(ctx)),
  );
  if (!stamped) return await refused(ctx, req, kind === "json");
  let message = "Thank you: your email address is verified.";
  if (disown) {
    message =
      "Your email address is verified, and everything someone else set up on this account is removed. A link to set your password is on its way.";
    try {
      await mailResetLink(ctx, owner, ctx.views.emails.setPassword);
    } catch (error) {
      ctx.log(`set-password email failed: ${(error as Error)?.message}`);
      message =
        "Your email address is verified, and everything someone else set up on this account is removed. Ask for a password-reset link to set your password.";
    }
  }
  // A JSON request gets JSON: the browser's flash and redirect mean
  // nothing to it.
  if (kind === "json") {
    return strictOrigin(json({
      verified: true,
      credentialsRemoved: disown,
      message,
    }));
  }
  return strictOrigin(redirect("/", [
    await ctx.flash.set({ kind: "notice", message }),
  ]));
}

const REFUSED =
  "The verification link is unknown, was already used, or has expired. Sign in and ask for a new one from your account page.";

async function refused(
  ctx: ModuleContext,
  req: Request,
  json = false,
): Promise<Response> {
  if (json) {
    return strictOrigin(errorResponse(req, 400, "invalid_link", REFUSED));
  }
  const user = currentUser(req);
  const email = user === null
    ? null
    : (await ctx.credentials.findById(user))?.email ?? null;
  return strictOrigin(
    render(
      ctx,
      ctx.views.message({
        title: "This link does not work",
        message: REFUSED,
        email,
      }),
      400,
    ),
  );
}

/**
 * `POST /verify/resend` (signed in): mails a new link, which makes the older
 * ones invalid, flashes and redirects back. Limited per account and per
 * address.
 */
export async function resend(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const subject = currentUser(req)!;
  const body = await readBody(req);
  const back = safeNextPath(body?.fields.next);
  const limits = [
    limit("resend-account", subject, ctx.limits.resendPerAccount),
    limit(
      "verify-address",
      ctx.clientAddress(req),
      ctx.limits.verifyPerAddress,
    ),
  ];
  const wait = await ctx.limiter.take(limits);
  if (wait > 0) return tooManyRequests(req, wait);

  const user = await ctx.credentials.findById(subject);
  if (user === null) {
    return errorResponse(req, 401, "unauthenticated", "Sign in to continue");
  }
  let message = "Your email address is already verified.";
  if (user.verifiedAt === 0) {
    message = await sendVerificationLink(ctx, user.id, user.email)
      ? "A new verification link is on its way. Older links no longer work."
      : "The verification email could not be sent. Try again later.";
  }
  if (!isFormPost(req)) {
    return new Response(null, { status: 204 });
  }
  return redirect(back, [await ctx.flash.set({ kind: "notice", message })]);
}
