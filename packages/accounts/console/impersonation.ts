/**
 * Impersonation: an operator acts as a user for a while, in a session of
 * the user whose identity names the operator as its `actor`.
 *
 * - `POST /console/users/:id/impersonate` starts it: a session of the user
 *   with the operator as actor, ending `impersonationMinutes` from now and
 *   never renewed. A browser's own session goes aside into the
 *   `__Host-operator` cookie (a device-bound session is ended and replaced
 *   by an ordinary one of the same end: a bound cookie cannot wait aside,
 *   its browser would renew it over the impersonation). A Bearer client
 *   gets the user's token in the body and keeps its own.
 * - Every page shows a banner with the operator's name and an end button;
 *   every write is recorded on the user's side and the operator's.
 * - `POST /impersonation/end` ends it: the user's session is revoked and
 *   the browser's own session comes back from `__Host-operator`. When the
 *   impersonation ended otherwise (its time ran out, or it was signed out),
 *   the browser's next page brings the operator's session back the same
 *   way.
 *
 * @module
 */
import {
  CookieTransport,
  currentIdentity,
  errorResponse,
  requirePerson,
  safeNextPath,
  signOut,
} from "@portcullis/auth";
import { wantsHtml } from "@portcullis/auth/http";
import type { ModuleContext } from "../context.ts";
import { json, redirect } from "../respond.ts";
import { presentedToken } from "../http.ts";
import { ShortCookie } from "../short_cookie.ts";
import { readBody } from "../request_body.ts";
import {
  consoleAction,
  type ConsoleSettings,
  mayImpersonate,
  userView,
} from "./routes.ts";

/** The session cookie, as the identity middleware names it. */
function sessionCookie(ctx: ModuleContext): CookieTransport {
  return new CookieTransport({ secure: ctx.cookieSecure, warn: () => {} });
}

/** Where a browser's own session waits during an impersonation. */
function operatorCookie(ctx: ModuleContext): ShortCookie {
  return new ShortCookie("operator", ctx.cookieSecure);
}

/** The user's agent, for the session list. */
function agent(req: Request): string | null {
  return req.headers.get("user-agent");
}

/**
 * `POST /console/users/:id/impersonate`: the operator acts as the user.
 * A browser (a cookie session): 303 to `/` with the user's session cookie
 * and the operator's own session aside; a Bearer client: 201
 * `{token, tokenType: "Bearer", expiresAt, subject, actor}`. 403
 * `target_is_operator` for an operator's account (or when the predicate
 * cannot tell), 409 `banned` for a banned one, 409 `impersonation_self`
 * for one's own; 404 for an unknown user.
 */
export async function startImpersonation(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
  id: string,
): Promise<Response> {
  const action = await consoleAction(ctx, settings, req, id);
  if (action instanceof Response) return action;
  const { operator, user, body } = action;
  const view = await userView(ctx, settings, user.id);
  const may = view === null
    ? "ok"
    : await mayImpersonate(ctx, settings, operator, view);
  if (may === "operator") {
    return errorResponse(
      req,
      403,
      "target_is_operator",
      "An operator cannot act as another operator",
    );
  }
  if (may === "banned") {
    return errorResponse(req, 409, "banned", "The account is banned");
  }
  if (may === "self") {
    return errorResponse(
      req,
      409,
      "impersonation_self",
      "This is your own account",
    );
  }
  const nowS = Math.floor(ctx.now() / 1000);
  const held = await ctx.sessions.issueSession(user.id, {
    actor: operator.subject,
    notAfter: nowS + settings.impersonationMinutes * 60,
  });
  await ctx.registry.add(held.identity, agent(req)).catch((error) =>
    ctx.log(`session list not updated: ${(error as Error)?.message}`)
  );
  await ctx.kv.put(actingKey(operator.subject), user.id, {
    ttlSeconds: settings.impersonationMinutes * 60 + 60,
  });
  await ctx.events.emit("impersonation_started", user.id, req, {
    actor: operator.subject,
    detail: `for ${settings.impersonationMinutes} minutes`,
  });
  await ctx.events.emit("impersonation_started", operator.subject, req, {
    actor: null,
    detail: `as ${user.email}`,
  });
  const expiresAt = held.identity.expiresAt;
  // A Bearer client keeps its own token and gets the user's in the body.
  if (req.headers.has("authorization")) {
    return json({
      token: held.token,
      tokenType: "Bearer",
      expiresAt,
      subject: user.id,
      actor: operator.subject,
    }, 201);
  }
  const own = await setAside(
    ctx,
    req,
    operator,
    settings.impersonationMinutes * 60 + PARKED_GRACE_SECONDS,
  );
  const cookies = [
    sessionCookie(ctx).serialize(
      held.token,
      ctx.sessions.secondsLeft(held.identity),
    ),
    own,
  ];
  if (body.kind !== "form") {
    return withCookies(
      json({ expiresAt, subject: user.id, actor: operator.subject }, 201),
      cookies,
    );
  }
  return redirect("/", [
    ...cookies,
    await ctx.flash.set({
      kind: "notice",
      message:
        `You are acting as ${user.email} for ${settings.impersonationMinutes} minutes.`,
    }),
  ]);
}

function withCookies(res: Response, cookies: (string | null)[]): Response {
  const out = new Response(res.body, res);
  out.headers.delete("set-cookie");
  for (const c of cookies) if (c) out.headers.append("set-cookie", c);
  return out;
}

/**
 * How long after an impersonation's end the operator's own session may
 * still come back from `__Host-operator`: past it, the operator signs in
 * again.
 */
const PARKED_GRACE_SECONDS = 600;

/**
 * Puts the browser's own session aside for the end of the impersonation:
 * the `Set-Cookie` of `__Host-operator`, kept no longer than `keepSeconds`.
 * An ordinary session waits as it is; a device-bound one is ended (its
 * browser would otherwise renew it over the impersonation) and an ordinary
 * session with the same end waits instead.
 */
async function setAside(
  ctx: ModuleContext,
  req: Request,
  operator: {
    subject: string;
    jti: string;
    issuedAt: number;
    expiresAt: number;
    deviceBound: boolean;
  },
  keepSeconds: number,
): Promise<string> {
  let token: string | null = operator.deviceBound
    ? null
    : sessionCookie(ctx).read(req);
  let left = Math.max(0, operator.expiresAt - Math.floor(ctx.now() / 1000));
  if (token === null) {
    const end = Math.floor(operator.issuedAt / 1000) +
      ctx.sessions.lifetimeSeconds;
    await signOut(req);
    await ctx.registry.remove(operator.subject, operator.jti).catch(() => {});
    const fresh = await ctx.sessions.issueSession(operator.subject, {
      notAfter: end,
    });
    await ctx.registry.add(fresh.identity, agent(req)).catch(() => {});
    token = fresh.token;
    left = ctx.sessions.secondsLeft(fresh.identity);
  }
  return operatorCookie(ctx).set(token, Math.min(left, keepSeconds));
}

/**
 * The operator's own session waiting in `__Host-operator`, when it is
 * still live (and, given an actor, theirs): its token and seconds left.
 */
async function ownSession(
  ctx: ModuleContext,
  req: Request,
  actor?: string,
): Promise<{ token: string; left: number; subject: string } | null> {
  const token = operatorCookie(ctx).read(req);
  if (token === null) return null;
  let identity;
  try {
    identity = await ctx.sessions.resolve(token);
  } catch {
    return null;
  }
  if (
    identity === null || identity.actor !== undefined ||
    identity.binding !== undefined ||
    (actor !== undefined && identity.subject !== actor)
  ) {
    return null;
  }
  return {
    token,
    left: ctx.sessions.secondsLeft(identity),
    subject: identity.subject,
  };
}

/**
 * `POST /impersonation/end`: ends the impersonation (the user's session
 * revoked) and brings the browser's own session back. A browser: 303 to
 * the user's page in the console (or `/login` when its own session is
 * gone too); a Bearer client: 204. Without an impersonation: 409
 * `not_impersonating` (401 when signed out and nothing waits aside).
 */
export async function endImpersonation(
  ctx: ModuleContext,
  _settings: ConsoleSettings,
  req: Request,
): Promise<Response> {
  await readBody(req);
  const identity = currentIdentity(req);
  if (identity?.apiKey !== undefined) {
    return requirePerson(req, { allowActor: true }) ??
      errorResponse(req, 403, "api_key_refused", "Not with an API key");
  }
  const actor = identity?.actor;
  if (identity !== null && actor === undefined) {
    return errorResponse(
      req,
      409,
      "not_impersonating",
      "This session is no impersonation",
    );
  }
  const own = await ownSession(ctx, req, actor);
  if (identity === null && own === null) {
    return errorResponse(req, 401, "unauthenticated", "Sign in to continue");
  }
  let back = "/console/users";
  if (identity !== null && actor !== undefined) {
    await signOut(req);
    await ctx.registry.remove(identity.subject, identity.jti).catch(() => {});
    await endActorSessions(ctx, actor);
    const user = await ctx.credentials.findById(identity.subject);
    await ctx.events.emit("impersonation_ended", identity.subject, req, {
      actor,
    });
    await ctx.events.emit("impersonation_ended", actor, req, {
      actor: null,
      detail: `as ${user?.email ?? identity.subject}`,
    });
    back = `/console/users/${encodeURIComponent(identity.subject)}`;
  } else if (own !== null) {
    await endActorSessions(ctx, own.subject);
    await ctx.events.emit("impersonation_ended", own.subject, req, {
      detail: "ended after its time limit",
    });
  }
  if (req.headers.has("authorization")) {
    return new Response(null, { status: 204 });
  }
  const cookies = [operatorCookie(ctx).clear()];
  if (own === null) {
    cookies.push(sessionCookie(ctx).clear());
    return redirect("/login", [
      ...cookies,
      await ctx.flash.set({
        kind: "notice",
        message: "The impersonation ended. Sign in again.",
      }),
    ]);
  }
  cookies.push(sessionCookie(ctx).serialize(own.token, own.left));
  return redirect(back, [
    ...cookies,
    await ctx.flash.set({
      kind: "notice",
      message: "The impersonation ended: you are back in your own session.",
    }),
  ]);
}

/** Where the user an operator is acting as is kept, for the end. */
function actingKey(operator: string): string {
  return `portcullis:impersonating:${operator}`;
}

/**
 * Every session of the user the operator holds (a sign-in made inside the
 * impersonation replaces its session with another of the same actor):
 * revoked when the impersonation ends, however it ends, so that none is
 * left behind.
 */
async function endActorSessions(
  ctx: ModuleContext,
  operator: string,
): Promise<void> {
  try {
    const [subject] = await ctx.kv.getMany([actingKey(operator)]);
    if (subject === null) return;
    const list = await ctx.registry.list(subject);
    await Promise.all(
      list.filter((s) => s.actor === operator).map((s) =>
        ctx.registry.revoke(subject, s.id)
      ),
    );
    await ctx.kv.delete(actingKey(operator));
  } catch (error) {
    ctx.log(
      `impersonation sessions not all revoked: ${(error as Error)?.message}`,
    );
  }
}

/**
 * After an answer that signs this browser out (`POST /logout`, or any
 * answer clearing the session cookie), the operator's session waiting in
 * `__Host-operator` goes too: revoked, and its cookie cleared. "Log out"
 * then leaves nobody signed in on a shared machine, and no later sign-out
 * in the same browser brings the operator back. `null` when there is
 * nothing to drop.
 *
 * @param ctx The app.
 * @param req The request.
 * @param res Its answer.
 * @returns The answer with the cookie cleared, or `null`.
 */
export function dropParkedOnSignOut(
  ctx: ModuleContext,
  req: Request,
  res: Response,
): Promise<Response> | null {
  const cookie = operatorCookie(ctx);
  const header = req.headers.get("cookie");
  if (header === null || !header.includes(`${cookie.name}=`)) return null;
  const session = sessionCookie(ctx).name;
  const clears = res.headers.getSetCookie().some((c) =>
    c.startsWith(`${session}=`) &&
    (c.startsWith(`${session}=;`) || /;\s*max-age=0(;|$)/i.test(c))
  );
  if (!clears || new URL(req.url).pathname === "/impersonation/end") {
    return null;
  }
  return (async () => {
    const token = cookie.read(req);
    if (token !== null) {
      await ctx.sessions.revoke(token).catch((error) =>
        ctx.log(`parked session not revoked: ${(error as Error)?.message}`)
      );
    }
    const out = new Response(res.body, res);
    out.headers.append("set-cookie", cookie.clear());
    return out;
  })();
}

/**
 * A browser's page after its impersonation ended otherwise (its time ran
 * out, the user's session was signed out): the operator's own session
 * comes back from `__Host-operator` (303 to the same page), and a stale
 * one is dropped. `null` for anything else.
 *
 * @param ctx The app.
 * @param req An anonymous request.
 * @param path Its path.
 * @returns The redirect, or `null`.
 */
export function restoreOperator(
  ctx: ModuleContext,
  req: Request,
  path: string,
): Promise<Response | null> | null {
  // A page a browser navigates to, not a fetch of JSON or the stylesheet.
  if (
    req.method !== "GET" || path === "/style.css" ||
    !(wantsHtml(req) || req.headers.get("sec-fetch-mode") === "navigate")
  ) {
    return null;
  }
  const cookie = operatorCookie(ctx);
  const header = req.headers.get("cookie");
  if (header === null || !header.includes(`${cookie.name}=`)) return null;
  return (async () => {
    const own = await ownSession(ctx, req);
    const url = new URL(req.url);
    const here = safeNextPath(url.pathname + url.search);
    if (own === null) return redirect(here, [cookie.clear()]);
    await ctx.events.emit("impersonation_ended", own.subject, req, {
      detail: "ended after its time limit",
    });
    return redirect(here, [
      cookie.clear(),
      sessionCookie(ctx).serialize(own.token, own.left),
      await ctx.flash.set({
        kind: "notice",
        message: "The impersonation ended: you are back in your own session.",
      }),
    ]);
  })();
}

/**
 * After a request of an impersonation: a write is recorded on the user's
 * side ("an operator acted on your account") and on the operator's, and a
 * page gets the banner with the operator's name and the end button.
 *
 * @param ctx The app.
 * @param req The request.
 * @param res Its answer.
 * @param acting The user and the operator, as the request began.
 * @returns The answer to send.
 */
export async function afterImpersonatedRequest(
  ctx: ModuleContext,
  req: Request,
  res: Response,
  acting: { subject: string; actor: string; expiresAt: number },
): Promise<Response> {
  const method = req.method;
  const path = new URL(req.url).pathname;
  const [user, operator] = await Promise.all([
    ctx.credentials.findById(acting.subject),
    ctx.credentials.findById(acting.actor),
  ]);
  const userEmail = user?.email ?? acting.subject;
  if (
    method !== "GET" && method !== "HEAD" && method !== "OPTIONS" &&
    path !== "/impersonation/end"
  ) {
    await recordWrite(ctx, req, res, acting, userEmail);
  }
  const still = currentIdentity(req);
  if (
    still?.actor === undefined ||
    !(res.headers.get("content-type") ?? "").startsWith("text/html")
  ) {
    return res;
  }
  const banner = String(ctx.views.impersonationBanner({
    operator: operator?.email ?? acting.actor,
    user: userEmail,
    endsAt: new Date(still.expiresAt * 1000).toISOString(),
  }));
  const page = await res.text();
  const open = /<body[^>]*>/i.exec(page);
  const at = open === null ? 0 : open.index + open[0].length;
  const out = new Response(page.slice(0, at) + banner + page.slice(at), res);
  out.headers.delete("content-length");
  return out;
}

/** Records a write of an impersonation on the user's side and the operator's. */
async function recordWrite(
  ctx: ModuleContext,
  req: Request,
  res: Response,
  acting: { subject: string; actor: string },
  userEmail: string,
): Promise<void> {
  const what = `${req.method} ${new URL(req.url).pathname} → ${res.status}`;
  await ctx.events.emit("operator_acted", acting.subject, req, {
    actor: acting.actor,
    detail: what,
  });
  await ctx.events.emit("operator_acted", acting.actor, req, {
    actor: null,
    detail: `as ${userEmail}: ${what}`,
  });
}

/**
 * A write refused before its route ran (a body over the caps, a
 * cross-origin post, a device-bound registration, a console path): when
 * the session it presents is an impersonation, it is recorded on both
 * sides like any other write of one.
 *
 * @param ctx The app.
 * @param req The request (not a `GET`, `HEAD` or `OPTIONS`).
 * @param res Its answer.
 */
export async function recordRefusedWrite(
  ctx: ModuleContext,
  req: Request,
  res: Response,
): Promise<void> {
  let identity = currentIdentity(req);
  if (identity === null) {
    const token = presentedToken(req, ctx.cookieSecure);
    if (token === null) return;
    identity = await ctx.sessions.resolve(token).catch(() => null);
  }
  if (identity?.actor === undefined) return;
  if (new URL(req.url).pathname === "/impersonation/end") return;
  const user = await ctx.credentials.findById(identity.subject);
  await recordWrite(
    ctx,
    req,
    res,
    { subject: identity.subject, actor: identity.actor },
    user?.email ?? identity.subject,
  );
}
