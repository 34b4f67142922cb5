/**
 * Email verification: sending the link, `GET /verify`, `POST /verify/resend`.
 *
 * @module
 */
import {
  currentUser,
  errorResponse,
  requireAuthenticated,
  safeNextPath,
} from "@portcullis/auth";
import { type AppContext, limit } from "../context.ts";
import { isFormPost, readBody } from "../request_body.ts";
import { page, redirect, tooManyRequests } from "../respond.ts";
import { messagePage } from "../views/auth/message.ts";
import { verifyEmail } from "../views/emails/verify_email.ts";

/** The purpose verification tokens are minted for. */
export const VERIFY_PURPOSE = "verify-email";

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
  ctx: AppContext,
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
    await ctx.mailer.send({ to: email, ...verifyEmail({ link: link.href }) });
    return true;
  } catch (error) {
    ctx.log(`verification email failed: ${(error as Error)?.message}`);
    return false;
  }
}

/**
 * `GET /verify?token=…`: consumes the token, stamps `verified_at`, flashes
 * and redirects to `/`. An unknown, used, expired or mismatched token gets a
 * 400 page and changes nothing. The page never signs anyone in, and sends
 * `Referrer-Policy: no-referrer` so the token does not leak onwards.
 */
export async function verify(ctx: AppContext, req: Request): Promise<Response> {
  const perAddress = [
    limit(
      "verify-address",
      ctx.clientAddress(req),
      ctx.limits.verifyPerAddress,
    ),
  ];
  const wait = await ctx.limiter.blocked(perAddress);
  if (wait > 0) return noReferrer(tooManyRequests(req, wait));
  await ctx.limiter.hit(perAddress);

  const token = new URL(req.url).searchParams.get("token") ?? "";
  const redeemed = await ctx.tokens.redeem(token, VERIFY_PURPOSE, {
    currentEmail: async (subject) =>
      (await ctx.credentials.findById(subject))?.email ?? null,
  });
  const stamped = redeemed !== null &&
    await ctx.credentials.markVerified(
      redeemed.subject,
      redeemed.email,
      Math.max(1, Math.floor(ctx.now())),
    );
  if (!stamped) {
    const user = currentUser(req);
    const email = user === null
      ? null
      : (await ctx.credentials.findById(user))?.email ?? null;
    return noReferrer(page(
      messagePage({
        title: "This link does not work",
        message:
          "The verification link is unknown, was already used, or has expired. Sign in and ask for a new one from your account page.",
        email,
      }),
      400,
    ));
  }
  return noReferrer(redirect("/", [
    await ctx.flash.set({
      kind: "notice",
      message: "Thank you: your email address is verified.",
    }),
  ]));
}

/**
 * `POST /verify/resend` (signed in): mails a new link, which makes the older
 * ones invalid, flashes and redirects back. Limited per account and per
 * address.
 */
export async function resend(ctx: AppContext, req: Request): Promise<Response> {
  const denied = requireAuthenticated(req);
  if (denied) return denied;
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
  const wait = await ctx.limiter.blocked(limits);
  if (wait > 0) return tooManyRequests(req, wait);
  await ctx.limiter.hit(limits);

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

function noReferrer(res: Response): Response {
  res.headers.set("referrer-policy", "no-referrer");
  return res;
}
