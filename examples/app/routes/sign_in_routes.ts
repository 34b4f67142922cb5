/**
 * The routes of the sign-in methods beside the password, in one place so
 * the app's router needs one line for all of them. A method that is off
 * answers 404 on its routes.
 *
 * @module
 */
import { errorResponse } from "@portcullis/auth";
import type { AppContext } from "../context.ts";
import { oidcRoute } from "./oidc.ts";
import { confirmLink } from "./oidc_link.ts";
import * as passkeys from "./passkeys.ts";
import {
  confirmTotp,
  disableTotp,
  loginTotp,
  startTotp,
  totpForm,
} from "./totp.ts";

type Handler = (ctx: AppContext, req: Request) => Promise<Response> | Response;

const ROUTES: Record<string, Partial<Record<string, Handler>>> = {
  "/login/totp": { GET: totpForm, POST: loginTotp },
  "/account/totp": { POST: startTotp },
  "/account/totp/confirm": { POST: confirmTotp },
  "/account/totp/disable": { POST: disableTotp },
  "/login/oidc/link": { POST: confirmLink },
  "/assets/passkeys.js": { GET: passkeys.passkeysScript },
  "/passkeys/register/options": { POST: passkeys.registrationOptions },
  "/passkeys/register": { POST: passkeys.register },
  "/passkeys/login/options": { POST: passkeys.authenticationOptions },
  "/passkeys/login": { POST: passkeys.login },
  "/account/passkeys/rename": { POST: passkeys.rename },
  "/account/passkeys/delete": { POST: passkeys.remove },
};

/**
 * Answers a sign-in method's route, or `null` when the path is not one.
 *
 * @param ctx The app.
 * @param req The request.
 * @param path The URL's path.
 * @param method The method (`HEAD` already mapped to `GET`).
 * @returns The response, or `null`.
 */
export function signInRoute(
  ctx: AppContext,
  req: Request,
  path: string,
  method: string,
): Promise<Response> | Response | null {
  const route = ROUTES[path];
  if (route === undefined) return oidcRoute(ctx, req, path, method);
  const handler = route[method];
  if (handler !== undefined) return handler(ctx, req);
  const allow = Object.keys(route).join(", ");
  return errorResponse(req, 405, "method_not_allowed", "Method not allowed", {
    allow: allow === "GET" ? "GET, HEAD" : allow,
  });
}
