/**
 * The shared HTML pages: `GET /`, `/style.css`, `/login`, `/account`. The
 * login and account pages are shells the modules fill: their buttons on
 * `/login`, their sections on `/account` (see `module.ts`).
 *
 * @module
 */
import { currentUser, requireAuth, safeNextPath } from "@portcullis/auth";
import type { AppContext } from "../context.ts";
import type { AppHono, PageUser } from "../module.ts";
import { page } from "../respond.ts";
import { accountPage } from "../views/auth/account.ts";
import { homePage } from "../views/auth/home.ts";
import { loginPage } from "../views/auth/login.ts";
import { registerPage } from "../methods/password/views/auth/register.ts";
import { accountSections } from "../methods/password/views/auth/account_sections.ts";
import { activityViews, sessionViews } from "../methods/password/sessions.ts";
import { type Html, html } from "../views/html.ts";
import { reauthSection } from "../views/auth/reauth.ts";
import { hasPassword } from "../reauth.ts";
import { STYLESHEET } from "../views/style.ts";

// The page's own gate: a browser without a session is sent to `/login`
// (and back after), where an API route answers 401 (`signedIn`).
const signedInPage = requireAuth();

/**
 * Mounts the shared pages.
 *
 * @param app The app.
 * @param ctx Its parts.
 */
export function mountPages(app: AppHono, ctx: AppContext): void {
  app.get("/", (c) => home(ctx, c.req.raw));
  app.get("/style.css", () =>
    new Response(STYLESHEET, {
      headers: {
        "content-type": "text/css; charset=utf-8",
        "cache-control": "public, max-age=3600",
      },
    }));
  app.get("/login", (c) => loginForm(ctx, c.req.raw));
  app.get(
    "/account",
    (c) =>
      signedInPage(c.req.raw, () => Promise.resolve(account(ctx, c.req.raw))),
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
  ctx: AppContext,
  req: Request,
): Promise<PageUser | null> {
  const subject = currentUser(req);
  if (subject === null) return null;
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

/** The modules' lines under the address on `/account`. */
function statusLines(ctx: AppContext, user: PageUser): Html[] {
  return ctx.modules.flatMap((m) => m.accountStatus?.(user) ?? []);
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
  ctx: AppContext,
  subject: string,
  message: string,
  status: number,
): Promise<Response> {
  const found = await ctx.credentials.findById(subject);
  const user = found === null ? null : pageUser(found);
  return page(
    accountPage({
      email: user?.email ?? "",
      status: user === null ? [] : statusLines(ctx, user),
      passwordless: user !== null && !user.password,
      flash: null,
      error: message,
    }),
    status,
  );
}

/** `GET /`. */
export async function home(ctx: AppContext, req: Request): Promise<Response> {
  const { flash, clear } = await ctx.flash.take(req);
  const user = await signedInUser(ctx, req);
  // "Welcome back" only for someone who signed in before, not for an
  // account that registration just created.
  const returning = user !== null &&
    (await ctx.eventStore.list(user.subject, 50).catch(() => []))
      .some((e) => e.type === "login");
  return page(homePage({ user, flash, returning }), 200, [clear]);
}

/** `GET /login`. */
export async function loginForm(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  const { flash, clear } = await ctx.flash.take(req);
  const next = safeNextPath(new URL(req.url).searchParams.get("next"));
  return page(
    loginPage({
      next,
      error: null,
      flash,
      extra: html`${
        [
          ...ctx.modules.filter((m) => m.loginFirst),
          ...ctx.modules.filter((m) => !m.loginFirst),
        ]
          .map((m) => m.loginButtons?.(ctx, next))
      }`,
    }),
    200,
    [clear],
  );
}

/** `GET /register`. */
export function registerForm(): Response {
  return page(registerPage({ email: "", error: null }));
}

/** `GET /account` (behind `requireAuth()`). */
export async function account(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  const user = await signedInUser(ctx, req);
  if (user === null) return page("Account not found", 404);
  const { flash, clear } = await ctx.flash.take(req);
  const passwordless = !user.password;
  const sections = accountSections({
    sessions: await sessionViews(ctx, req),
    activity: await activityViews(ctx, user.subject),
    passwordless,
  });
  return page(
    accountPage({
      email: user.email,
      status: statusLines(ctx, user),
      passwordless,
      flash,
      sections: html`${
        passwordless ? await reauthView(ctx, req, user.subject) : null
      }${await moduleSections(ctx, req, user)}${sections}`,
    }),
    200,
    [clear],
  );
}

/** The modules' sections of `/account`, in the order of `modules.ts`. */
async function moduleSections(
  ctx: AppContext,
  req: Request,
  user: PageUser,
): Promise<Html[]> {
  const out: Html[] = [];
  for (const m of ctx.modules) {
    const section = await m.accountSection?.(ctx, req, user);
    if (section) out.push(section);
  }
  return out;
}

/** The "Confirm it's you" section: the ways the modules offer. */
async function reauthView(
  ctx: AppContext,
  req: Request,
  subject: string,
): Promise<Html> {
  const ways: Html[] = [];
  for (const m of ctx.modules) {
    ways.push(...(await m.reauthWays?.(ctx, subject) ?? []));
  }
  return reauthSection({ fresh: await ctx.reauth.isFresh(req), ways });
}
