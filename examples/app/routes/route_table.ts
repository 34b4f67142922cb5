/**
 * Every route of the app in one table: its path, and a handler per method.
 * The router dispatches from this table alone, so it is also the list of
 * what the app serves (`docs/http_contract.md` is checked against it). A
 * sign-in method that is off keeps its routes, whose handlers answer 404.
 *
 * @module
 */
import { errorResponse, requireAuth } from "@portcullis/auth";
import type { AppContext } from "../context.ts";
import { STYLESHEET } from "../views/style.ts";
import {
  changeEmail,
  confirmEmail,
  confirmEmailForm,
  deleteAccount,
} from "./account.ts";
import { createNote, getNote, me, putNote } from "./api.ts";
import { changePassword, login, logout, register } from "./auth.ts";
import { oidcCallback, oidcReauth, oidcStart } from "./oidc.ts";
import { confirmLink } from "./oidc_link.ts";
import { account, home, loginForm, registerForm } from "./pages.ts";
import * as passkeys from "./passkeys.ts";
import {
  forgot,
  forgotForm,
  passwordLink,
  reset,
  resetForm,
} from "./password.ts";
import {
  deleteSession,
  listActivity,
  listSessions,
  revokeOtherSessions,
  revokeSessionForm,
} from "./sessions.ts";
import {
  confirmTotp,
  disableTotp,
  loginTotp,
  startTotp,
  totpForm,
} from "./totp.ts";
// [verification] begin
import { confirmVerify, resend, verify } from "./verify.ts";
// [verification] end

type Answer = Promise<Response> | Response;

/** A route's handler: the app, the request, and the `:param` of its path. */
export type RouteHandler = (
  ctx: AppContext,
  req: Request,
  param: string,
) => Answer;

/** One route. */
export interface Route {
  /** The path; one `:name` segment matches any one segment. */
  readonly path: string;
  /** The handlers by method; `GET` answers `HEAD` too. */
  readonly methods: Readonly<Partial<Record<string, RouteHandler>>>;
}

const signedIn = requireAuth();

/** The app's routes. */
export const ROUTES: readonly Route[] = [
  { path: "/", methods: { GET: home } },
  { path: "/style.css", methods: { GET: stylesheet } },
  { path: "/register", methods: { GET: registerForm, POST: register } },
  { path: "/login", methods: { GET: loginForm, POST: login } },
  { path: "/logout", methods: { POST: logout } },
  // [verification] begin
  { path: "/verify", methods: { GET: confirmVerify, POST: verify } },
  { path: "/verify/resend", methods: { POST: resend } },
  // [verification] end
  {
    path: "/account",
    methods: {
      GET: (ctx, req) =>
        signedIn(req, () => Promise.resolve(account(ctx, req))),
    },
  },
  { path: "/account/password", methods: { POST: changePassword } },
  { path: "/account/password/link", methods: { POST: passwordLink } },
  { path: "/password/forgot", methods: { GET: forgotForm, POST: forgot } },
  { path: "/password/reset", methods: { GET: resetForm, POST: reset } },
  { path: "/account/email", methods: { POST: changeEmail } },
  {
    path: "/account/email/confirm",
    methods: { GET: confirmEmailForm, POST: confirmEmail },
  },
  { path: "/account/delete", methods: { POST: deleteAccount } },
  { path: "/account/sessions/revoke", methods: { POST: revokeSessionForm } },
  {
    path: "/account/sessions/revoke-others",
    methods: { POST: revokeOtherSessions },
  },
  { path: "/api/me", methods: { GET: me } },
  { path: "/api/notes", methods: { POST: createNote } },
  {
    path: "/api/notes/:id",
    methods: {
      GET: (ctx, req, id) => getNote(ctx, req, id),
      PUT: (ctx, req, id) => putNote(ctx, req, id),
    },
  },
  { path: "/api/sessions", methods: { GET: listSessions } },
  {
    path: "/api/sessions/:id",
    methods: { DELETE: (ctx, req, id) => deleteSession(ctx, req, id) },
  },
  { path: "/api/activity", methods: { GET: listActivity } },
  // TOTP
  { path: "/login/totp", methods: { GET: totpForm, POST: loginTotp } },
  { path: "/account/totp", methods: { POST: startTotp } },
  { path: "/account/totp/confirm", methods: { POST: confirmTotp } },
  { path: "/account/totp/disable", methods: { POST: disableTotp } },
  // OpenID Connect
  { path: "/login/oidc/link", methods: { POST: confirmLink } },
  { path: "/login/oidc/:provider", methods: { GET: oidcStart } },
  { path: "/login/oidc/:provider/callback", methods: { GET: oidcCallback } },
  { path: "/login/oidc/:provider/reauth", methods: { GET: oidcReauth } },
  // Passkeys
  { path: "/assets/passkeys.js", methods: { GET: passkeys.passkeysScript } },
  {
    path: "/passkeys/register/options",
    methods: { POST: passkeys.registrationOptions },
  },
  { path: "/passkeys/register", methods: { POST: passkeys.register } },
  {
    path: "/passkeys/login/options",
    methods: { POST: passkeys.authenticationOptions },
  },
  { path: "/passkeys/login", methods: { POST: passkeys.login } },
  {
    path: "/passkeys/reauth/options",
    methods: { POST: passkeys.reauthOptions },
  },
  { path: "/passkeys/reauth", methods: { POST: passkeys.reauth } },
  { path: "/account/passkeys/rename", methods: { POST: passkeys.rename } },
  { path: "/account/passkeys/delete", methods: { POST: passkeys.remove } },
  // Device-bound sessions: identityMiddleware answers these; the router
  // sees them only when the app turned deviceBound off.
  { path: "/auth/dbsc/start", methods: { POST: deviceBoundOff } },
  { path: "/auth/dbsc/refresh", methods: { POST: deviceBoundOff } },
];

function deviceBoundOff(_ctx: AppContext, req: Request): Response {
  return errorResponse(
    req,
    404,
    "device_bound_off",
    "Device-bound sessions are off",
  );
}

const exact = new Map<string, Route>();
const patterns: { pattern: RegExp; route: Route }[] = [];
for (const route of ROUTES) {
  if (route.path.includes("/:")) {
    const source = route.path.replace(/\/:[a-z]+/, "/([^/]+)");
    patterns.push({ pattern: new RegExp(`^${source}$`), route });
  } else exact.set(route.path, route);
}

/**
 * Answers a request from the table: the route's handler for the method;
 * 405 with `Allow` for a method the route lacks; 404 for a path no route
 * has. A path without a parameter wins over one with (`/login/oidc/link`).
 *
 * @param ctx The app.
 * @param req The request.
 * @param path The URL's path.
 * @param method The method, `HEAD` already read as `GET`.
 * @returns The answer.
 */
export function dispatch(
  ctx: AppContext,
  req: Request,
  path: string,
  method: string,
): Answer {
  let route = exact.get(path);
  let param = "";
  if (route === undefined) {
    for (const p of patterns) {
      const m = p.pattern.exec(path);
      if (m !== null) {
        route = p.route;
        param = m[1];
        break;
      }
    }
  }
  if (route === undefined) {
    return errorResponse(req, 404, "not_found", "Nothing here");
  }
  const handler = route.methods[method];
  if (handler !== undefined) return handler(ctx, req, param);
  return errorResponse(req, 405, "method_not_allowed", "Method not allowed", {
    allow: allowed(route),
  });
}

/**
 * A route's `Allow` value: its methods, `HEAD` after `GET`.
 *
 * @param route The route.
 * @returns For example `"GET, HEAD, POST"`.
 */
export function allowed(route: Route): string {
  return Object.keys(route.methods).flatMap((m) =>
    m === "GET" ? ["GET", "HEAD"] : [m]
  ).join(", ");
}

function stylesheet(): Response {
  return new Response(STYLESHEET, {
    headers: {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "public, max-age=3600",
    },
  });
}
