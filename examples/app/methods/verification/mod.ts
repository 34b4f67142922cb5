/**
 * Email verification: the link mailed at registration proves the address
 * (`GET`/`POST /verify`, `POST /verify/resend`). Optional: a project without
 * this folder (the scaffold's `--no-verification`) treats every account as
 * unproven.
 *
 * @module
 */
import type { AppModule } from "../../module.ts";
import { handle } from "../../routes/handle.ts";
import { confirmVerify, resend, verify } from "../../routes/verify.ts";

/** The verification module. */
export const verification: AppModule = {
  name: "verification",
  routes(app, ctx) {
    app.get("/verify", handle(ctx, confirmVerify));
    app.post("/verify", handle(ctx, verify));
    app.post("/verify/resend", handle(ctx, resend));
  },
};
