/**
 * Email verification: the link mailed at registration proves the address
 * (`GET`/`POST /verify`, `POST /verify/resend`); until then the account
 * creates no notes, and its state shows on `/account`. Optional: a project
 * without this folder (the scaffold's `--no-verification`) never asks for
 * the proof.
 *
 * @module
 */
import { requireVerified } from "@portcullis/auth";
import type { AppModule } from "../../module.ts";
import { handle, signedIn } from "../../routes/handle.ts";
import { html } from "../../views/html.ts";
import {
  confirmVerify,
  resend,
  sendVerificationLink,
  verify,
} from "./routes.ts";

/** The verification module. */
export const verification: AppModule = {
  name: "verification",
  routes(app, ctx) {
    app.get("/verify", handle(ctx, confirmVerify));
    app.post("/verify", handle(ctx, verify));
    app.post("/verify/resend", signedIn, handle(ctx, resend));
  },
  afterRegister: async (ctx, user) =>
    await sendVerificationLink(ctx, user.subject, user.email)
      ? "Check your inbox for a link to verify your email address."
      : "The verification email could not be sent: ask for a new one from your account page.",
  accountStatus: (user) =>
    user.verified
      ? html`<p id="verified">Your email address is verified.</p>`
      : html`
        <p id="unverified">Your email address is not verified yet.</p>
        <form method="post" action="/verify/resend">
          <input type="hidden" name="next" value="/account">
          <button type="submit">Send a new verification link</button>
        </form>
      `,
  beforeWrite: (req) => requireVerified(req),
};
