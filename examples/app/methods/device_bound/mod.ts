/**
 * Device-bound browser sessions (DBSC): `identityMiddleware` answers
 * `POST /auth/dbsc/start` and `/auth/dbsc/refresh` itself while they are on
 * (`deviceBound` of `createApp`); the routes here answer only when the app
 * turned them off.
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";
import type { AppModule } from "../../module.ts";

/** The device-bound sessions module. */
export const deviceBound: AppModule = {
  name: "device_bound",
  routes(app) {
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
