/**
 * TOTP as a second factor after the password (`@portcullis/totp`): the
 * code step at `/login/totp`, enrolment and removal on `/account`.
 *
 * Settings (environment variables): `TOTP` — `on` (default) or `off`
 * (`SIGN_IN_METHODS=off` turns it off too);
 * `TOTP_ISSUER` — the site's name authenticator apps show (default
 * `Portcullis`). Its tables are in the app's SQL migrations.
 *
 * @module
 */
import { SQLCredentialStore, SQLTotpStore } from "@portcullis/sql";
import { deriveSecretKey, TotpAuthenticator } from "@portcullis/totp";
import { totpLifecyclePart } from "@portcullis/totp/lifecycle";
import { type AppModule, settingsOf } from "../../module.ts";
import {
  methodOn,
  purposeKeyList,
  purposeSigner,
  whenOn,
} from "../../sign_in_methods.ts";
import {
  confirmTotp,
  disableTotp,
  loginTotp,
  secondFactorStep,
  startTotp,
  totpForm,
  type TotpSettings,
} from "./routes.ts";
import { totpSection } from "./views/auth/totp.ts";

/** The TOTP module. */
export const totp: AppModule<TotpSettings> = {
  name: "totp",
  setup({ env, db, secret, now }) {
    if (!methodOn(env, "TOTP")) return null;
    const users = new SQLCredentialStore(db);
    const store = new SQLTotpStore(db);
    const authenticator = new TotpAuthenticator({
      store,
      issuer: env.TOTP_ISSUER ?? "Portcullis",
      // TOTP secrets are sealed at rest with AES-GCM keys derived from the
      // "totp-secret" purpose; the pending value is signed for its own.
      secretKeys: purposeKeyList(secret, "totp-secret").then((keys) =>
        Promise.all(keys.map(deriveSecretKey))
      ),
      pending: purposeSigner(secret, "totp-pending"),
      // The pending value is bound to the password hash as well: a password
      // change or reset between the two steps ends that sign-in.
      accountState: async (subject) =>
        (await users.findById(subject))?.passwordHash ?? null,
      now,
    });
    return { authenticator, store };
  },
  routes(app, ctx) {
    const on = whenOn(ctx, totp);
    app.get("/login/totp", on(totpForm));
    app.post("/login/totp", on(loginTotp));
    app.post("/account/totp", on.signedIn(startTotp));
    app.post("/account/totp/confirm", on.signedIn(confirmTotp));
    app.post("/account/totp/disable", on.signedIn(disableTotp));
  },
  lifecycle(ctx) {
    const settings = settingsOf(ctx, totp);
    return settings === null ? [] : [totpLifecyclePart(settings.store)];
  },
  async accountSection(ctx, _req, user) {
    const settings = settingsOf(ctx, totp);
    if (settings === null) return null;
    const enabled = await settings.authenticator.isEnabled(user.subject);
    return totpSection({
      enabled,
      recoveryCodesLeft: enabled
        ? await settings.authenticator.recoveryCodesLeft(user.subject)
        : 0,
      passwordless: !user.password,
    });
  },
  async hasSecondFactor(ctx, subject) {
    return await settingsOf(ctx, totp)?.authenticator.isEnabled(subject) ??
      false;
  },
  afterPassword(ctx, req, subject, next, form) {
    const settings = settingsOf(ctx, totp);
    return settings === null
      ? Promise.resolve(null)
      : secondFactorStep(ctx, settings, req, subject, next, form);
  },
};
