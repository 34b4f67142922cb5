/**
 * The plugin contract of `@portcullis/accounts`: what a module (a sign-in
 * method, a feature such as API keys, or a module an application writes
 * itself) gives the package, and how the package composes modules.
 *
 * A module is a value with a `name` and a {@linkcode AccountsModule.setup}
 * that the package calls once per app with the app's
 * {@linkcode ModuleContext}. `setup` answers the module's
 * {@linkcode ModuleParts}: its routes (a Hono sub-app), its parts of the
 * account's lifecycle, its hooks into the flows, and its pieces of the shared
 * pages. A module's settings are its factory's options, kept in the
 * factory's closure with their own types: the package never stores them for
 * the module, and no module reads another's.
 *
 * @example A module of one route
 * ```ts
 * import { Hono } from "hono";
 * import type { AccountsEnv, AccountsModule } from "@portcullis/accounts";
 *
 * export function hello(greeting = "hello"): AccountsModule {
 *   return {
 *     name: "hello",
 *     setup() {
 *       const routes = new Hono<AccountsEnv>();
 *       routes.get("/hello", (c) => c.text(greeting));
 *       return { routes };
 *     },
 *   };
 * }
 * ```
 *
 * @module
 */
import type { ModuleContext } from "./context.ts";
import type { ModuleParts } from "./module_parts.ts";

export type {
  AccountsEnv,
  ModuleParts,
  PageUser,
  RouteEntry,
  RouteTable,
  SetUpModule,
} from "./module_parts.ts";

/**
 * One module of an app. Modules are composed in the order the app lists
 * them: the order of their routes, of their sections on `/account` and of
 * their buttons on `/login`.
 */
export interface AccountsModule {
  /** A short name, unique in the app (`"totp"`, `"passkeys"`, …), for logs. */
  readonly name: string;
  /**
   * Builds the module's parts for one app. Called once, synchronously, while
   * `accounts()` builds the app, before `ctx.lifecycle` exists: read the
   * context's stores here, and call its functions (the lifecycle among them)
   * only from routes and hooks. A module that needs asynchronous work (a
   * provider's discovery, a key derivation) starts it lazily.
   *
   * @param ctx The app's shared parts.
   * @returns The module's parts.
   * @throws {TypeError} For a setting the module cannot use (the app's
   * start then stops with the message).
   */
  setup(ctx: ModuleContext): ModuleParts;
}
