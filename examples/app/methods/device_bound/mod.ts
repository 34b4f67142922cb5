/**
 * Device-bound browser sessions (W3C DBSC): a browser able to bind
 * (Chromium over https) registers a key at `POST /auth/dbsc/start` and
 * renews a 10-minute cookie with it at `POST /auth/dbsc/refresh`, so a
 * copied cookie dies within minutes. The portcullis identity middleware
 * answers both routes; this module gives it the store and the sessions
 * registry. With `deviceBound: false` in `createApp` the routes stay and
 * answer 404; without this folder the app binds nothing.
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";
import type { AppModule } from "../../module.ts";

/** The device-bound sessions module. */
export const deviceBound: AppModule = {
  name: "device_bound",
  identityOptions: (ctx) => ({
    deviceBound: { store: ctx.kv, registry: ctx.registry, now: ctx.now },
  }),
  routes(app) {
    // Reached only when the identity middleware does not answer them.
    const off = (c: { req: { raw: Request } }) =>
      errorResponse(
        c.req.raw,
        404,
        "device_bound_off",
        "Device-bound sessions are off",
      );
    app.post("/auth/dbsc/start", off);
    app.post("/auth/dbsc/refresh", off);
  },
};
