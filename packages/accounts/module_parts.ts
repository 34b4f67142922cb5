/**
 * What a module contributes to an app ({@linkcode ModuleParts}): its routes
 * as a Hono app of the package's environment, its lifecycle parts, its
 * hooks into the flows and its pieces of the shared pages. `module.ts` has
 * the contract around it.
 *
 * @module
 */
import type { PortcullisVariables } from "@portcullis/auth/adapters/hono";
import type { IdentityOptions } from "@portcullis/auth/http";
import type { AccountLifecyclePart } from "@portcullis/auth/passwords";
import type { Html } from "./views/html.ts";

/**
 * The Hono environment of the package's routes: the identity the
 * portcullis adapter resolved (`c.get("identity")`, `c.get("user")`).
 */
export interface AccountsEnv {
  /** Hono's context variables. */
  Variables: PortcullisVariables;
}

/** One route of a {@linkcode RouteTable}. */
export interface RouteEntry {
  /** The method (`GET`, `POST`, …; `ALL` for middleware). */
  readonly method: string;
  /** The path pattern (`/login/oidc/:provider`). */
  readonly path: string;
}

/**
 * A module's routes: a Hono app (`new Hono<AccountsEnv>()`), described by
 * the part of it the package reads. The package mounts it at `/` with
 * Hono's `route`, so its handlers see the request the identity middleware
 * resolved (`c.req.raw`) and the context variables of
 * {@linkcode AccountsEnv}.
 */
export interface RouteTable {
  /** Every route (Hono's `app.routes`). */
  readonly routes: readonly RouteEntry[];
  /** Answers a request (Hono's `app.fetch`). */
  // deno-lint-ignore no-explicit-any -- Hono's own signature: its extra arguments are typed by its Env
  fetch(request: Request, ...rest: any[]): Response | Promise<Response>;
}

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

/** What a module contributes, all optional. */
export interface ModuleParts {
  /**
   * The module's routes, as a Hono sub-app mounted at `/`
   * (`app.route("/", routes)`). `docs/http_contract.md` lists every route the
   * package's modules mount.
   */
  routes?: RouteTable;
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
   * Whether the login page's email field offers this module's credentials
   * in the browser's autofill (`autocomplete="username webauthn"`, for a
   * conditional WebAuthn request the module's script makes).
   */
  loginAutofill?: boolean;
  /**
   * Whether this module's login buttons come before the others (a one-tap
   * way such as a passkey above a list of providers).
   */
  loginFirst?: boolean;
  /**
   * A section of `/account`, in its Security group after the password, or
   * `null` for none: by the default views' convention a
   * `<section class="item">` headed by an `<h3>`.
   */
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
  /**
   * Whether this module refuses every sign-in of the account (a ban): a
   * right password then answers as a wrong one, and any other method's
   * sign-in ends in the answer to a wrong password too. Called after a
   * credential proved the subject, never for an unknown one.
   */
  refusesSignIn?(subject: string): Promise<boolean>;
  /**
   * Runs on every request once its identity is known, before any route: an
   * answer ends the request (a rate limit of its own, a redirect), `null`
   * lets it go on. Keep it cheap: answer `null` without a promise when there
   * is nothing to do.
   */
  beforeRoute?(req: Request): Response | null | Promise<Response | null>;
  /**
   * Runs on every request after its route answered: the answer to send
   * instead (a banner added to a page), or the same. Keep it cheap: answer
   * `null` without a promise when there is nothing to do.
   */
  afterRoute?(
    req: Request,
    res: Response,
  ): Response | null | Promise<Response | null>;
  /**
   * Sees every answer once it is decided, the ones refused before any route
   * included (a body over the caps, a cross-origin post, a path no route
   * has, a module's own `beforeRoute` refusal): for an audit that must miss
   * nothing. It cannot change the answer; an error it throws is logged and
   * ignored. Keep it cheap: return without a promise when there is nothing
   * to do.
   */
  answered?(req: Request, res: Response): void | Promise<void>;
  /**
   * Runs after every write that evicts an earlier holder of the account
   * (the first proof of the address, an email change, a password change or
   * reset, signing out everywhere): end what such a holder may still hold
   * of this module's (outstanding links, a recovery session), so that
   * nothing asked for before outlives the owner's recovery.
   *
   * @param subject The account.
   */
  holderEvicted?(subject: string): Promise<void>;
}

/** A module's name with the parts its `setup` built for one app. */
export interface SetUpModule {
  /** The module's name. */
  readonly name: string;
  /** Its parts. */
  readonly parts: ModuleParts;
}
