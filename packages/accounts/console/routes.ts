/**
 * The console's routes for operators: the confirmation, the list of users,
 * one user's page and JSON, the ban and its lifting, and signing out a
 * user's sessions. Every route runs only for the request's operator (the
 * module's `beforeRoute` answered 404 to anyone else) and, but the
 * confirmation itself, only once the operator confirmed it is them.
 *
 * @module
 */
import { errorResponse, safeNextPath } from "@portcullis/auth";
import type {
  SQLApiKeyStore,
  SQLBanStore,
  SQLIdentityStore,
  SQLPasskeyStore,
  SQLTotpStore,
  SQLUserDirectory,
} from "@portcullis/sql";
import type { ModuleContext } from "../context.ts";
import { bodyOrBadRequest, type ParsedBody } from "../request_body.ts";
import { json, redirect, render } from "../respond.ts";
import {
  passwordCheckLimits,
  recheck,
  recheckRefusal,
  WRONG_PASSWORD,
} from "../recheck.ts";
import { hasPassword } from "../reauth.ts";
import {
  askIsOperator,
  type ConsoleGrants,
  type IsOperator,
  type Operator,
} from "./operator.ts";

/** What the console's routes share. */
export interface ConsoleSettings {
  /** The application's predicate. */
  isOperator: IsOperator;
  /** How long an impersonation lasts, minutes. */
  impersonationMinutes: number;
  /** Users per page. */
  pageSize: number;
  /** The operators' confirmations. */
  grants: ConsoleGrants;
  /** The bans. */
  bans: SQLBanStore;
  /** The users, as a list. */
  directory: SQLUserDirectory;
  /** API keys. */
  keys: SQLApiKeyStore;
  /** Passkeys. */
  passkeys: SQLPasskeyStore;
  /** TOTP enrolments. */
  totp: SQLTotpStore;
  /** OpenID Connect links. */
  identities: SQLIdentityStore;
  /** The operator of each request the console let in. */
  operators: WeakMap<Request, Operator>;
}

const MAX_REASON = 500;
// deno-lint-ignore no-control-regex -- a reason's control characters become spaces
const CONTROLS = /[\u0000-\u001f\u007f]/g;
const SESSION_ID = /^[A-Za-z0-9_-]{30}$/;

/**
 * The request's operator, confirmed; or the answer: the confirmation page
 * (a browser's GET), or 403 `reauthentication_required`.
 */
export async function confirmedOperator(
  settings: ConsoleSettings,
  ctx: ModuleContext,
  req: Request,
): Promise<Operator | Response> {
  const operator = settings.operators.get(req);
  // beforeRoute let nobody else in; a route reached without it is a bug.
  if (operator === undefined) {
    return errorResponse(req, 404, "not_found", "Nothing here");
  }
  if (await settings.grants.holds(operator)) return operator;
  const url = new URL(req.url);
  if (req.method === "GET" && !url.pathname.startsWith("/api/")) {
    return await confirmPage(
      ctx,
      operator,
      url.pathname + url.search,
      null,
      200,
    );
  }
  return errorResponse(
    req,
    403,
    "reauthentication_required",
    "Confirm it's you at POST /console/confirm (your password) first",
  );
}

async function confirmPage(
  ctx: ModuleContext,
  operator: Operator,
  next: string,
  error: string | null,
  status: number,
): Promise<Response> {
  const user = await ctx.credentials.findById(operator.subject);
  return render(
    ctx,
    ctx.views.consoleConfirm({
      email: operator.email,
      next: consoleNext(next),
      passwordless: user !== null && !hasPassword(user),
      error,
    }),
    status,
  );
}

/** A console path to go back to, or the list. */
function consoleNext(next: string | undefined): string {
  const path = safeNextPath(next);
  return path.startsWith("/console/") && !path.includes("/impersonate") &&
      !/\/(ban|unban|revoke|revoke-all|confirm)$/.test(path.split("?")[0])
    ? path
    : "/console/users";
}

/** `GET /console`: 303 to the list. */
export function consoleHome(): Response {
  return redirect("/console/users");
}

/**
 * `POST /console/confirm` (form or JSON `{password, next?}`): the
 * operator's re-check (the password, counted as every re-check is, or a
 * fresh re-authentication); then the console is open to this session for
 * a while. Form: 303 to `next`; JSON: 200 `{confirmedUntil}`; a wrong
 * password: 401, the page again for a form.
 */
export async function confirm(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
): Promise<Response> {
  const operator = settings.operators.get(req);
  if (operator === undefined) {
    return errorResponse(req, 404, "not_found", "Nothing here");
  }
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const outcome = await recheck(
    ctx,
    req,
    operator.subject,
    body.fields.password,
    passwordCheckLimits(ctx, req, operator.subject),
  );
  if (outcome.kind !== "ok") {
    if (body.kind === "form" && outcome.kind === "wrongPassword") {
      return await confirmPage(
        ctx,
        operator,
        body.fields.next ?? "",
        WRONG_PASSWORD,
        401,
      );
    }
    return recheckRefusal(req, outcome);
  }
  const until = await settings.grants.grant(operator);
  if (body.kind === "form") return redirect(consoleNext(body.fields.next));
  return json({ confirmedUntil: new Date(until).toISOString() });
}

/** The search and the page asked for. */
function listQuery(req: Request): { q: string; after: string } {
  const params = new URL(req.url).searchParams;
  return {
    q: (params.get("q") ?? "").slice(0, 320),
    after: (params.get("after") ?? "").slice(0, 320),
  };
}

async function usersPage(settings: ConsoleSettings, req: Request) {
  const { q, after } = listQuery(req);
  const page = await settings.directory.search({
    contains: q,
    after,
    limit: settings.pageSize,
  });
  return {
    q,
    users: page.users.map((u) => ({
      id: u.id,
      email: u.email,
      verified: u.verifiedAt > 0,
      banned: u.banned,
      createdAt: new Date(u.createdAt).toISOString(),
    })),
    next: page.next,
  };
}

/** `GET /console/users?q=&after=`: the list, searched by email, a page at a time. */
export async function usersList(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
): Promise<Response> {
  const operator = await confirmedOperator(settings, ctx, req);
  if (operator instanceof Response) return operator;
  const page = await usersPage(settings, req);
  const { flash, clear } = await ctx.flash.take(req);
  const params = new URLSearchParams();
  if (page.q !== "") params.set("q", page.q);
  if (page.next !== null) params.set("after", page.next);
  return render(
    ctx,
    ctx.views.consoleUsers({
      email: operator.email,
      query: page.q,
      users: page.users,
      nextPage: page.next === null ? null : `/console/users?${params}`,
      flash,
    }),
    200,
    [clear],
  );
}

/** `GET /api/console/users?q=&after=`: 200 `{users, next}`. */
export async function usersListJson(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
): Promise<Response> {
  const operator = await confirmedOperator(settings, ctx, req);
  if (operator instanceof Response) return operator;
  const page = await usersPage(settings, req);
  return json({ users: page.users, next: page.next });
}

/** Everything the console shows of one user (`GET /api/console/users/:id`). */
export interface ConsoleUserView {
  /** The account. */
  user: {
    id: string;
    email: string;
    verified: boolean;
    banned: boolean;
    createdAt: string;
  };
  /** Its ban, or `null`. */
  ban: { reason: string; bannedAt: string; bannedBy: string } | null;
  /** Its sign-in methods, as lines. */
  methods: string[];
  /** Its live sessions. */
  sessions: {
    id: string;
    createdAt: string;
    lastSeenAt: string;
    userAgent: string | null;
    byOperator: boolean;
  }[];
  /** Its API keys (never a hash). */
  keys: {
    id: string;
    name: string;
    scopes: string[];
    createdAt: string;
    lastUsedAt: string | null;
    expiresAt: string;
  }[];
  /** Its latest security events. */
  activity: {
    type: string;
    at: string;
    byOperator: boolean;
    actor: string | null;
    detail: string | null;
    userAgent: string | null;
  }[];
}

/** Everything the console shows of one user, or `null` when there is none. */
export async function userView(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  id: string,
): Promise<ConsoleUserView | null> {
  const user = await ctx.credentials.findById(id);
  if (user === null) return null;
  const [ban, passkeys, totp, providers, keys, sessions, events] = await Promise
    .all([
      settings.bans.find(id),
      settings.passkeys.listFor(id),
      settings.totp.find(id),
      settings.identities.listFor(id),
      settings.keys.listFor(id),
      ctx.registry.list(id),
      ctx.eventStore.list(id, 50),
    ]);
  const iso = (ms: number) => new Date(ms).toISOString();
  const methods = [
    ...(hasPassword(user) ? ["password"] : []),
    ...(passkeys.length > 0
      ? [`${passkeys.length} passkey${passkeys.length === 1 ? "" : "s"}`]
      : []),
    ...(totp !== null && totp.enabledAt > 0 ? ["TOTP"] : []),
    ...providers.map((p) => `${p.provider} (OpenID Connect)`),
  ];
  return {
    user: {
      id: user.id,
      email: user.email,
      verified: user.verifiedAt > 0,
      banned: ban !== null,
      createdAt: iso(user.createdAt),
    },
    ban: ban === null ? null : {
      reason: ban.reason,
      bannedAt: iso(ban.bannedAt),
      bannedBy: ban.bannedBy,
    },
    methods,
    sessions: sessions.map((s) => ({
      id: s.id,
      createdAt: iso(s.createdAt),
      lastSeenAt: iso(s.lastSeenAt),
      userAgent: s.userAgent,
      byOperator: s.actor !== null,
    })),
    keys: keys.map((k) => ({
      id: k.id,
      name: k.name,
      scopes: k.scopes,
      createdAt: iso(k.createdAt),
      lastUsedAt: k.lastUsedAt > 0 ? iso(k.lastUsedAt) : null,
      expiresAt: iso(k.expiresAt),
    })),
    activity: events.map((e) => ({
      type: e.type,
      at: iso(e.at),
      byOperator: e.actor !== undefined,
      actor: e.actor ?? null,
      detail: e.detail ?? null,
      userAgent: e.userAgent,
    })),
  };
}

/**
 * Whether the operator may act as this user: not themselves, not banned,
 * and not an operator (a predicate that fails says it is one).
 */
export async function mayImpersonate(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  operator: Operator,
  view: {
    user: { id: string; email: string; verified: boolean };
    ban: unknown;
  },
): Promise<"ok" | "self" | "banned" | "operator"> {
  if (view.user.id === operator.subject) return "self";
  if (view.ban !== null) return "banned";
  // A predicate that fails says nothing: the target counts as an operator.
  const target = await askIsOperator(ctx, settings.isOperator, {
    subject: view.user.id,
    email: view.user.email,
    verified: view.user.verified,
  });
  return target === false ? "ok" : "operator";
}

/** `GET /console/users/:id`: one user's page; 404 for an unknown id. */
export async function userDetail(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
  id: string,
): Promise<Response> {
  const operator = await confirmedOperator(settings, ctx, req);
  if (operator instanceof Response) return operator;
  const view = await userView(ctx, settings, id);
  if (view === null) {
    return errorResponse(req, 404, "no_such_user", "No such user");
  }
  const { flash, clear } = await ctx.flash.take(req);
  return render(
    ctx,
    ctx.views.consoleUser({
      email: operator.email,
      ...view,
      canImpersonate:
        (await mayImpersonate(ctx, settings, operator, view)) === "ok",
      impersonationMinutes: settings.impersonationMinutes,
      flash,
    }),
    200,
    [clear],
  );
}

/** `GET /api/console/users/:id`: 200 with the user's account; 404 unknown. */
export async function userDetailJson(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
  id: string,
): Promise<Response> {
  const operator = await confirmedOperator(settings, ctx, req);
  if (operator instanceof Response) return operator;
  const view = await userView(ctx, settings, id);
  if (view === null) {
    return errorResponse(req, 404, "no_such_user", "No such user");
  }
  return json(view);
}

/** The confirmed operator, the user and the body of a console form, or the answer. */
export async function consoleAction(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
  id: string,
): Promise<
  | {
    operator: Operator;
    user: { id: string; email: string };
    body: ParsedBody;
  }
  | Response
> {
  const operator = await confirmedOperator(settings, ctx, req);
  if (operator instanceof Response) return operator;
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const user = await ctx.credentials.findById(id);
  if (user === null) {
    return errorResponse(req, 404, "no_such_user", "No such user");
  }
  return { operator, user: { id: user.id, email: user.email }, body };
}

/** The answer to a console form: 303 back to the user's page, or JSON. */
async function done(
  ctx: ModuleContext,
  body: ParsedBody,
  userId: string,
  message: string,
  data: Record<string, unknown>,
): Promise<Response> {
  if (body.kind !== "form") return json(data);
  return redirect(`/console/users/${encodeURIComponent(userId)}`, [
    await ctx.flash.set({ kind: "notice", message }),
  ]);
}

/**
 * Records a console action: on the user's side (with the operator as its
 * actor) and on the operator's.
 */
export async function recordAction(
  ctx: ModuleContext,
  req: Request,
  operator: Operator,
  user: { id: string; email: string },
  type: "account_banned" | "account_unbanned" | "session_revoked",
  detail: string,
): Promise<void> {
  // The user's side says what happened and that an operator did it; the
  // reason of a ban (an operator's note) stays on the operator's side and
  // in the ban itself.
  await ctx.events.emit(type, user.id, req, {
    actor: operator.subject,
    detail: type === "account_banned" ? null : detail,
  });
  await ctx.events.emit("operator_acted", operator.subject, req, {
    actor: null,
    detail: `${user.email}: ${detail}`,
  });
}

/**
 * `POST /console/users/:id/ban` (`{reason}`): records the ban, signs the
 * user out everywhere; from then on every sign-in of the account is
 * refused as a wrong password would be, and its API keys answer 401.
 * Form: 303 to the user's page; JSON: 200 `{banned: true}`; 422 without a
 * reason; 409 already banned; 403 for an operator's account or one's own.
 */
export async function ban(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
  id: string,
): Promise<Response> {
  const action = await consoleAction(ctx, settings, req, id);
  if (action instanceof Response) return action;
  const { operator, user, body } = action;
  const reason = (body.fields.reason ?? "").replace(
    CONTROLS,
    " ",
  )
    .trim();
  if (reason === "" || reason.length > MAX_REASON) {
    return errorResponse(
      req,
      422,
      "invalid_reason",
      `A ban needs a reason of 1 to ${MAX_REASON} characters`,
    );
  }
  const view = await userView(ctx, settings, user.id);
  const may = view === null
    ? "ok"
    : await mayImpersonate(ctx, settings, operator, { ...view, ban: null });
  if (may === "self" || may === "operator") {
    return errorResponse(
      req,
      403,
      "target_is_operator",
      "An operator's account is not banned from the console",
    );
  }
  const banned = await settings.bans.ban({
    subject: user.id,
    reason,
    bannedBy: operator.subject,
    bannedAt: ctx.now(),
  });
  if (!banned) {
    return errorResponse(
      req,
      409,
      "already_banned",
      "The account is banned already",
    );
  }
  // Every session ends now; new ones are refused (refusesSignIn).
  await ctx.sessions.revokeAll(user.id);
  await ctx.registry.clear(user.id).catch(() => {});
  await recordAction(ctx, req, operator, user, "account_banned", reason);
  return await done(ctx, body, user.id, `${user.email} is banned.`, {
    banned: true,
  });
}

/**
 * `POST /console/users/:id/unban`: lifts the ban (sign-ins work again, the
 * API keys come back; sessions ended by the ban stay ended). Form: 303;
 * JSON: 200 `{banned: false}`; 409 when not banned.
 */
export async function unban(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
  id: string,
): Promise<Response> {
  const action = await consoleAction(ctx, settings, req, id);
  if (action instanceof Response) return action;
  const { operator, user, body } = action;
  if (!(await settings.bans.unban(user.id))) {
    return errorResponse(req, 409, "not_banned", "The account is not banned");
  }
  await recordAction(
    ctx,
    req,
    operator,
    user,
    "account_unbanned",
    "ban lifted",
  );
  return await done(ctx, body, user.id, `${user.email} may sign in again.`, {
    banned: false,
  });
}

/**
 * `POST /console/users/:id/sessions/revoke` (`{session}`): signs out one of
 * the user's sessions. Form: 303; JSON: 200 `{revoked: true}`; 404 for a
 * session the user does not have.
 */
export async function revokeSession(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
  id: string,
): Promise<Response> {
  const action = await consoleAction(ctx, settings, req, id);
  if (action instanceof Response) return action;
  const { operator, user, body } = action;
  const session = body.fields.session ?? "";
  if (
    !SESSION_ID.test(session) || !(await ctx.registry.revoke(user.id, session))
  ) {
    return errorResponse(req, 404, "not_found", "No such session");
  }
  await recordAction(
    ctx,
    req,
    operator,
    user,
    "session_revoked",
    "one session signed out by an operator",
  );
  return await done(ctx, body, user.id, "The session is signed out.", {
    revoked: true,
  });
}

/**
 * `POST /console/users/:id/sessions/revoke-all`: signs the user out
 * everywhere (API keys are not sessions: they stay). Form: 303; JSON: 200
 * `{revoked: true}`.
 */
export async function revokeAll(
  ctx: ModuleContext,
  settings: ConsoleSettings,
  req: Request,
  id: string,
): Promise<Response> {
  const action = await consoleAction(ctx, settings, req, id);
  if (action instanceof Response) return action;
  const { operator, user, body } = action;
  await ctx.sessions.revokeAll(user.id);
  await ctx.registry.clear(user.id).catch(() => {});
  await recordAction(
    ctx,
    req,
    operator,
    user,
    "session_revoked",
    "every session signed out by an operator",
  );
  return await done(ctx, body, user.id, "Every session is signed out.", {
    revoked: true,
  });
}
