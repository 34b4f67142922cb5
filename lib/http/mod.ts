/**
 * The HTTP glue beyond the main entry: cross-origin protection on its own,
 * the HTML escaping and content negotiation the error pages use, the
 * default event logger, and the option types of the middleware and gates.
 *
 * @example Usage
 * ```ts
 * import { CrossOriginProtection, escapeHtml } from "@portcullis/auth/http";
 * import assert from "node:assert/strict";
 *
 * const csrf = new CrossOriginProtection({ appOrigin: "https://app.example" });
 * const forged = new Request("https://app.example/transfer", {
 *   method: "POST",
 *   headers: { "sec-fetch-site": "cross-site" },
 * });
 * assert.equal(csrf.check(forged), false);
 * assert.equal(escapeHtml("<b>"), "&lt;b&gt;");
 * ```
 *
 * @module
 */
export {
  type CrossOriginOptions,
  CrossOriginProtection,
} from "./cross_origin_protection.ts";
export { escapeHtml, wantsHtml } from "../_common/error_response.ts";
export { logAuthEvent } from "./auth_event.ts";
export type { Next } from "./middleware.ts";
export type {
  IdentityOptions,
  InstallableIdentityOptions,
} from "./identity_middleware.ts";
export type { RequireAuthOptions, RequirePersonOptions } from "./gates.ts";
export type {
  CheckedCredential,
  SignInResult,
  SignOutResult,
} from "./sign_in.ts";
export {
  dpopKeyOf,
  requireBoundSession,
  sessionBinding,
} from "./require_bound_session.ts";
export type {
  DeviceBoundEvent,
  DeviceBoundOptions,
} from "../binding/device_bound_sessions.ts";
export {
  clientAddress,
  type ClientAddressOptions,
  TrustedProxies,
} from "./client_address.ts";
