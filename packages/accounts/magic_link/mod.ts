/**
 * Sign-in by an emailed one-time link (`POST /magic-link`,
 * `GET|POST /magic-link/callback`): a form under the password form on
 * `/login` asks for it; the link works once, for 15 minutes, and proves
 * the address, by the same rules as the verification link. Off with
 * `MAGIC_LINK=off` or `SIGN_IN_METHODS=off` (its routes then answer
 * 404). A project without this folder (the scaffold's `--no-magic-link`)
 * has no sign-in links.
 *
 * @module
 */
import { Hono } from "hono";
import { OneTimeTokens } from "@portcullis/auth/verification";
import type { ModuleContext } from "../context.ts";
import type { AccountsEnv, AccountsModule } from "../module.ts";
import { handleWith } from "../handle.ts";
import {
  confirmLink,
  MAGIC_LINK_TTL_MS,
  requestLink,
  signInByLink,
} from "./routes.ts";

/**
 * The magic-link module: sign-in by a link mailed to the account's address.
 *
 * @example Usage
 * ```ts ignore
 * accounts({ ...parts, modules: [password(), verification(), magicLink()] });
 * ```
 *
 * @returns The module.
 */
export function magicLink(): AccountsModule {
  return {
    name: "magic_link",
    setup(ctx: ModuleContext) {
      // The links are single-use tokens of their own lifetime, in the app's
      // single-use token table (an atomic consume).
      const settings = {
        links: new OneTimeTokens({
          store: ctx.tokenStore,
          ttlMs: MAGIC_LINK_TTL_MS,
          now: ctx.now,
        }),
      };
      const on = handleWith(ctx, settings);
      const routes = new Hono<AccountsEnv>();
      routes.post("/magic-link", on(requestLink));
      routes.get("/magic-link/callback", on(confirmLink));
      routes.post("/magic-link/callback", on(signInByLink));
      return {
        routes,
        loginButtons: (next) => ctx.views.magicLinkLogin(next),
      };
    },
  };
}
