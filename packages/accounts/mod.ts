/**
 * `@portcullis/accounts`: every account flow of portcullis as one versioned
 * app that any framework mounts. Registration, sign-in and sign-out, email
 * verification, password reset, email change, deletion, "my sessions" and
 * the activity, sign-in links, device-bound and DPoP-bound sessions, with
 * TOTP, passkeys and OpenID Connect from their own packages
 * (`@portcullis/totp/accounts`, `@portcullis/passkeys/accounts`,
 * `@portcullis/oidc/accounts`). The rules that keep an account safe live
 * here, so an upgrade brings every fix; the pages and mails are the
 * application's (`@portcullis/accounts/views`), and so are the modules it
 * lists, including its own (`@portcullis/accounts/plugin`).
 *
 * @example Serve every flow on Deno
 * ```ts ignore
 * import { accounts, password, verification, magicLink } from "@portcullis/accounts";
 *
 * const app = accounts({
 *   sessions, secret, db, kv,
 *   mailer: new LogMailer(),
 *   appOrigin: "http://localhost:8000",
 *   modules: [password(), verification(), magicLink()],
 * });
 * Deno.serve(app.fetch);
 * ```
 *
 * @module
 */
export {
  type Accounts,
  accounts,
  type AccountsOptions,
  DEFAULT_LIMITS,
} from "./accounts.ts";
export type { ModuleContext, RateLimits } from "./context.ts";
export type {
  AccountsEnv,
  AccountsModule,
  ModuleParts,
  PageUser,
} from "./module.ts";
export { password } from "./password/mod.ts";
export { verification } from "./verification/mod.ts";
export { magicLink } from "./magic_link/mod.ts";
export { deviceBound } from "./device_bound.ts";
export { dpop } from "./dpop.ts";
export { apiKeys, type ApiKeysModuleOptions } from "./api_keys/mod.ts";
export {
  type IsOperator,
  type OperatorCandidate,
  operatorConsole,
  type OperatorConsoleOptions,
} from "./console/mod.ts";
export {
  LogMailer,
  MAIL_LOG_MARKER,
  type Mailer,
  mailerFromEnv,
  type MailMessage,
  ResendMailer,
  type ResendMailerOptions,
} from "./mailer.ts";
export { allMethodsOff, envFlag, methodOn } from "./config.ts";
export {
  HashingBusyError,
  HashingGate,
  type HashingGateOptions,
  type HashingTicket,
  type Release,
} from "./hashing_gate.ts";
