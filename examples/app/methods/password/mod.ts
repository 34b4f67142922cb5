/**
 * The password: registration, sign-in and sign-out, and the account's
 * lifecycle around it (password change and reset, email change, deletion,
 * sessions, activity), with the notes API. Always part of the app. The
 * routes behind `signedIn` answer 401 without a session.
 *
 * @module
 */
import { passwordLifecyclePart } from "@portcullis/auth/passwords";
import type { AppModule } from "../../module.ts";
import { handle, signedIn } from "../../routes/handle.ts";
import { deleteAccount } from "./account.ts";
import { changeEmail, confirmEmail, confirmEmailForm } from "./email_change.ts";
import { createNote, getNote, me, putNote } from "./api.ts";
import { changePassword, login, logout, register } from "./auth.ts";
import { forgot, forgotForm, passwordLink, reset, resetForm } from "./reset.ts";
import {
  deleteSession,
  listActivity,
  listSessions,
  revokeOtherSessions,
  revokeSessionForm,
} from "./sessions.ts";
import { registerForm } from "../../routes/pages.ts";

/** The password module. */
export const password: AppModule = {
  name: "password",
  routes(app, ctx) {
    app.get("/register", handle(ctx, registerForm));
    app.post("/register", handle(ctx, register));
    app.post("/login", handle(ctx, login));
    app.post("/logout", handle(ctx, logout));
    app.post("/account/password", signedIn, handle(ctx, changePassword));
    app.post("/account/password/link", signedIn, handle(ctx, passwordLink));
    app.get("/password/forgot", handle(ctx, forgotForm));
    app.post("/password/forgot", handle(ctx, forgot));
    app.get("/password/reset", handle(ctx, resetForm));
    app.post("/password/reset", handle(ctx, reset));
    app.post("/account/email", signedIn, handle(ctx, changeEmail));
    app.get("/account/email/confirm", handle(ctx, confirmEmailForm));
    app.post("/account/email/confirm", handle(ctx, confirmEmail));
    app.post("/account/delete", signedIn, handle(ctx, deleteAccount));
    app.post(
      "/account/sessions/revoke",
      signedIn,
      handle(ctx, revokeSessionForm),
    );
    app.post(
      "/account/sessions/revoke-others",
      signedIn,
      handle(ctx, revokeOtherSessions),
    );
    app.get("/api/me", signedIn, handle(ctx, me));
    app.post("/api/notes", signedIn, handle(ctx, createNote));
    app.get("/api/notes/:id", signedIn, handle(ctx, getNote));
    app.put("/api/notes/:id", signedIn, handle(ctx, putNote));
    app.get("/api/sessions", signedIn, handle(ctx, listSessions));
    app.delete("/api/sessions/:id", signedIn, handle(ctx, deleteSession));
    app.get("/api/activity", signedIn, handle(ctx, listActivity));
  },
  lifecycle: (ctx) => [passwordLifecyclePart(ctx.credentials)],
};
