/**
 * Changing the email address: `POST /account/email` mails a link to the
 * new address, and `GET|POST /account/email/confirm?token=…` makes the
 * change.
 *
 * @module
 */
import { currentUser, errorResponse, normalizeEmail } from "@portcullis/auth";
import {
  EMAIL_CHANGE_PURPOSE,
  EMAIL_VERIFICATION_PURPOSE,
  PASSWORD_RESET_PURPOSE,
} from "@portcullis/auth/verification";
import { limit, type ModuleContext } from "../context.ts";
import { cancelEmailChanges, proveAddress, record } from "../lifecycle.ts";
import { bodyOrBadRequest } from "../request_body.ts";
import {
  json,
  redirect,
  render,
  strictOrigin,
  tooManyRequests,
} from "../respond.ts";
import { WRONG_PASSWORD } from "../recheck.ts";
import { ownSession } from "../handle.ts";
import { hasPassword } from "../reauth.ts";
import { recheckAccountForm, refuseAccountForm } from "./account.ts";

const REFUSED =
  "The confirmation link is unknown, was already used, or has expired. Ask for a new one from your account page.";
const TAKEN = "That email is already registered";

/**
 * `POST /account/email` (signed in; form or JSON `{password, email}`):
 * after the re-check (the password, or a fresh re-authentication), mails a
 * confirmation link to the **new** address. JSON 202 `{}`; form 303 to
 * `/account`. Wrong password: 401, as `/account/password` answers; no
 * password and no fresh re-authentication: 403; address taken: 409; not an
 * address: 422.
 */
export async function changeEmail(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  // The credentials as they stand before the re-check: should a password
  // write (a reset, a change) land while this request runs, the link
  // issued below is cancelled again, whichever of the two finishes first.
  const stamp = await passwordStamp(ctx, currentUser(req)!);
  const checked = await recheckAccountForm(ctx, req);
  if (checked instanceof Response) return checked;
  const { subject, body } = checked;
  let email: string;
  try {
    email = normalizeEmail(body.fields.email ?? "");
  } catch {
    return await refuseAccountForm(ctx, body, subject, {
      status: 422,
      code: "invalid_email",
      message: "Enter a valid email address",
    });
  }
  if (email === checked.email) {
    return await refuseAccountForm(ctx, body, subject, {
      status: 422,
      code: "same_email",
      message: "That is already your email address",
    });
  }
  if (await ctx.credentials.findByEmail(email) !== null) {
    return await refuseAccountForm(ctx, body, subject, {
      status: 409,
      code: "email_taken",
      message: TAKEN,
    });
  }
  const token = await ctx.tokens.issue({
    subject,
    email,
    purpose: EMAIL_CHANGE_PURPOSE,
  });
  if (await passwordStamp(ctx, subject) !== stamp) {
    await cancelEmailChanges(ctx, subject);
    return await refuseAccountForm(ctx, body, subject, {
      status: 401,
      code: "invalid_credentials",
      message: WRONG_PASSWORD,
    });
  }
  const link = new URL("/account/email/confirm", ctx.appOrigin);
  link.searchParams.set("token", token);
  let message =
    `A link to confirm ${email} is on its way to that address. Your address changes when you open it.`;
  try {
    await ctx.mailer.send({
      to: email,
      ...ctx.views.emails.changeEmail({ link: link.href }),
    });
  } catch (error) {
    ctx.log(`email-change email failed: ${(error as Error)?.message}`);
    message = "The confirmation email could not be sent. Try again later.";
  }
  if (body.kind !== "form") return json({}, 202);
  return redirect("/account", [
    await ctx.flash.set({ kind: "notice", message }),
  ]);
}

/** The account's password hash, or `null` for an unknown account. */
async function passwordStamp(
  ctx: ModuleContext,
  subject: string,
): Promise<string | null> {
  return (await ctx.credentials.findById(subject))?.passwordHash ?? null;
}

/**
 * `GET /account/email/confirm?token=…`: the owner's signed-in browser
 * (its session's subject owns the token), opening the link itself (from a
 * mail client, the address bar or one of the app's pages), confirms at
 * once (303 to `/account`); any other GET (a mail scanner, another
 * browser, a navigation from another site) gets a page whose form posts
 * the token; a bad token a 400 page.
 */
export async function confirmEmailForm(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const token = new URL(req.url).searchParams.get("token") ?? "";
  const found = await ctx.tokens.peek(token, EMAIL_CHANGE_PURPOSE);
  if (found === null) return strictOrigin(await refusedPage(ctx, req, 400));
  const user = ownSession(req);
  const site = req.headers.get("sec-fetch-site");
  const ownNavigation = site === null || site === "none" ||
    site === "same-origin";
  if (user !== null && user === found.subject && ownNavigation) {
    return strictOrigin(await confirm(ctx, req, token, "form"));
  }
  return strictOrigin(
    render(ctx, ctx.views.confirmEmailChange({ token, email: null })),
  );
}

/**
 * `POST /account/email/confirm` (form or JSON `token`): the address changes
 * and counts as verified; the old address gets a notice. Taken meanwhile:
 * 409; bad token: 400. Limited per client address.
 */
export async function confirmEmail(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const wait = await ctx.limiter.take([
    limit(
      "verify-address",
      ctx.clientAddress(req),
      ctx.limits.verifyPerAddress,
    ),
  ]);
  if (wait > 0) return strictOrigin(tooManyRequests(req, wait));
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return strictOrigin(body);
  const kind = body.kind;
  const token = body.fields.token ?? "";
  // Who may move an account to this address: its own signed-in browser, or
  // anyone who also gives the account's password. Proving the mailbox alone
  // is not enough: the account (and every sign-in method on it) belongs to
  // whoever asked for the change, who is not always the mailbox's owner.
  const found = token === ""
    ? null
    : await ctx.tokens.peek(token, EMAIL_CHANGE_PURPOSE);
  const owner = found === null
    ? null
    : await ctx.credentials.findById(found.subject);
  if (found !== null && owner !== null && ownSession(req) !== owner.id) {
    const refusal = await accountHolderRefusal(
      ctx,
      req,
      owner,
      body.fields.password ?? "",
    );
    if (refusal !== null) {
      return strictOrigin(
        kind === "form"
          ? render(
            ctx,
            ctx.views.confirmEmailChange({
              token,
              email: null,
              error: refusal.message,
            }),
            refusal.status,
          )
          : refusal.status === 429
          ? tooManyRequests(req, refusal.retryAfter)
          : errorResponse(
            req,
            refusal.status,
            "invalid_credentials",
            refusal.message,
          ),
      );
    }
  }
  return strictOrigin(await confirm(ctx, req, token, kind));
}

const CONFIRM_NEEDS_PASSWORD =
  "Enter the password of the account that asked for this address, or open the link in the browser where that account is signed in";

/**
 * Whether the party confirming an email change from outside the account's
 * signed-in browser holds the account: `null` when the password is right,
 * else why not (401, or 429 while the login throttle holds the account).
 */
async function accountHolderRefusal(
  ctx: ModuleContext,
  req: Request,
  owner: { id: string; email: string; passwordHash: string },
  password: string,
): Promise<
  { status: 401 | 429; message: string; retryAfter: number } | null
> {
  if (!hasPassword(owner)) {
    return { status: 401, message: CONFIRM_NEEDS_PASSWORD, retryAfter: 0 };
  }
  const result = await ctx.passwords.login(owner.email, password, {
    address: ctx.clientAddress(req),
  });
  if (result.kind === "throttled") {
    return {
      status: 429,
      message: "Too many attempts",
      retryAfter: result.retryAfterSeconds,
    };
  }
  return result.kind === "ok" && result.subject === owner.id
    ? null
    : { status: 401, message: CONFIRM_NEEDS_PASSWORD, retryAfter: 0 };
}

async function confirm(
  ctx: ModuleContext,
  req: Request,
  token: string,
  kind: "form" | "json",
): Promise<Response> {
  const redeemed = await ctx.tokens.redeem(token, EMAIL_CHANGE_PURPOSE);
  const before = redeemed === null
    ? null
    : await ctx.credentials.findById(redeemed.subject);
  if (redeemed === null || before === null) {
    return kind === "form"
      ? await refusedPage(ctx, req, 400)
      : errorResponse(req, 400, "invalid_link", REFUSED);
  }
  // The new address is proven by the owner who asked for it after a
  // re-check: through the account's lifecycle (it removes what a party
  // that never proven an address set up, when the account was unverified).
  await proveAddress(ctx, req, {
    subject: before.id,
    kind: "emailChange",
    verifiedBefore: before.verifiedAt,
    keepPassword: true,
  });
  const result = await ctx.credentials.updateEmail(
    redeemed.subject,
    redeemed.email,
    {
      verifiedAt: Math.max(1, Math.floor(ctx.now())),
      expectedEmail: before.email,
    },
  );
  if (result.kind === "emailTaken") {
    return kind === "form"
      ? render(
        ctx,
        ctx.views.message({
          title: TAKEN,
          message: `${TAKEN}: ask for a link to another address.`,
          email: null,
        }),
        409,
      )
      : errorResponse(req, 409, "email_taken", TAKEN);
  }
  if (result.kind !== "updated") {
    return kind === "form"
      ? await refusedPage(ctx, req, 400)
      : errorResponse(req, 400, "invalid_link", REFUSED);
  }
  // Links sent to the old address stop working.
  for (const purpose of [EMAIL_VERIFICATION_PURPOSE, PASSWORD_RESET_PURPOSE]) {
    await ctx.tokens.revokeFor(redeemed.subject, purpose);
  }
  try {
    await ctx.mailer.send({
      to: before.email,
      ...ctx.views.emails.emailChanged({
        newEmail: redeemed.email,
        origin: ctx.appOrigin,
      }),
    });
  } catch (error) {
    ctx.log(`email-changed notice failed: ${(error as Error)?.message}`);
  }
  await record(ctx, "email_changed", redeemed.subject, req);
  if (kind !== "form") return json({});
  return redirect(currentUser(req) === redeemed.subject ? "/account" : "/", [
    await ctx.flash.set({
      kind: "notice",
      message: `Your email address is now ${redeemed.email}.`,
    }),
  ]);
}

async function refusedPage(
  ctx: ModuleContext,
  req: Request,
  status: number,
): Promise<Response> {
  const user = currentUser(req);
  const email = user === null
    ? null
    : (await ctx.credentials.findById(user))?.email ?? null;
  return render(
    ctx,
    ctx.views.message({
      title: "This link does not work",
      message: REFUSED,
      email,
    }),
    status,
  );
}
