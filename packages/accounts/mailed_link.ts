/**
 * Asking for a link by mail (`POST /password/forgot`, `POST /magic-link`,
 * `POST /passkeys/recover`, or a module's own): the steps every such route
 * takes, written once so that none of them can answer differently for an
 * address that has an account.
 *
 * @module
 */
import { normalizeEmail } from "@portcullis/auth";
import type { UserRecord } from "@portcullis/auth/passwords";
import { limit, type ModuleContext, type SingleUseTokens } from "./context.ts";
import { bodyOrBadRequest } from "./request_body.ts";
import { json, redirect, render, tooManyRequests } from "./respond.ts";
import type { PageContent } from "./views/auth/layout.ts";
import type { EmailContent } from "./views/emails/email_content.ts";

/** How many requests a counter allows in its window. */
export interface MailedLinkRule {
  /** The most requests in one window. */
  max: number;
  /** The window, in seconds. */
  windowSeconds: number;
}

/** One route that mails a link: its counters, its words and its mail. */
export interface MailedLinkFlow {
  /**
   * The counters' name: `<limit>-email` counts per address asked for,
   * `<limit>-address` per client address (a route of another flow that
   * names the same counters shares them).
   */
  limit: string;
  /** Requests per address asked for (`<limit>-email`). */
  perEmail: MailedLinkRule;
  /** Requests per client address (`<limit>-address`). */
  perAddress: MailedLinkRule;
  /**
   * The flash a form gets with its 303 to `/login`: one sentence for every
   * address, registered or not ("If an account uses that address, …").
   */
  sent: string;
  /**
   * The form page again, for a form whose `email` is not an address (422):
   * the typed text, the error to show beside it, and the body's fields.
   */
  invalidForm: (input: {
    email: string;
    error: string;
    fields: Record<string, string>;
  }) => PageContent;
  /**
   * Mails the link to the account found, after the answer: mint the
   * token for `user.id` and send it to `user.email` (the stored address,
   * never what was typed). A failure is logged, never answered.
   */
  mail: (user: UserRecord, fields: Record<string, string>) => Promise<void>;
  /**
   * What the log line names when the mail fails:
   * `<what> email failed: <the error's message>`.
   */
  what: string;
}

/** The message a form gets beside an `email` that is not an address. */
export const INVALID_EMAIL = "Enter a valid email address";

/**
 * Serves a request for a mailed link (form or JSON `{email}`), the same
 * way on every route that asks for one:
 *
 * 1. reads the body (unreadable: 400 `bad_request`) and normalises its
 *    `email` (not an address: 422, the form page again through
 *    `flow.invalidForm`, or JSON `{error: "invalid_email"}`);
 * 2. takes one request from the counter of the address asked for and
 *    from the client address's (either spent: 429 with `Retry-After`,
 *    nothing mailed);
 * 3. answers at once, the same whether or not an account uses the
 *    address: JSON 202 `{}`, or for a form a 303 to `/login` with
 *    `flow.sent` as a flash;
 * 4. after the answer (`ctx.defer`: on a timer, or the platform's
 *    `waitUntil`), looks the address up and, for an account, calls
 *    `flow.mail`; so neither the answer nor its timing tells whether the
 *    address is registered. A failure is logged as
 *    `<flow.what> email failed: <message>`, with any `token=` value in
 *    the message blanked, and never reaches the client.
 *
 * @param ctx The app.
 * @param req The request.
 * @param flow The route's counters, words and mail.
 * @returns The answer.
 *
 * @example A module that mails a link to a page of its own
 * ```ts ignore
 * import { Hono } from "hono";
 * import type { AccountsEnv, AccountsModule } from "@portcullis/accounts";
 * import { handle, requestMailedLink } from "@portcullis/accounts/plugin";
 *
 * export function welcomeBack(): AccountsModule {
 *   return {
 *     name: "welcome_back",
 *     setup(ctx) {
 *       const routes = new Hono<AccountsEnv>();
 *       routes.post("/welcome-back", handle(ctx, (ctx, req) =>
 *         requestMailedLink(ctx, req, {
 *           limit: "welcome-back",
 *           perEmail: { max: 3, windowSeconds: 3600 },
 *           perAddress: { max: 30, windowSeconds: 3600 },
 *           sent: "If an account uses that address, a link is on its way.",
 *           invalidForm: ({ email, error }) => myForm(email, error),
 *           mail: async (user) => {
 *             const token = await myTokens.issue(user.id, user.email);
 *             await ctx.mailer.send({ to: user.email, ...myMail(token) });
 *           },
 *           what: "welcome-back",
 *         })));
 *       return { routes };
 *     },
 *   };
 * }
 * ```
 */
export async function requestMailedLink(
  ctx: ModuleContext,
  req: Request,
  flow: MailedLinkFlow,
): Promise<Response> {
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const form = body.kind === "form";
  const typed = body.fields.email ?? "";
  let email: string;
  try {
    email = normalizeEmail(typed);
  } catch {
    return form
      ? render(
        ctx,
        flow.invalidForm({
          email: typed,
          error: INVALID_EMAIL,
          fields: body.fields,
        }),
        422,
      )
      : json({ error: "invalid_email", message: INVALID_EMAIL }, 422);
  }
  const wait = await ctx.limiter.take([
    limit(`${flow.limit}-email`, email, flow.perEmail),
    limit(`${flow.limit}-address`, ctx.clientAddress(req), flow.perAddress),
  ]);
  if (wait > 0) return tooManyRequests(req, wait);
  const fields = body.fields;
  ctx.defer(req, async () => {
    try {
      const user = await ctx.credentials.findByEmail(email);
      if (user === null) return;
      await flow.mail(user, fields);
    } catch (error) {
      ctx.log(`${flow.what} email failed: ${withoutTokens(error)}`);
    }
  });
  if (!form) return json({}, 202);
  return redirect("/login", [
    await ctx.flash.set({ kind: "notice", message: flow.sent }),
  ]);
}

/** A link to a page of the app that carries a single-use token. */
export interface TokenLink {
  /** Mints the token: `ctx.tokens`, or a module's own `OneTimeTokens`. */
  tokens: Pick<SingleUseTokens, "issue">;
  /** What the token is for (`"password-reset"`, `"magic-link"`, …). */
  purpose: string;
  /** The page the link opens: a path on `ctx.appOrigin`. */
  path: string;
  /** Further query parameters, after `token`. */
  params?: Record<string, string>;
  /** The mail's words around the link. */
  view: (data: { link: string }) => EmailContent;
}

/**
 * Mints a single-use token for the account and mails it, as
 * `<appOrigin><path>?token=…`, to the account's stored address (never to
 * what was typed, never to a `Host` header): the `mail` step of a
 * {@linkcode MailedLinkFlow}, and of a link mailed to a signed-in user.
 * A mailer that fails throws.
 *
 * @param ctx The app.
 * @param user The account: its subject and stored address.
 * @param link The token's maker and purpose, the page, the mail's words.
 *
 * @example The mail of a module's own link
 * ```ts ignore
 * import { mailTokenLink } from "@portcullis/accounts/plugin";
 *
 * await mailTokenLink(ctx, user, {
 *   tokens: ctx.tokens,
 *   purpose: "welcome-back",
 *   path: "/welcome-back/callback",
 *   view: ({ link }) => ({
 *     subject: "Welcome back",
 *     view: `<a href="${link}">Welcome back</a>`,
 *     text: `Welcome back: ${link}\n`,
 *   }),
 * });
 * ```
 */
export async function mailTokenLink(
  ctx: ModuleContext,
  user: { id: string; email: string },
  link: TokenLink,
): Promise<void> {
  const token = await link.tokens.issue({
    subject: user.id,
    email: user.email,
    purpose: link.purpose,
  });
  const url = new URL(link.path, ctx.appOrigin);
  url.searchParams.set("token", token);
  for (const [name, value] of Object.entries(link.params ?? {})) {
    url.searchParams.set(name, value);
  }
  await ctx.mailer.send({ to: user.email, ...link.view({ link: url.href }) });
}

/** An error's message with every `token=` value blanked. */
function withoutTokens(error: unknown): string {
  return String((error as Error)?.message).replace(
    /token=[^\s&"'<>]+/gi,
    "token=…",
  );
}
