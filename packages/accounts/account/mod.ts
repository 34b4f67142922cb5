/**
 * The account's own routes, whatever the ways to sign in: sign-out, who am
 * I, the email change, the deletion, "my sessions" and the activity
 * (`POST /logout`, `GET /api/me`, `POST /account/email`,
 * `GET|POST /account/email/confirm`, `POST /account/delete`, the sessions
 * routes, `GET /api/activity`). Every app has them; the routes behind
 * `signedIn` answer 401 without a session.
 *
 * @module
 */
import type { ModuleContext } from "../context.ts";
import type { AppHono } from "../http.ts";
import { handle, signedIn, signedInOrKey, signedInOwner } from "../handle.ts";
import { deleteAccount } from "./account.ts";
import { changeEmail, confirmEmail, confirmEmailForm } from "./email_change.ts";
import { logout, me } from "./session.ts";
import {
  deleteSession,
  listActivity,
  listSessions,
  revokeOtherSessions,
  revokeSessionForm,
} from "./sessions.ts";

/**
 * Mounts the account's routes.
 *
 * @param routes The app's routes.
 * @param ctx Its parts.
 */
export function mountAccount(routes: AppHono, ctx: ModuleContext): void {
  routes.post("/logout", handle(ctx, logout));
  // The address and the deletion: the owner in person (no API key, no
  // operator acting as the user).
  routes.post("/account/email", signedInOwner, handle(ctx, changeEmail));
  routes.get("/account/email/confirm", handle(ctx, confirmEmailForm));
  routes.post("/account/email/confirm", handle(ctx, confirmEmail));
  routes.post("/account/delete", signedInOwner, handle(ctx, deleteAccount));
  routes.post(
    "/account/sessions/revoke",
    signedIn,
    handle(ctx, revokeSessionForm),
  );
  routes.post(
    "/account/sessions/revoke-others",
    signedIn,
    handle(ctx, revokeOtherSessions),
  );
  // Who am I answers an API key too (which key, its scopes).
  routes.get("/api/me", signedInOrKey, handle(ctx, me));
  routes.get("/api/sessions", signedIn, handle(ctx, listSessions));
  routes.delete("/api/sessions/:id", signedIn, handle(ctx, deleteSession));
  routes.get("/api/activity", signedIn, handle(ctx, listActivity));
}
