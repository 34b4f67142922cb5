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
import { errorResponse } from "@portcullis/auth";
import { OneTimeTokens } from "@portcullis/auth/verification";
import { SQLVerificationTokenStore } from "@portcullis/sql";
import type { AppContext } from "../../context.ts";
import { type AppModule, settingsOf } from "../../module.ts";
import { methodOn } from "../../sign_in_methods.ts";
import {
  confirmLink,
  MAGIC_LINK_TTL_MS,
  type MagicLinkSettings,
  requestLink,
  signInByLink,
} from "./routes.ts";
import { magicLinkLogin } from "./views/auth/magic_link.ts";

type Handler = (
  ctx: AppContext,
  req: Request,
  settings: MagicLinkSettings,
) => Promise<Response>;

/** The magic-link module. */
export const magicLink: AppModule<MagicLinkSettings> = {
  name: "magic_link",
  setup: ({ env, db, now }) =>
    methodOn(env, "MAGIC_LINK")
      ? {
        links: new OneTimeTokens({
          store: new SQLVerificationTokenStore(db),
          ttlMs: MAGIC_LINK_TTL_MS,
          now,
        }),
      }
      : null,
  routes(app, ctx) {
    const on = (handler: Handler) => (c: { req: { raw: Request } }) => {
      const settings = settingsOf(ctx, magicLink);
      return settings === null
        ? errorResponse(c.req.raw, 404, "not_found", "Sign-in links are off")
        : handler(ctx, c.req.raw, settings);
    };
    app.post("/magic-link", on(requestLink));
    app.get("/magic-link/callback", on(confirmLink));
    app.post("/magic-link/callback", on(signInByLink));
  },
  loginButtons: (ctx, next) =>
    settingsOf(ctx, magicLink) === null ? null : magicLinkLogin(next),
};
