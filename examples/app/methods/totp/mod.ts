/**
 * TOTP as a second factor after the password (`@portcullis/totp`): the
 * code step at `/login/totp`, enrolment and removal on `/account`.
 *
 * @module
 */
import type { AppModule } from "../../module.ts";
import { handle } from "../../routes/handle.ts";
import {
  confirmTotp,
  disableTotp,
  loginTotp,
  secondFactorStep,
  startTotp,
  totpAccountSection,
  totpForm,
} from "../../routes/totp.ts";

/** The TOTP module. */
export const totp: AppModule = {
  name: "totp",
  routes(app, ctx) {
    app.get("/login/totp", handle(ctx, totpForm));
    app.post("/login/totp", handle(ctx, loginTotp));
    app.post("/account/totp", handle(ctx, startTotp));
    app.post("/account/totp/confirm", handle(ctx, confirmTotp));
    app.post("/account/totp/disable", handle(ctx, disableTotp));
  },
  lifecycle: (ctx) =>
    ctx.methods.totp === null ? [] : [ctx.methods.totp.lifecycle],
  accountSection: (ctx, _req, user) =>
    totpAccountSection(ctx, user.subject, !user.password),
  afterPassword: secondFactorStep,
};
