/**
 * Email verification: the link mailed at registration proves the address
 * (`GET`/`POST /verify`, `POST /verify/resend`); until then the account
 * creates no notes, and its state shows on `/account`. Optional: a project
 * without this folder (the scaffold's `--no-verification`) never asks for
 * the proof.
 *
 * @module
 */
import { Hono } from "hono";
import { requireVerified } from "@portcullis/auth";
import type { AccountsEnv, AccountsModule } from "../module.ts";
import { handle, signedIn } from "../handle.ts";
import {
  confirmVerify,
  resend,
  sendVerificationLink,
  verify,
} from "./routes.ts";

/**
 * The verification module.
 *
 * @example Usage
 * ```ts ignore
 * accounts({ ...parts, modules: [password(), verification()] });
 * ```
 *
 * @returns The module.
 */
export function verification(): AccountsModule {
  return {
    name: "verification",
    setup(ctx) {
      const routes = new Hono<AccountsEnv>();
      routes.get("/verify", handle(ctx, confirmVerify));
      routes.post("/verify", handle(ctx, verify));
      routes.post("/verify/resend", signedIn, handle(ctx, resend));
      return {
        routes,
        afterRegister: async (user) =>
          await sendVerificationLink(ctx, user.subject, user.email)
            ? "Check your inbox for a link to verify your email address."
            : "The verification email could not be sent: ask for a new one from your account page.",
        accountStatus: (user) =>
          ctx.views.verificationStatus({ verified: user.verified }),
        beforeWrite: (req) => requireVerified(req),
      };
    },
  };
}
