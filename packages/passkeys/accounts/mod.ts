/**
 * Passkeys for `@portcullis/accounts`: added on `/account`, used from
 * `/login` and as the "confirm it's you" step of an account without a
 * password. The browser side is served at `/assets/passkeys.js`. Its table
 * is in `@portcullis/sql`'s migrations; each ceremony's challenge waits for
 * its one use in the app's single-use token table.
 *
 * @example Usage
 * ```ts ignore
 * import { accounts, password } from "@portcullis/accounts";
 * import { passkeys } from "@portcullis/passkeys/accounts";
 *
 * const app = accounts({ ...parts, modules: [password(), passkeys({ rpName: "Example" })] });
 * ```
 *
 * @module
 */
import { Hono } from "hono";
import { SQLPasskeyStore, SQLVerificationTokenStore } from "@portcullis/sql";
import type { AccountsEnv, AccountsModule } from "@portcullis/accounts";
import {
  handleWith,
  hasPassword,
  signedInOwner,
} from "@portcullis/accounts/plugin";
import { PasskeyAuthenticator } from "../passkey_authenticator.ts";
import { passkeyLifecyclePart } from "../passkey_lifecycle.ts";
import { PASSKEYS_BROWSER_SCRIPT } from "../browser_script.ts";
import * as routes from "./routes.ts";
import type { PasskeysSettings } from "./settings.ts";
import * as signup from "./signup.ts";
import * as recover from "./recovery.ts";
import * as upgrades from "./upgrade.ts";
import { defaultPasskeyViews, type PasskeyViews } from "./views.ts";
import { defaultPasskeyPages, type PasskeyPages } from "./pages.ts";

export {
  defaultPasskeyPages,
  type PasskeyPages,
  passkeyRecoverConfirmPage,
  passkeyRecoverPage,
  passkeyRecoveryEmail,
  passkeyRecoverySessionPage,
  passkeySignupPage,
} from "./pages.ts";
export {
  defaultPasskeyViews,
  passkeyLoginButton,
  passkeyReauthButton,
  type PasskeySignals,
  passkeysSection,
  type PasskeyViews,
} from "./views.ts";

/** Options of {@linkcode passkeys}. */
export interface PasskeysModuleOptions {
  /** The relying party's id; default the host name of the app's origin. */
  rpId?: string;
  /** The name authenticators show; default `"Portcullis"`. */
  rpName?: string;
  /** The module's pieces of the pages, over its defaults ({@linkcode defaultPasskeyViews}). */
  views?: Partial<PasskeyViews>;
  /**
   * The module's own pages and mail (sign-up, recovery), over its defaults
   * ({@linkcode defaultPasskeyPages}).
   */
  pages?: Partial<PasskeyPages>;
}

/**
 * The passkeys module.
 *
 * @param options The relying party and the views.
 * @returns The module.
 */
export function passkeys(options: PasskeysModuleOptions = {}): AccountsModule {
  return {
    name: "passkeys",
    setup(ctx) {
      const store = new SQLPasskeyStore(ctx.db);
      const tokens = new SQLVerificationTokenStore(ctx.db);
      const now = ctx.now;
      const authenticator = new PasskeyAuthenticator({
        rpId: options.rpId ?? new URL(ctx.appOrigin).hostname,
        rpName: options.rpName ?? "Portcullis",
        origins: [ctx.appOrigin],
        store,
        // Each challenge waits for its one use in the single-use token table
        // (an atomic consume); its id is the subject, so challenges in
        // flight do not replace each other. Issuing one also removes the
        // table's expired rows (at most once a minute): an expired
        // single-use token of any purpose is refused anyway, and abandoned
        // ceremonies must not pile up.
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
            ((await tokens.consume(id, "webauthn-challenge"))?.expiresAt ??
              0) > now(),
          deleteExpired: (at) => tokens.deleteExpired(at + 1),
        },
        signer: ctx.signer("webauthn-challenge"),
        now,
      });
      const recovery = recover.recoveryParts(ctx);
      const upgrade = upgrades.upgradeParts(ctx);
      const settings: PasskeysSettings = {
        authenticator,
        store,
        script: PASSKEYS_BROWSER_SCRIPT,
        views: {
          ...defaultPasskeyViews,
          ...options.views,
          ...defaultPasskeyPages,
          ...options.pages,
        },
        recovery,
        upgrade,
      };
      const views = settings.views;
      const on = handleWith(ctx, settings);
      const app = new Hono<AccountsEnv>();
      app.get("/assets/passkeys.js", on(routes.passkeysScript));
      // Credentials: the owner in person (no API key, no operator
      // acting as the user).
      app.post(
        "/passkeys/register/options",
        signedInOwner,
        on(routes.registrationOptions),
      );
      app.post("/passkeys/register", signedInOwner, on(routes.register));
      app.post("/passkeys/login/options", on(routes.authenticationOptions));
      app.post("/passkeys/login", on(routes.login));
      app.post(
        "/passkeys/reauth/options",
        signedInOwner,
        on(routes.authenticationOptions),
      );
      app.post("/passkeys/reauth", signedInOwner, on(routes.reauth));
      app.post("/account/passkeys/rename", signedInOwner, on(routes.rename));
      app.post("/account/passkeys/delete", signedInOwner, on(routes.remove));
      // Passkey-only accounts: sign-up, and recovery by a mailed link.
      app.get("/passkeys/signup", on(signup.signupPage));
      app.post("/passkeys/signup/options", on(signup.signupOptions));
      app.post("/passkeys/signup", on(signup.signup));
      app.get("/passkeys/recover", on(recover.recoverPage));
      app.post("/passkeys/recover", on(recover.requestRecovery));
      app.get("/passkeys/recover/callback", on(recover.confirmRecovery));
      app.post("/passkeys/recover/callback", on(recover.redeemRecovery));
      app.get("/passkeys/recover/session", on(recover.recoverySessionPage));
      app.post("/passkeys/recover/options", on(recover.recoveryOptions));
      app.post("/passkeys/recover/register", on(recover.recoveryRegister));
      app.post("/passkeys/recover/password", on(recover.recoveryPassword));
      app.post("/passkeys/recover/end", on(recover.endRecovery));
      // The automatic upgrade right after a sign-in by a first factor.
      app.post(
        "/passkeys/upgrade/options",
        signedInOwner,
        on(upgrades.upgradeOptions),
      );
      app.post(
        "/passkeys/upgrade",
        signedInOwner,
        on(upgrades.upgradeRegister),
      );
      return {
        routes: app,
        lifecycle: [
          passkeyLifecyclePart(store, async (subject) => {
            const user = await ctx.credentials.findById(subject);
            return user !== null && !hasPassword(user);
          }),
        ],
        loginFirst: true,
        loginAutofill: true,
        loginButtons: (next) => views.loginButton(next),
        accountSection: async (_req, user) =>
          views.section(await store.listFor(user.subject), !user.password, {
            rpId: authenticator.rpId,
            userId: authenticator.userHandle(user.subject),
            name: user.email,
          }),
        // A recovery session reaches its own routes and nothing else, and
        // ends (with its links) when the owner evicts earlier holders.
        beforeRoute: recover.recoveryGate(ctx, recovery),
        holderEvicted: (subject) => recover.cancelRecoveries(ctx, subject),
        // A password sign-in's answer also grants the automatic upgrade,
        // and the pages load the script that makes it (`upgrade.ts`).
        afterRoute: upgrades.upgradeHook(ctx, upgrade),
        reauthWays: async (subject) =>
          (await store.listFor(subject)).length > 0
            ? [views.reauthButton()]
            : [],
      };
    },
  };
}
