/**
 * The password module: registration with a password, sign-in with one, the
 * password change, and the reset and set-password links (`GET|POST
 * /register`, `POST /login`, `POST /account/password`,
 * `POST /account/password/link`, `GET|POST /password/forgot`,
 * `GET|POST /password/reset`). The routes behind `signedIn` answer 401
 * without a session.
 *
 * @module
 */
import { Hono } from "hono";
import type { AccountsEnv, AccountsModule } from "../module.ts";
import { handle, signedInOwner } from "../handle.ts";
import { render } from "../respond.ts";
import { changePassword, login, register } from "./auth.ts";
import { forgot, forgotForm, passwordLink, reset, resetForm } from "./reset.ts";

/**
 * The password module.
 *
 * @example Usage
 * ```ts ignore
 * accounts({ ...parts, modules: [password(), verification()] });
 * ```
 *
 * @returns The module.
 */
export function password(): AccountsModule {
  return {
    name: "password",
    setup(ctx) {
      const routes = new Hono<AccountsEnv>();
      routes.get(
        "/register",
        () =>
          render(
            ctx,
            ctx.views.register({
              email: "",
              error: null,
              minPasswordLength: ctx.passwords.minPasswordLength(),
            }),
          ),
      );
      routes.post("/register", handle(ctx, register));
      routes.post("/login", handle(ctx, login));
      // Credentials: the owner in person (no API key, no operator acting
      // as the user).
      routes.post(
        "/account/password",
        signedInOwner,
        handle(ctx, changePassword),
      );
      routes.post(
        "/account/password/link",
        signedInOwner,
        handle(ctx, passwordLink),
      );
      routes.get("/password/forgot", handle(ctx, forgotForm));
      routes.post("/password/forgot", handle(ctx, forgot));
      routes.get("/password/reset", handle(ctx, resetForm));
      routes.post("/password/reset", handle(ctx, reset));
      return { routes };
    },
  };
}
