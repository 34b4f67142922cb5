/**
 * Passkeys (`@portcullis/passkeys`): added on `/account`, used from
 * `/login` (a one-tap button above the other ways), and a way to confirm
 * a user without a password.
 *
 * Settings (environment variables): `PASSKEYS` — `on` (default) or `off`
 * (`SIGN_IN_METHODS=off` turns it off too);
 * `PASSKEYS_RP_ID` — the relying party id (default: `APP_ORIGIN`'s host
 * name); `PASSKEYS_RP_NAME` (default `Portcullis`). Its table (`passkeys`)
 * is in the app's SQL migrations; challenges wait in the single-use token
 * table.
 *
 * @module
 */
import {
  PasskeyAuthenticator,
  passkeyLifecyclePart,
} from "@portcullis/passkeys";
import { PASSKEYS_BROWSER_SCRIPT } from "@portcullis/passkeys/browser-script";
import { SQLPasskeyStore, SQLVerificationTokenStore } from "@portcullis/sql";
import { type AppModule, settingsOf } from "../../module.ts";
import { methodOn, purposeSigner, whenOn } from "../../sign_in_methods.ts";
import * as routes from "./routes.ts";
import {
  passkeyLoginButton,
  passkeyReauthButton,
  passkeysSection,
} from "./views/auth/passkeys.ts";

/** The passkeys module. */
export const passkeys: AppModule<routes.PasskeysSettings> = {
  name: "passkeys",
  setup({ env, db, secret, appOrigin, now = Date.now }) {
    if (!methodOn(env, "PASSKEYS")) return null;
    const store = new SQLPasskeyStore(db);
    const tokens = new SQLVerificationTokenStore(db);
    const authenticator = new PasskeyAuthenticator({
      rpId: env.PASSKEYS_RP_ID ?? new URL(appOrigin).hostname,
      rpName: env.PASSKEYS_RP_NAME ?? "Portcullis",
      origins: [appOrigin],
      store,
      // Each challenge waits for its one use in the single-use token table
      // (an atomic consume); its id is the subject, so challenges in flight
      // do not replace each other. Issuing one also removes the table's
      // expired rows (at most once a minute): an expired single-use token
      // of any purpose is refused anyway, and abandoned ceremonies must not
      // pile up.
      challenges: {
        put: (id, expiresAt) =>
          tokens.put({
            tokenHash: id,
            purpose: "webauthn-challenge",
            subject: id,
            email: "",
            expiresAt,
            createdAt: now(),
          }),
        consume: async (id) =>
          ((await tokens.consume(id, "webauthn-challenge"))?.expiresAt ?? 0) >
            now(),
        deleteExpired: (at) => tokens.deleteExpired(at + 1),
      },
      signer: purposeSigner(secret, "webauthn-challenge"),
      now,
    });
    return { authenticator, store, script: PASSKEYS_BROWSER_SCRIPT };
  },
  routes(app, ctx) {
    const on = whenOn(ctx, passkeys);
    app.get("/assets/passkeys.js", on(routes.passkeysScript));
    app.post(
      "/passkeys/register/options",
      on.signedIn(routes.registrationOptions),
    );
    app.post("/passkeys/register", on.signedIn(routes.register));
    app.post("/passkeys/login/options", on(routes.authenticationOptions));
    app.post("/passkeys/login", on(routes.login));
    app.post(
      "/passkeys/reauth/options",
      on.signedIn(routes.authenticationOptions),
    );
    app.post("/passkeys/reauth", on.signedIn(routes.reauth));
    app.post("/account/passkeys/rename", on.signedIn(routes.rename));
    app.post("/account/passkeys/delete", on.signedIn(routes.remove));
  },
  lifecycle(ctx) {
    const settings = settingsOf(ctx, passkeys);
    return settings === null ? [] : [passkeyLifecyclePart(settings.store)];
  },
  loginFirst: true,
  loginButtons: (ctx, next) =>
    settingsOf(ctx, passkeys) === null ? null : passkeyLoginButton(next),
  async accountSection(ctx, _req, user) {
    const settings = settingsOf(ctx, passkeys);
    return settings === null ? null : passkeysSection(
      await settings.store.listFor(user.subject),
      !user.password,
    );
  },
  async reauthWays(ctx, subject) {
    const settings = settingsOf(ctx, passkeys);
    return settings !== null &&
        (await settings.store.listFor(subject)).length > 0
      ? [passkeyReauthButton()]
      : [];
  },
};
