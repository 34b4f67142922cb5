/**
 * Device-bound browser sessions (W3C DBSC): a browser able to bind
 * (Chromium over https) registers a key at `POST /auth/dbsc/start` and
 * renews a 10-minute cookie with it at `POST /auth/dbsc/refresh`, so a
 * copied cookie dies within minutes. The portcullis identity middleware
 * answers both routes; this module gives it the store and the sessions
 * registry. With `deviceBound: false` in `accounts()` the routes stay and
 * answer 404; without this module the app binds nothing.
 *
 * @module
 */
import { Hono } from "hono";
import { errorResponse } from "@portcullis/auth";
import type { AccountsEnv, AccountsModule } from "./module.ts";

/**
 * The device-bound sessions module.
 *
 * @example Usage
 * ```ts ignore
 * accounts({ ...parts, modules: [password(), deviceBound()] });
 * ```
 *
 * @returns The module.
 */
export function deviceBound(): AccountsModule {
  return {
    name: "device_bound",
    setup(ctx) {
      const routes = new Hono<AccountsEnv>();
      // Reached only when the identity middleware does not answer them
      // (`deviceBound: false` of `accounts()`).
      const off = (c: { req: { raw: Request } }) =>
        errorResponse(
          c.req.raw,
          404,
          "device_bound_off",
          "Device-bound sessions are off",
        );
      routes.post("/auth/dbsc/start", off);
      routes.post("/auth/dbsc/refresh", off);
      return {
        routes,
        identityOptions: {
          deviceBound: { store: ctx.kv, registry: ctx.registry, now: ctx.now },
        },
      };
    },
  };
}
