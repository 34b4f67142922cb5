/**
 * Passkeys (`@portcullis/passkeys`): added on `/account`, used from
 * `/login` (a one-tap button above the other ways), and a way to confirm
 * a user without a password.
 *
 * @module
 */
import { html } from "../../views/html.ts";
import type { AppModule } from "../../module.ts";
import { handle } from "../../routes/handle.ts";
import * as routes from "../../routes/passkeys.ts";

/** The passkeys module. */
export const passkeys: AppModule = {
  name: "passkeys",
  routes(app, ctx) {
    app.get("/assets/passkeys.js", handle(ctx, routes.passkeysScript));
    app.post(
      "/passkeys/register/options",
      handle(ctx, routes.registrationOptions),
    );
    app.post("/passkeys/register", handle(ctx, routes.register));
    app.post(
      "/passkeys/login/options",
      handle(ctx, routes.authenticationOptions),
    );
    app.post("/passkeys/login", handle(ctx, routes.login));
    app.post("/passkeys/reauth/options", handle(ctx, routes.reauthOptions));
    app.post("/passkeys/reauth", handle(ctx, routes.reauth));
    app.post("/account/passkeys/rename", handle(ctx, routes.rename));
    app.post("/account/passkeys/delete", handle(ctx, routes.remove));
  },
  lifecycle: (ctx) =>
    ctx.methods.passkeys === null ? [] : [ctx.methods.passkeys.lifecycle],
  loginFirst: true,
  loginButtons: routes.passkeysLoginButton,
  accountSection: (ctx, _req, user) =>
    routes.passkeysAccountSection(ctx, user.subject, !user.password),
  async reauthWays(ctx, subject) {
    const m = ctx.methods.passkeys;
    return m !== null && (await m.list(subject)).length > 0
      ? [
        html`<li><button type="button" id="passkey-reauth" data-next="/account" hidden>Confirm with a passkey</button></li>`,
      ]
      : [];
  },
};
