/**
 * Sign-in by an emailed one-time link: `POST /magic-link` mails it,
 * `GET /magic-link/callback?token=…` shows a page whose form posts it
 * back (a mail scanner that fetches the link consumes nothing), and
 * `POST /magic-link/callback` redeems it and signs in.
 *
 * Redeeming the link proves the address, so an account whose address was
 * never proven goes through the rules of `POST /verify`
 * (`address_proof.ts`): outside its own signed-in browser it needs the
 * account's password, or "This wasn't me", which removes every password,
 * sign-in method and session someone else set up before signing the
 * mailbox's owner in. An address nobody registered gets no mail and no
 * account: the answer is the same either way.
 *
 * @module
 */
import { currentUser, errorResponse, safeNextPath } from "@portcullis/auth";
import type { OneTimeTokens } from "@portcullis/auth/verification";
import { limit, type ModuleContext } from "../context.ts";
import {
  currentEmailCheck,
  emailOf,
  proofWay,
  proveByLink,
} from "../address_proof.ts";
import {
  record,
  sessionJson,
  startSession,
  stepAfterPassword,
} from "../lifecycle.ts";
import { mailTokenLink, requestMailedLink } from "../mailed_link.ts";
import { hasPassword } from "../reauth.ts";
import { bodyOrBadRequest } from "../request_body.ts";
import { redirect, render, strictOrigin, tooManyRequests } from "../respond.ts";

/** The purpose sign-in links are minted for. */
export const MAGIC_LINK_PURPOSE = "magic-link";
/** How long a sign-in link works: 15 minutes. */
export const MAGIC_LINK_TTL_MS = 15 * 60 * 1000;

/**
 * How many links may be asked for per address asked for and per client
 * address, and how many redemptions per client address.
 */
export const MAGIC_LINK_LIMITS = {
  perEmail: { max: 5, windowSeconds: 3600 },
  perAddress: { max: 30, windowSeconds: 3600 },
  redeemPerAddress: { max: 30, windowSeconds: 15 * 60 },
};

/** The module's settings: the link tokens, 15 minutes each. */
export interface MagicLinkSettings {
  /** Issues and redeems the links. */
  links: OneTimeTokens;
}

const SENT =
  "If an account uses that address, a sign-in link is on its way. It works once, for 15 minutes.";
const REFUSED =
  "This sign-in link is unknown, was already used, or has expired. Ask for a new one on the login page.";
const PASSWORD_NEEDED =
  "Enter the password of the account registered with this address, or choose This wasn't me";

/**
 * `POST /magic-link` (form or JSON `{email}`, form `next`): the same answer
 * whether or not the address is registered (form: 303 to `/login` with a
 * flash; JSON: 202 `{}`): the lookup, the token and the mail run after the
 * answer. Not an address: 422. Limited per address asked for and per
 * client address: 429.
 */
export function requestLink(
  ctx: ModuleContext,
  settings: MagicLinkSettings,
  req: Request,
): Promise<Response> {
  return requestMailedLink(ctx, req, {
    limit: "magic-link",
    perEmail: MAGIC_LINK_LIMITS.perEmail,
    perAddress: MAGIC_LINK_LIMITS.perAddress,
    sent: SENT,
    invalidForm: ({ email, error, fields }) =>
      ctx.views.magicLinkRequest({
        email,
        next: safeNextPath(fields.next),
        error,
      }),
    mail: (user, fields) => {
      const next = safeNextPath(fields.next);
      return mailTokenLink(ctx, user, {
        tokens: settings.links,
        purpose: MAGIC_LINK_PURPOSE,
        path: "/magic-link/callback",
        params: next === "/" ? {} : { next },
        view: (data) => ctx.views.emails.magicLink(data),
      });
    },
    what: "sign-in link",
  });
}

/**
 * `GET /magic-link/callback?token=…`: a page whose form posts the token
 * back; never consumes it. For an address never proven the form also asks
 * for the account's password, or offers "This wasn't me" (as
 * `GET /verify`). An unknown, used or expired token: the 400 page.
 * `Referrer-Policy: strict-origin`.
 */
export async function confirmLink(
  ctx: ModuleContext,
  settings: MagicLinkSettings,
  req: Request,
): Promise<Response> {
  const url = new URL(req.url);
  const token = url.searchParams.get("token") ?? "";
  const owner = await ownerOf(ctx, settings, token);
  if (owner === null) return await refused(ctx, req);
  const user = currentUser(req);
  return strictOrigin(render(
    ctx,
    ctx.views.confirmMagicLink({
      token,
      next: safeNextPath(url.searchParams.get("next")),
      mode: modeOf(owner, user),
      email: await emailOf(ctx, user),
    }),
  ));
}

/**
 * `POST /magic-link/callback` (form or JSON `token`, and for an address
 * never proven `password` or `disown=1`; `next`): redeems the link once
 * and signs in (form: 303 to `next` with the session cookie; JSON: 200
 * `{token, expiresAt}`), or, with TOTP on, answers its second step. An
 * address never proven is proven first, by the rules of `POST /verify`;
 * without the password there: 401, nothing consumed. Unknown, used,
 * expired or another address's token: 400, nothing changes. Limited per
 * client address: 429.
 */
export async function signInByLink(
  ctx: ModuleContext,
  settings: MagicLinkSettings,
  req: Request,
): Promise<Response> {
  const wait = await ctx.limiter.take([
    limit(
      "magic-link-redeem-address",
      ctx.clientAddress(req),
      MAGIC_LINK_LIMITS.redeemPerAddress,
    ),
  ]);
  if (wait > 0) return strictOrigin(tooManyRequests(req, wait));
  // An unreadable body is 400 like every route's (JSON to a client that
  // takes it); nothing is looked up.
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return strictOrigin(body);
  const form = body.kind !== "json";
  const token = body.fields.token ?? "";
  const next = safeNextPath(body.fields.next);
  const owner = await ownerOf(ctx, settings, token);
  if (owner === null) return await refused(ctx, req, !form);
  const way = await proofWay(ctx, req, owner, body.fields);
  if (typeof way !== "string") {
    if (way.kind === "throttled") {
      return strictOrigin(tooManyRequests(req, way.retryAfterSeconds));
    }
    if (!form) {
      return strictOrigin(
        errorResponse(req, 401, "invalid_credentials", PASSWORD_NEEDED),
      );
    }
    return strictOrigin(render(
      ctx,
      ctx.views.confirmMagicLink({
        token,
        next,
        mode: "password",
        email: await emailOf(ctx, currentUser(req)),
        error: PASSWORD_NEEDED,
      }),
      401,
    ));
  }
  const redeemed = await proveByLink(
    ctx,
    req,
    owner,
    way,
    () =>
      settings.links.redeem(token, MAGIC_LINK_PURPOSE, currentEmailCheck(ctx)),
  );
  if (!redeemed) return await refused(ctx, req, !form);
  // The link stands for the password: a second factor still follows.
  const step = await stepAfterPassword(ctx, req, owner.id, next, form);
  if (step) return strictOrigin(step);
  const session = await startSession(ctx, req, owner.id);
  await record(ctx, "login", owner.id, req);
  if (!form) {
    return strictOrigin(
      sessionJson(session),
    );
  }
  const cookies = [session.setCookie];
  if (way === "disown") {
    cookies.push(
      await ctx.flash.set({
        kind: "notice",
        message:
          "You are signed in, and everything someone else set up on this account is removed. Set a password from your account page if you want one.",
      }),
    );
  }
  return strictOrigin(redirect(next, cookies));
}

/** The account a token belongs to (checked, not consumed), or `null`. */
async function ownerOf(
  ctx: ModuleContext,
  settings: MagicLinkSettings,
  token: string,
) {
  const found = token === "" ? null : await settings.links.peek(
    token,
    MAGIC_LINK_PURPOSE,
    currentEmailCheck(ctx),
  );
  return found === null ? null : await ctx.credentials.findById(found.subject);
}

function modeOf(
  owner: { id: string; verifiedAt: number; passwordHash: string },
  user: string | null,
): "proven" | "session" | "password" | "none" {
  if (owner.verifiedAt > 0) return "proven";
  if (!hasPassword(owner)) return "none";
  return user === owner.id ? "session" : "password";
}

async function refused(
  ctx: ModuleContext,
  req: Request,
  asJson = false,
): Promise<Response> {
  if (asJson) {
    return strictOrigin(errorResponse(req, 400, "invalid_link", REFUSED));
  }
  return strictOrigin(render(
    ctx,
    ctx.views.message({
      title: "This link does not work",
      message: REFUSED,
      email: await emailOf(ctx, currentUser(req)),
    }),
    400,
  ));
}
