/**
 * The plugin API of `@portcullis/accounts`: what a module needs beside the
 * contract of the main entry ({@linkcode AccountsModule},
 * {@linkcode ModuleParts}, {@linkcode ModuleContext}). The package's own
 * modules and those of `@portcullis/totp/accounts`,
 * `@portcullis/passkeys/accounts` and `@portcullis/oidc/accounts` are built
 * from these, and so is a module an application writes itself.
 *
 * - Routes: {@linkcode handle}, {@linkcode handleWith} and
 *   {@linkcode signedIn} adapt handlers of the form `(ctx, req, param)` to
 *   Hono; {@linkcode readBody} and {@linkcode bodyOrBadRequest} read the
 *   form or JSON body every route takes (after the package's one body cap).
 * - Answers: {@linkcode render} (a page through the app's layout),
 *   {@linkcode json}, {@linkcode redirect}, {@linkcode tooManyRequests},
 *   {@linkcode strictOrigin}.
 * - Sessions and the account: {@linkcode signInWith} ends a sign-in by a
 *   method as the password's does (a new session, listed, recorded);
 *   {@linkcode startSession}, {@linkcode sessionJson} and
 *   {@linkcode tokenFields} for flows that answer themselves;
 *   {@linkcode refuseUnverified} holds the rule that an unverified account
 *   gains no sign-in method; {@linkcode proofWay} and
 *   {@linkcode proveByLink} are the rules every mailed link that proves an
 *   address follows; {@linkcode stepAfterPassword} runs the second
 *   factors; {@linkcode record} and {@linkcode emit} record and log events.
 * - Mailed links: {@linkcode requestMailedLink} serves a route that mails
 *   a link (reads and normalises the address, applies the per-address and
 *   per-client limits, answers the same for every address at once, and
 *   looks the address up and mails after the answer);
 *   {@linkcode mailTokenLink} mints a single-use token and mails its link
 *   to the account's stored address.
 * - Re-checks before sensitive changes: {@linkcode recheck},
 *   {@linkcode requireRecheck}, {@linkcode recheckRefusal}.
 * - Cookies of a module's own: {@linkcode ShortCookie}.
 *
 * @example A sign-in method of one's own
 * ```ts ignore
 * import { Hono } from "hono";
 * import type { AccountsEnv, AccountsModule } from "@portcullis/accounts";
 * import { bodyOrBadRequest, handle, json, signInWith } from "@portcullis/accounts/plugin";
 *
 * export function emailCode(): AccountsModule {
 *   return {
 *     name: "email_code",
 *     setup(ctx) {
 *       const routes = new Hono<AccountsEnv>();
 *       routes.post("/login/code", handle(ctx, async (ctx, req) => {
 *         const body = await bodyOrBadRequest(req);
 *         if (body instanceof Response) return body;
 *         const subject = await checkCode(body.fields.email, body.fields.code);
 *         if (subject === null) return json({ error: "invalid_code" }, 401);
 *         const session = await signInWith(ctx, req, subject, "email_code");
 *         return json({ token: session.token }, 200);
 *       }));
 *       return { routes };
 *     },
 *   };
 * }
 * ```
 *
 * @module
 */
import type { AccountsModule, ModuleParts } from "./module.ts";
import type { ModuleContext } from "./context.ts";

export type { AccountsModule, ModuleContext, ModuleParts };
export type {
  AccountsEnv,
  PageUser,
  RouteEntry,
  RouteTable,
} from "./module.ts";
export {
  limit,
  type Passwords,
  type PurposeSigner,
  type SingleUseTokens,
} from "./context.ts";
export {
  handle,
  handleWith,
  type ModuleHandler,
  type RouteContext,
  type RouteFunction,
  type RouteHandler,
  signedIn,
  signedInOrKey,
  signedInOwner,
} from "./handle.ts";
export {
  bodyOrBadRequest,
  isFormPost,
  MAX_BODY_BYTES,
  type ParsedBody,
  readBody,
  readBytes,
} from "./request_body.ts";
export {
  json,
  redirect,
  render,
  strictOrigin,
  tooManyRequests,
} from "./respond.ts";
export {
  afterRegister,
  beforeWrite,
  hasSecondFactor,
  record,
  refuseUnverified,
  sessionJson,
  startSession,
  stepAfterPassword,
  tokenFields,
  VERIFY_FIRST,
} from "./lifecycle.ts";
export { emit, type SignInEvent, signInWith } from "./sign_in_methods.ts";
export {
  passwordCheckLimits,
  REAUTH_REQUIRED,
  recheck,
  type RecheckOutcome,
  recheckRefusal,
  requireRecheck,
  WRONG_PASSWORD,
} from "./recheck.ts";
export { hasPassword, NO_PASSWORD } from "./reauth.ts";
export {
  currentEmailCheck,
  type LinkOwner,
  type ProofRefusal,
  type ProofWay,
  proofWay,
  proveByLink,
} from "./address_proof.ts";
export {
  INVALID_EMAIL,
  type MailedLinkFlow,
  type MailedLinkRule,
  mailTokenLink,
  requestMailedLink,
  type TokenLink,
} from "./mailed_link.ts";
export { type SoleFactorInput, soleFactorRefusal } from "./sole_factor.ts";
export { ShortCookie } from "./short_cookie.ts";
export { Flash } from "./flash.ts";
export { Reauth, type ReauthSigner } from "./reauth.ts";
export type { SetUpModule } from "./module_parts.ts";

export { trustThisDevice } from "./password_login.ts";
export { signedInUser } from "./pages.ts";
