/**
 * Email verification: sending the link, `GET /verify` (a confirmation form),
 * `POST /verify` (redeems the token), `POST /verify/resend`.
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
import { html } from "../views/html.ts";
import { layout } from "../views/auth/layout.ts";
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
 * `GET /verify?token=…`: a confirmation page with a button that posts the
 * token to `POST /verify`. Nothing is consumed and no cookie is set, so a
 * mail scanner or link preview that fetches the link verifies nobody (an
 * account pre-registered under someone else's address would otherwise be
 * "confirmed" without its owner). `HEAD` answers the same page's headers.
 * A request without a token gets the 400 page. Sends
 * `Referrer-Policy: strict-origin`: a Referer carries the origin only, never
 * the token, and the form's POST carries the origin in `Origin` (with
 * `no-referrer` browsers send `Origin: null`, which the cross-origin check
 * must refuse where no `Sec-Fetch-Site` is sent: plain-HTTP hosts other than
 * localhost, older browsers).
 *
 * Deliberately, `GET /verify` does not consume the token: redemption is
 * `POST /verify`, which only a person pressing the button sends.
 */
export async function confirmVerify(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  const token = new URL(req.url).searchParams.get("token") ?? "";
  if (token === "") return await refused(ctx, req);
  const user = currentUser(req);
  const email = user === null
    ? null
    : (await ctx.credentials.findById(user))?.email ?? null;
  return strictOrigin(page(layout({
    title: "Confirm your email address",
    email,
    body: html`<h1>Confirm your email address</h1>
<form method="post" action="/verify">
  <input type="hidden" name="token" value="${token}">
  <p><button type="submit" id="confirm">Confirm my email address</button></p>
</form>`,
  })));
}

/**
 * `POST /verify` (form field or JSON `token`): consumes the token, stamps
 * `verified_at`, flashes and redirects (303) to `/`. An unknown, used,
 * expired or mismatched token gets a 400 page (JSON for JSON clients) and
 * changes nothing. Never signs anyone in. Limited per address.
 *
 * Deliberately the only redemption: `GET /verify` only shows the
 * confirmation form ({@linkcode confirmVerify}).
 */
export async function verify(ctx: AppContext, req: Request): Promise<Response> {
  const perAddress = [
    limit(
      "verify-address",
      ctx.clientAddress(req),
      ctx.limits.verifyPerAddress,
    ),
  ];
  const wait = await ctx.limiter.take(perAddress);
  if (wait > 0) return noReferrer(tooManyRequests(req, wait));

  const body = await readBody(req);
  const token = body?.fields.token ?? "";
  const redeemed = token === "" ? null : await ctx.tokens.redeem(
    token,
    VERIFY_PURPOSE,
    {
      currentEmail: async (subject) =>
        (await ctx.credentials.findById(subject))?.email ?? null,
    },
  );
  const stamped = redeemed !== null &&
    await ctx.credentials.markVerified(
      redeemed.subject,
      redeemed.email,
      Math.max(1, Math.floor(ctx.now())),
    );
  if (!stamped) return await refused(ctx, req, body?.kind === "json");
  return noReferrer(redirect("/", [
    await ctx.flash.set({
      kind: "notice",
      message: "Thank you: your email address is verified.",
    }),
  ]));
}

const REFUSED =
  "The verification link is unknown, was already used, or has expired. Sign in and ask for a new one from your account page.";

async function refused(
  ctx: AppContext,
  req: Request,
  json = false,
): Promise<Response> {
  if (json) {
    return noReferrer(errorResponse(req, 400, "invalid_link", REFUSED));
  }
  const user = currentUser(req);
  const email = user === null
    ? null
    : (await ctx.credentials.findById(user))?.email ?? null;
  return noReferrer(page(
    messagePage({ title: "This link does not work", message: REFUSED, email }),
    400,
  ));
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

function strictOrigin(res: Response): Response {
  res.headers.set("referrer-policy", "strict-origin");
  return res;
}

function noReferrer(res: Response): Response {
  res.headers.set("referrer-policy", "no-referrer");
  return res;
}
