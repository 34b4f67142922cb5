/**
 * The shared HTML pages: `GET /`, `/style.css`, `/login`, `/account`. The
 * login and account pages are shells the modules fill: their buttons on
 * `/login`, their sections on `/account` (see `module.ts`).
 *
 * @module
 */
import {
  currentIdentity,
  requireAuth,
  requirePerson,
  safeNextPath,
} from "@portcullis/auth";
import type { ModuleContext } from "./context.ts";
import type { PageUser } from "./module.ts";
import type { AppHono } from "./http.ts";
import { page, render } from "./respond.ts";
import { activityViews, sessionViews } from "./account/sessions.ts";
import { type Html, html } from "./views/html.ts";
import { hasPassword } from "./reauth.ts";

// The page's own gate: a browser without a session is sent to `/login`
// (and back after), where an API route answers 401 (`signedIn`).
const signedInPage = requireAuth();

/**
 * Mounts the shared pages.
 *
 * @param app The app.
 * @param ctx Its parts.
 */
export function mountPages(app: AppHono, ctx: ModuleContext): void {
  app.get("/", (c) => home(ctx, c.req.raw));
  app.get("/style.css", () =>
    new Response(ctx.views.stylesheet, {
      headers: {
        "content-type": "text/css; charset=utf-8",
        "cache-control": "public, max-age=3600",
      },
    }));
  app.get("/login", (c) => loginForm(ctx, c.req.raw));
  app.get(
    "/account",
    (c) =>
      keyRefused(c.req.raw) ??
        signedInPage(
          c.req.raw,
          () => Promise.resolve(account(ctx, c.req.raw)),
        ),
  );
}

/**
 * The signed-in user's account as the pages show it (email, verification,
 * whether it has a password), or `null`. Not a gate: a route for
 * signed-in users only is mounted behind `signedIn` (`routes/handle.ts`)
 * and reads the subject alone with `currentUser(req)!`; this is for the
 * routes that show the account.
 *
 * @param ctx The app.
 * @param req The request, after `identityMiddleware`.
 * @returns The user, or `null` when anonymous (or the account is gone).
 */
export async function signedInUser(
  ctx: ModuleContext,
  req: Request,
): Promise<PageUser | null> {
  const identity = currentIdentity(req);
  // An API key sees no page: the pages are a person's.
  if (identity === null || identity.apiKey !== undefined) return null;
  const subject = identity.subject;
  const user = await ctx.credentials.findById(subject);
  return user === null ? null : pageUser(user);
}

function pageUser(
  user: { id: string; email: string; verifiedAt: number; passwordHash: string },
): PageUser {
  return {
    subject: user.id,
    email: user.email,
    verified: user.verifiedAt > 0,
    password: hasPassword(user),
  };
}

/** 403 `api_key_refused` for a request an API key authenticated, else `null`. */
function keyRefused(req: Request): Response | null {
  return currentIdentity(req)?.apiKey === undefined
    ? null
    : requirePerson(req, { allowActor: true });
}

/** The modules' lines under the address on `/account`. */
function statusLines(ctx: ModuleContext, user: PageUser): Html[] {
  return ctx.modules.flatMap(({ parts }) => parts.accountStatus?.(user) ?? []);
}

/**
 * The account page again, with an error from one of its forms (the
 * password change, the email change, the deletion) and without its
 * sections.
 *
 * @param ctx The app.
 * @param subject The signed-in user.
 * @param message The error.
 * @param status The status.
 * @returns The page.
 */
export async function accountPageWithError(
  ctx: ModuleContext,
  subject: string,
  message: string,
  status: number,
): Promise<Response> {
  const found = await ctx.credentials.findById(subject);
  const user = found === null ? null : pageUser(found);
  const secondFactor = await ctx.lifecycle.hasSecondFactor(subject);
  return render(
    ctx,
    ctx.views.account({
      email: user?.email ?? "",
      status: user === null ? [] : statusLines(ctx, user),
      passwordless: user !== null && !user.password,
      minPasswordLength: ctx.passwords.minPasswordLength({ secondFactor }),
      flash: null,
      error: message,
    }),
    status,
  );
}

/** `GET /`. */
export async function home(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const { flash, clear } = await ctx.flash.take(req);
  const user = await signedInUser(ctx, req);
  // "Welcome back" only for someone who signed in before, not for an
  // account that registration just created.
  const returning = user !== null &&
    (await ctx.eventStore.list(user.subject, 50).catch(() => []))
      .some((e) => e.type === "login");
  return render(ctx, ctx.views.home({ user, flash, returning }), 200, [clear]);
}

/**
 * The modules' buttons and links on the login page (a passkey, providers, a
 * sign-in link), those that come first first.
 *
 * @param ctx The app.
 * @param next Where to go after signing in.
 * @returns The markup.
 */
export function loginButtons(ctx: ModuleContext, next: string): Html {
  return html`${
    [
      ...ctx.modules.filter(({ parts }) => parts.loginFirst),
      ...ctx.modules.filter(({ parts }) => !parts.loginFirst),
    ].map(({ parts }) => parts.loginButtons?.(next))
  }`;
}

/**
 * Whether the login page's email field offers a module's credentials in
 * the autofill (a module with `loginAutofill`, such as passkeys).
 *
 * @param ctx The app.
 * @returns `true` when one does.
 */
export function loginAutofill(ctx: ModuleContext): boolean {
  return ctx.modules.some(({ parts }) => parts.loginAutofill === true);
}

/** `GET /login`. */
export async function loginForm(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const { flash, clear } = await ctx.flash.take(req);
  const next = safeNextPath(new URL(req.url).searchParams.get("next"));
  return render(
    ctx,
    ctx.views.login({
      next,
      error: null,
      flash,
      extra: loginButtons(ctx, next),
      autofill: loginAutofill(ctx),
    }),
    200,
    [clear],
  );
}

/** `GET /account` (behind `requireAuth()`). */
export async function account(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const user = await signedInUser(ctx, req);
  if (user === null) return page("Account not found", 404);
  const { flash, clear } = await ctx.flash.take(req);
  const passwordless = !user.password;
  const sections = ctx.views.accountSections({
    sessions: await sessionViews(ctx, req),
    activity: await activityViews(ctx, user.subject),
    passwordless,
  });
  return render(
    ctx,
    ctx.views.account({
      email: user.email,
      status: statusLines(ctx, user),
      passwordless,
      minPasswordLength: ctx.passwords.minPasswordLength({
        secondFactor: await ctx.lifecycle.hasSecondFactor(user.subject),
      }),
      flash,
      security: html`${
        passwordless ? await reauthView(ctx, req, user.subject) : null
      }${await moduleSections(ctx, req, user)}`,
      sections,
    }),
    200,
    [clear],
  );
}

/**
 * The modules' sections of `/account` (the page's Security group), in the
 * order of `modules.ts`.
 */
async function moduleSections(
  ctx: ModuleContext,
  req: Request,
  user: PageUser,
): Promise<Html[]> {
  const out: Html[] = [];
  for (const { parts } of ctx.modules) {
    const section = await parts.accountSection?.(req, user);
    if (section) out.push(section);
  }
  return out;
}

/** The "Confirm it's you" section: the ways the modules offer. */
async function reauthView(
  ctx: ModuleContext,
  req: Request,
  subject: string,
): Promise<Html> {
  const ways: Html[] = [];
  for (const { parts } of ctx.modules) {
    ways.push(...(await parts.reauthWays?.(subject) ?? []));
  }
  return ctx.views.reauthSection({
    fresh: await ctx.reauth.isFresh(req),
    ways,
  });
}
