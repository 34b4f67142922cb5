/**
 * The account lifecycle's routes, dispatched from `app.ts`'s router:
 * password reset, email change, deletion, "my sessions", activity, and the
 * stylesheet.
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";
import type { AppContext } from "../context.ts";
import { STYLESHEET } from "../views/style.ts";
import {
  changeEmail,
  confirmEmail,
  confirmEmailForm,
  deleteAccount,
} from "./account.ts";
import { forgot, forgotForm, reset, resetForm } from "./password.ts";
import {
  deleteSession,
  listActivity,
  listSessions,
  revokeOtherSessions,
  revokeSessionForm,
} from "./sessions.ts";

const SESSION_PATH = /^\/api\/sessions\/([^/]+)$/;

type Answer = Promise<Response> | Response;

/**
 * Answers a lifecycle route, or `null` when the path is not one.
 *
 * @param ctx The app.
 * @param req The request.
 * @param path The URL's path.
 * @param method The method (`HEAD` already read as `GET`).
 * @returns The answer, or `null`.
 */
export function lifecycleRoute(
  ctx: AppContext,
  req: Request,
  path: string,
  method: string,
): Answer | null {
  const only = (allowed: string, handler: () => Answer): Answer =>
    method === allowed ? handler() : notAllowed(req, allowed);
  const either = (get: () => Answer, post: () => Answer): Answer =>
    method === "POST" ? post() : only("GET", get);
  switch (path) {
    case "/style.css":
      return only("GET", stylesheet);
    case "/password/forgot":
      return either(forgotForm, () => forgot(ctx, req));
    case "/password/reset":
      return either(() => resetForm(ctx, req), () => reset(ctx, req));
    case "/account/email":
      return only("POST", () => changeEmail(ctx, req));
    case "/account/email/confirm":
      return either(
        () => confirmEmailForm(ctx, req),
        () => confirmEmail(ctx, req),
      );
    case "/account/delete":
      return only("POST", () => deleteAccount(ctx, req));
    case "/account/sessions/revoke":
      return only("POST", () => revokeSessionForm(ctx, req));
    case "/account/sessions/revoke-others":
      return only("POST", () => revokeOtherSessions(ctx, req));
    case "/api/sessions":
      return only("GET", () => listSessions(ctx, req));
    case "/api/activity":
      return only("GET", () => listActivity(ctx, req));
  }
  const session = SESSION_PATH.exec(path);
  if (session !== null) {
    return only("DELETE", () => deleteSession(ctx, req, session[1]));
  }
  return null;
}

function stylesheet(): Response {
  return new Response(STYLESHEET, {
    headers: {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "public, max-age=3600",
    },
  });
}

function notAllowed(req: Request, allowed: string): Response {
  return errorResponse(req, 405, "method_not_allowed", "Method not allowed", {
    allow: allowed === "GET" ? "GET, HEAD" : allowed,
  });
}
