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
 * import type { AccountsModule } from "@portcullis/accounts";
 *
 * export function hello(greeting = "hello"): AccountsModule {
 *   return {
 *     name: "hello",
 *     setup() {
 *       const routes = new Hono();
 *       routes.get("/hello", (c) => c.text(greeting));
 *       return { routes };
 *     },
 *   };
 * }
 * ```
 *
 * @module
 */
import type { Context, Hono } from "hono";
import type { PortcullisVariables } from "@portcullis/auth/adapters/hono";
import type { IdentityOptions } from "@portcullis/auth/http";
import type { AccountLifecyclePart } from "@portcullis/auth/passwords";
import type { ModuleContext } from "./context.ts";
import type { Html } from "./views/html.ts";

/**
 * The Hono environment of the package's routes: the identity the
 * portcullis adapter resolved (`c.get("identity")`, `c.get("user")`).
 */
export interface AccountsEnv {
  /** Hono's context variables. */
  Variables: PortcullisVariables;
}

/** A Hono app of the package's environment (a module's routes). */
export type AccountsHono = Hono<AccountsEnv>;

/** A Hono context of the package's routes. */
export type AccountsHonoContext = Context<AccountsEnv>;

/** The signed-in user as the shared pages pass it to a module. */
export interface PageUser {
  /** The subject id. */
  subject: string;
  /** The email address. */
  email: string;
  /** Whether the address is proven. */
  verified: boolean;
  /** Whether the account has a password (`false`: a passwordless account). */
  password: boolean;
}

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

/** What a module contributes, all optional. */
export interface ModuleParts {
  /**
   * The module's routes, as a Hono sub-app mounted at `/`
   * (`app.route("/", routes)`). `docs/http_contract.md` lists every route the
   * package's modules mount.
   */
  routes?: AccountsHono;
  /**
   * The module's parts of the account's lifecycle: its credentials go on the
   * first proof of the address and on deletion.
   */
  lifecycle?: readonly AccountLifecyclePart[];
  /**
   * Options the module adds to the portcullis identity middleware (the
   * device-bound sessions' store and registry, DPoP's store and nonces); the
   * app's own options (`cookie`, `crossOrigin`, …) win over them.
   */
  identityOptions?: Partial<IdentityOptions>;
  /** Buttons or links on `/login`, under the password form. */
  loginButtons?(next: string): Html | null;
  /**
   * Whether this module's login buttons come before the others (a one-tap
   * way such as a passkey above a list of providers).
   */
  loginFirst?: boolean;
  /** A section of `/account`, or `null` for none. */
  accountSection?(req: Request, user: PageUser): Promise<Html | null>;
  /** Markup under the address at the top of `/account`, or `null`. */
  accountStatus?(user: PageUser): Html | null;
  /**
   * Ways a user without a password can confirm it is them before a
   * sensitive change (items of the "Confirm it's you" list), none when the
   * user has none with this module.
   */
  reauthWays?(subject: string): Promise<Html[]>;
  /**
   * Runs after a registration; a line for the welcome message (such as
   * "check your inbox"), or `null`.
   */
  afterRegister?(
    user: { subject: string; email: string },
  ): Promise<string | null>;
  /**
   * A check before a signed-in user creates data (`ctx.beforeWrite`): an
   * answer refuses the request, `null` lets it through.
   */
  beforeWrite?(req: Request): Promise<Response | null>;
  /**
   * A step after a right first factor (a password, a provider's sign-in),
   * before any session (a second factor): an answer replaces the session
   * start; `null` lets it go on. `req` is the first step's request (the DPoP
   * key it signs in with, `dpopKeyOf(req)`, must also make the second).
   */
  afterPassword?(
    req: Request,
    subject: string,
    next: string,
    form: boolean,
  ): Promise<Response | null>;
  /**
   * Whether the user has a second factor with this module (a sign-in that
   * skips {@linkcode ModuleParts.afterPassword}, such as linking a provider
   * after the password alone, is refused then).
   */
  hasSecondFactor?(subject: string): Promise<boolean>;
}

/** A module with the parts its `setup` built for one app. */
export interface SetUpModule {
  /** The module. */
  readonly module: AccountsModule;
  /** Its parts. */
  readonly parts: ModuleParts;
}
