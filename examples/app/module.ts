/**
 * The contract between the app and its modules. A module is one sign-in
 * method (password, verification, TOTP, OpenID Connect, passkeys, …) in a
 * folder of its own, `methods/<name>/`, whose `mod.ts` exports one
 * {@linkcode AppModule}. `modules.ts` lists the modules a project has; the
 * app composes them and nothing else names a method. Adding a method is a
 * new folder and one line in `modules.ts`; leaving one out is deleting
 * both.
 *
 * What a module contributes, all optional but its name:
 * - its settings and stores, built once from configuration by
 *   {@linkcode AppModule.setup} in the runtime entry (`null`: the module is
 *   off, its routes answer 404);
 * - its routes, mounted on the app's Hono instance by
 *   {@linkcode AppModule.routes};
 * - its parts of the account's lifecycle ({@linkcode AppModule.lifecycle});
 * - its pieces of the shared pages: buttons on `/login`, a section on
 *   `/account`, ways to confirm a passwordless user ("Confirm it's you"),
 *   and a step after the password (a second factor).
 *
 * @module
 */
import type { Context, Hono } from "hono";
import type { SecretProvider } from "@portcullis/auth";
import type { PortcullisVariables } from "@portcullis/auth/adapters/hono";
import type { IdentityOptions } from "@portcullis/auth/http";
import type { AccountLifecyclePart } from "@portcullis/auth/passwords";
import type { SQLDatabase } from "@portcullis/sql";
import type { AppContext } from "./context.ts";
import type { Html } from "./views/html.ts";

/**
 * The Hono environment of the app: the identity the portcullis adapter
 * resolved (`c.get("identity")`, `c.get("user")`).
 */
export interface AppEnv {
  /** Hono's context variables. */
  Variables: PortcullisVariables;
}

/** The app's Hono instance, as modules mount routes on it. */
export type AppHono = Hono<AppEnv>;

/** A Hono context of the app. */
export type AppHonoContext = Context<AppEnv>;

/** What {@linkcode AppModule.setup} reads: configuration and shared stores. */
export interface ModuleSetup {
  /** The environment (or any map of settings). */
  env: Record<string, string | undefined>;
  /** The migrated SQL database (users, tokens, and the methods' tables). */
  db: SQLDatabase;
  /** The application secret; a module derives keys of its own purposes. */
  secret: SecretProvider;
  /** The public origin, `scheme://host[:port]`. */
  appOrigin: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

/** The signed-in user as the shared pages pass it to a module. */
export interface PageUser {
  /** The subject id. */
  subject: string;
  /** The email address. */
  email: string;
  /** Whether the address is proven. */
  verified: boolean;
  /** Whether the account has a password (`false`: created by a provider). */
  password: boolean;
}

/**
 * One sign-in method, as the app composes it.
 *
 * @typeParam S The module's settings and stores, as {@linkcode setup}
 * builds them; a module reads them back with `settingsOf(ctx, module)`.
 */
export interface AppModule<S = unknown> {
  /** A short name: the folder under `methods/`, in logs. */
  readonly name: string;
  /**
   * Builds the settings and stores from configuration, once, in the
   * runtime entry (so only an entry that turns a method on loads its
   * packages). `null` turns the module off: its routes stay and answer
   * 404. A module without `setup` is always on, with no settings.
   */
  setup?(input: ModuleSetup): S | null | Promise<S | null>;
  /**
   * Mounts the module's routes. Called once by `createApp`, in the order
   * of `modules.ts`; `docs/http_contract.md` lists every route mounted
   * (a test reads them from the Hono app).
   */
  routes?(app: AppHono, ctx: AppContext): void;
  /**
   * The module's parts of the account's lifecycle (its credentials go on
   * the first proof of the address and on deletion); none while it is off.
   * Called once while `createApp` builds the context, before
   * `ctx.lifecycle` exists: read only the stores and `settingsOf`.
   */
  lifecycle?(ctx: AppContext): AccountLifecyclePart[];
  /**
   * Buttons or links on `/login`, under the password form, in the order
   * of `modules.ts`; those of modules with {@linkcode loginFirst} first.
   */
  loginButtons?(ctx: AppContext, next: string): Html | null;
  /**
   * Whether this module's login buttons come before the others (a
   * one-tap way such as a passkey above a list of providers).
   */
  readonly loginFirst?: boolean;
  /**
   * A section of `/account`, in the order of `modules.ts`; `null` for
   * none.
   */
  accountSection?(
    ctx: AppContext,
    req: Request,
    user: PageUser,
  ): Promise<Html | null>;
  /**
   * Ways a user without a password can confirm it is them before a
   * sensitive change (items of the "Confirm it's you" list), none when
   * the user has none with this method.
   */
  reauthWays?(ctx: AppContext, subject: string): Promise<Html[]>;
  /**
   * A line for the welcome message after a registration (such as "check
   * your inbox"), or `null`.
   */
  afterRegister?(
    ctx: AppContext,
    user: { subject: string; email: string },
  ): Promise<string | null>;
  /** Markup under the address at the top of `/account`, or `null`. */
  accountStatus?(user: PageUser): Html | null;
  /**
   * A check before a signed-in user creates data (the notes API): an
   * answer refuses the request, `null` lets it through.
   */
  beforeWrite?(req: Request): Promise<Response | null>;
  /**
   * Options the module adds to the portcullis identity middleware (the
   * device-bound sessions' store and registry, DPoP's store and nonces);
   * the app's own options (`cookie`, `crossOrigin`, …) win over them.
   */
  identityOptions?(ctx: AppContext): Partial<IdentityOptions>;
  /**
   * A step after a right password, before any session (a second factor):
   * an answer replaces the session start; `null` lets it go on. `req` is
   * the first step's request (the DPoP key it signs in with,
   * `dpopKeyOf(req)`, must also make the second).
   */
  afterPassword?(
    ctx: AppContext,
    req: Request,
    subject: string,
    next: string,
    form: boolean,
  ): Promise<Response | null>;
  /**
   * Whether the user has a second factor with this module (a sign-in that
   * skips {@linkcode afterPassword}, such as linking a provider after the
   * password alone, is refused then).
   */
  hasSecondFactor?(ctx: AppContext, subject: string): Promise<boolean>;
}

/** Each module's settings, as {@linkcode setupModules} built them. */
export type ModuleSettings = ReadonlyMap<AppModule, unknown>;

/**
 * Runs every module's {@linkcode AppModule.setup}: what a runtime entry
 * passes to `createApp` as `settings`.
 *
 * @param modules The modules (`MODULES` of `modules.ts`).
 * @param input The configuration and the shared stores.
 * @returns The settings of each module that is on.
 */
export async function setupModules(
  modules: readonly AppModule[],
  input: ModuleSetup,
): Promise<ModuleSettings> {
  const out = new Map<AppModule, unknown>();
  for (const module of modules) {
    const settings = await module.setup?.(input);
    if (settings !== null && settings !== undefined) out.set(module, settings);
  }
  return out;
}

/**
 * A module's settings, or `null` when it is off.
 *
 * @param ctx The app.
 * @param module The module.
 * @returns What its `setup` built, or `null`.
 */
export function settingsOf<S>(ctx: AppContext, module: AppModule<S>): S | null {
  return (ctx.settings.get(module) as S | undefined) ?? null;
}

/**
 * The modules' steps after a right password (or a provider's sign-in):
 * the first answer, or `null` to start the session.
 *
 * @param ctx The app.
 * @param req The first step's request.
 * @param subject Who proved the first factor.
 * @param next Where to go afterwards.
 * @param form Whether the request is a browser's form.
 * @returns The answer that replaces the session start, or `null`.
 */
export async function stepAfterPassword(
  ctx: AppContext,
  req: Request,
  subject: string,
  next: string,
  form: boolean,
): Promise<Response | null> {
  for (const m of ctx.modules) {
    const answer = await m.afterPassword?.(ctx, req, subject, next, form);
    if (answer) return answer;
  }
  return null;
}

/**
 * Whether any module holds a second factor of the user.
 *
 * @param ctx The app.
 * @param subject The user.
 * @returns `true` when one does.
 */
export async function hasSecondFactor(
  ctx: AppContext,
  subject: string,
): Promise<boolean> {
  for (const m of ctx.modules) {
    if (await m.hasSecondFactor?.(ctx, subject)) return true;
  }
  return false;
}
