/**
 * "My sessions" and recent activity: `GET /api/sessions`,
 * `DELETE /api/sessions/:id`, the account page's sign-out buttons
 * (`POST /account/sessions/revoke`, `POST /account/sessions/revoke-others`)
 * and `GET /api/activity`.
 *
 * @module
 */
import {
  currentIdentity,
  currentUser,
  errorResponse,
  signOut,
} from "@portcullis/auth";
import type { ModuleContext } from "../context.ts";
import {
  cancelEmailChanges,
  record,
  sessionJson,
  startSession,
} from "../lifecycle.ts";
import { readBody } from "../request_body.ts";
import { json, redirect } from "../respond.ts";

const SESSION_ID = /^[A-Za-z0-9_-]{30}$/;

/** One session as the API answers it. */
export interface SessionView {
  /** The session id. */
  id: string;
  /** When it began (ISO 8601). */
  createdAt: string;
  /** When it was last seen, at most an hour stale (ISO 8601). */
  lastSeenAt: string;
  /** The browser or client it began in. */
  userAgent: string | null;
  /** Whether it is the session of this request. */
  current: boolean;
  /** Whether it is bound to a device key (DBSC) or a DPoP key. */
  bound: boolean;
  /** Whether an operator holds it, acting as the user (impersonation). */
  byOperator: boolean;
}

/**
 * The signed-in user's live sessions, newest first.
 *
 * @param ctx The app.
 * @param req A signed-in request.
 * @returns The sessions.
 */
export async function sessionViews(
  ctx: ModuleContext,
  req: Request,
): Promise<SessionView[]> {
  const identity = currentIdentity(req)!;
  return (await ctx.registry.list(identity.subject)).map((s) => ({
    id: s.id,
    createdAt: new Date(s.createdAt).toISOString(),
    lastSeenAt: new Date(s.lastSeenAt).toISOString(),
    userAgent: s.userAgent,
    current: s.id === identity.jti,
    bound: s.binding !== null,
    byOperator: s.actor !== null,
  }));
}

/**
 * The signed-in user's latest 50 security events, newest first.
 *
 * @param ctx The app.
 * @param subject The user.
 * @returns `{type, at, userAgent, byOperator, detail}` each, `at` in ISO
 * 8601; `byOperator` when an operator did it (which operator is not said).
 */
export async function activityViews(
  ctx: ModuleContext,
  subject: string,
): Promise<
  {
    type: string;
    at: string;
    userAgent: string | null;
    byOperator: boolean;
    detail: string | null;
  }[]
> {
  return (await ctx.eventStore.list(subject, 50)).map((e) => ({
    type: e.type,
    at: new Date(e.at).toISOString(),
    userAgent: e.userAgent,
    byOperator: e.actor !== undefined,
    detail: e.detail ?? null,
  }));
}

/** `GET /api/sessions`: 200 `{sessions: [...]}`; 401 anonymous. */
export async function listSessions(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  return json({ sessions: await sessionViews(ctx, req) });
}

/** `GET /api/activity`: 200 `{events: [...]}`; 401 anonymous. */
export async function listActivity(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  return json({
    events: await activityViews(ctx, currentUser(req)!),
  });
}

async function revokeOne(
  ctx: ModuleContext,
  req: Request,
  id: string,
): Promise<boolean> {
  const subject = currentUser(req)!;
  if (!SESSION_ID.test(id) || !(await ctx.registry.revoke(subject, id))) {
    return false;
  }
  await record(ctx, "session_revoked", subject, req);
  return true;
}

/**
 * `DELETE /api/sessions/:id`: 204, and that session's token answers 401
 * from then on; another user's or an unknown id: 404.
 */
export async function deleteSession(
  ctx: ModuleContext,
  req: Request,
  id: string,
): Promise<Response> {
  if (!(await revokeOne(ctx, req, id))) {
    return errorResponse(req, 404, "not_found", "No such session");
  }
  return new Response(null, { status: 204 });
}

/**
 * `POST /account/sessions/revoke` (form `id`): the account page's sign-out
 * button of one session, without JavaScript. 303 to `/account` (to
 * `/login` when it was this browser's own session); unknown id: 404.
 */
export async function revokeSessionForm(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const id = (await readBody(req))?.fields.id ?? "";
  if (!(await revokeOne(ctx, req, id))) {
    return errorResponse(req, 404, "not_found", "No such session");
  }
  const own = id === currentIdentity(req)!.jti;
  // This browser's own session: its cookie goes too.
  const clear = own ? (await signOut(req)).clearCookie : null;
  return redirect(own ? "/login" : "/account", [
    clear,
    await ctx.flash.set({
      kind: "notice",
      message: own ? "You are signed out." : "That session is signed out.",
    }),
  ]);
}

/**
 * `POST /account/sessions/revoke-others`: signs the user out everywhere and
 * this client in again with a new session. Bearer: 200 `{token,
 * expiresAt}`; a cookie session (a form, a bodiless or a JSON post alike):
 * 303 to `/account` with the new cookie, never the token in a body, which
 * a page's script could read.
 */
export async function revokeOtherSessions(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const subject = currentUser(req)!;
  await ctx.sessions.revokeAll(subject);
  await ctx.registry.clear(subject);
  await cancelEmailChanges(ctx, subject);
  const session = await startSession(ctx, req, subject);
  await record(ctx, "session_revoked", subject, req);
  // With an Authorization header the cookie is ignored: the session is the
  // Bearer token's, and its client takes the new one from the body.
  if (req.headers.has("authorization")) {
    return sessionJson(session);
  }
  return redirect("/account", [
    session.setCookie,
    await ctx.flash.set({
      kind: "notice",
      message: "Every other session is signed out.",
    }),
  ]);
}
