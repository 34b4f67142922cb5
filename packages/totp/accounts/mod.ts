/**
 * TOTP as a second factor for `@portcullis/accounts`: the code step at
 * `/login/totp` after the password (or a provider's sign-in), enrolment and
 * removal on `/account`. Its tables are in `@portcullis/sql`'s migrations.
 *
 * @example Usage
 * ```ts ignore
 * import { accounts, password } from "@portcullis/accounts";
 * import { totp } from "@portcullis/totp/accounts";
 *
 * const app = accounts({ ...parts, modules: [password(), totp({ issuer: "Example" })] });
 * ```
 *
 * @module
 */
import { Hono } from "hono";
import { SQLTotpStore } from "@portcullis/sql";
import type { AccountsEnv, AccountsModule } from "@portcullis/accounts";
import { handleWith, signedInOwner } from "@portcullis/accounts/plugin";
import { deriveSecretKey } from "../secret_box.ts";
import { TotpAuthenticator } from "../totp_authenticator.ts";
import { totpLifecyclePart } from "../totp_lifecycle.ts";
import {
  confirmTotp,
  disableTotp,
  loginTotp,
  secondFactorStep,
  startTotp,
  totpForm,
  type TotpSettings,
} from "./routes.ts";
import { defaultTotpViews, type TotpViews } from "./views.ts";

export {
  defaultTotpViews,
  recoveryCodesPage,
  totpEnrolPage,
  totpLoginPage,
  totpSection,
  type TotpViews,
} from "./views.ts";

/** Options of {@linkcode totp}. */
export interface TotpModuleOptions {
  /** The site's name authenticator apps show; default `"Portcullis"`. */
  issuer?: string;
  /** The module's pages, over its defaults ({@linkcode defaultTotpViews}). */
  views?: Partial<TotpViews>;
}

/**
 * The TOTP module: a second factor after the password.
 *
 * @param options The issuer's name and the views.
 * @returns The module.
 */
export function totp(options: TotpModuleOptions = {}): AccountsModule {
  return {
    name: "totp",
    setup(ctx) {
      const store = new SQLTotpStore(ctx.db);
      const authenticator = new TotpAuthenticator({
        store,
        issuer: options.issuer ?? "Portcullis",
        // TOTP secrets are sealed at rest with AES-GCM keys derived from the
        // "totp-secret" purpose; the pending value is signed for its own.
        secretKeys: ctx.keyList("totp-secret").then((keys) =>
          Promise.all(keys.map(deriveSecretKey))
        ),
        pending: ctx.signer("totp-pending"),
        // The pending value is bound to the password hash as well: a
        // password change or reset between the two steps ends that sign-in.
        accountState: async (subject) =>
          (await ctx.credentials.findById(subject))?.passwordHash ?? null,
        now: ctx.now,
      });
      const settings: TotpSettings = {
        authenticator,
        store,
        views: { ...defaultTotpViews, ...options.views },
      };
      const on = handleWith(ctx, settings);
      const routes = new Hono<AccountsEnv>();
      routes.get("/login/totp", on(totpForm));
      routes.post("/login/totp", on(loginTotp));
      // A credential: the owner in person (no API key, no operator acting
      // as the user).
      routes.post("/account/totp", signedInOwner, on(startTotp));
      routes.post("/account/totp/confirm", signedInOwner, on(confirmTotp));
      routes.post("/account/totp/disable", signedInOwner, on(disableTotp));
      return {
        routes,
        lifecycle: [totpLifecyclePart(store)],
        async accountSection(_req, user) {
          const enabled = await authenticator.isEnabled(user.subject);
          return settings.views.section({
            enabled,
            recoveryCodesLeft: enabled
              ? await authenticator.recoveryCodesLeft(user.subject)
              : 0,
            passwordless: !user.password,
          });
        },
        hasSecondFactor: (subject) => authenticator.isEnabled(subject),
        afterPassword: (req, subject, next, form) =>
          secondFactorStep(ctx, settings, req, subject, next, form),
      };
    },
  };
}
