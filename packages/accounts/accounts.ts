/**
 * `accounts()`: every flow of the HTTP contract as one app, over the
 * portcullis core and the modules the application lists. Web APIs only, so
 * one app serves Deno, Bun, Node, Vercel Edge and Cloudflare Workers, and
 * every framework that can hand it a `Request` (Next.js, SvelteKit, Astro,
 * Express, Elysia, Hono).
 *
 * A Hono app inside: the shared pages, then each module's routes (a Hono
 * sub-app each, in the order of `modules`), behind the answers of `http.ts`
 * (errors, security headers, 415, 405), one body cap, and the portcullis
 * identity middleware (sessions, cross-origin protection, device-bound
 * sessions, DPoP) through the Hono adapter.
 *
 * @module
 */
import { Hono } from "hono";
import {
  type CredentialStore,
  currentIdentity,
  errorResponse,
  identityMiddleware,
  type KeyValueStore,
  KVSessionStore,
  PasswordAuthenticator,
  type PasswordHasher,
  Pbkdf2Hasher,
  type SecretProvider,
  type SessionManager,
  type SessionStore,
} from "@portcullis/auth";
import { honoMiddleware } from "@portcullis/auth/adapters/hono";
import {
  accountLifecycle,
  passwordLifecyclePart,
} from "@portcullis/auth/passwords";
import {
  OneTimeTokens,
  type VerificationTokenStore,
} from "@portcullis/auth/verification";
import {
  type SecurityEventHook,
  SecurityEvents,
  type SecurityEventStore,
} from "@portcullis/auth/events";
import { SessionRegistry } from "@portcullis/auth/session-registry";
import {
  clientAddress,
  type DeviceBoundOptions,
  type IdentityOptions,
  TrustedProxies,
} from "@portcullis/auth/http";
import { LoginThrottle, SlidingWindowLimiter } from "@portcullis/auth/throttle";
import { commonPasswordCheck } from "@portcullis/common-passwords";
import {
  SQLAuthEventStore,
  SQLCredentialStore,
  type SQLDatabase,
  SQLVerificationTokenStore,
} from "@portcullis/sql";
import type { ModuleContext, Passwords, RateLimits } from "./context.ts";
import { Flash } from "./flash.ts";
import { HashingGate, type HashingGateOptions } from "./hashing_gate.ts";
import { bodyCaps, isFormPost } from "./request_body.ts";
import {
  acceptedBodies,
  answerErrors,
  type AppHono,
  appRoutes,
  extraOf,
  methodNotAllowed,
  presentedToken,
  securityHeaders,
} from "./http.ts";
import type { Mailer } from "./mailer.ts";
import type { AccountsModule, ModuleParts, SetUpModule } from "./module.ts";
import { mountPages } from "./pages.ts";
import { mountAccount } from "./account/mod.ts";
import { purposeKeyList, purposeSigner } from "./sign_in_methods.ts";
import { Reauth } from "./reauth.ts";
import { record, SignInRefused, signInRefused } from "./lifecycle.ts";
import { refusedSignIn } from "./sign_in_refusal.ts";
import { ShortCookie } from "./short_cookie.ts";
import { AccountLocks } from "./account_lock.ts";
import { type ViewOverrides, withViews } from "./views/mod.ts";

/** What {@linkcode accounts} needs; every part is passed in. */
export interface AccountsOptions {
  /** Sessions (with a revocation store). */
  sessions: SessionManager;
  /**
   * The secret the sessions use; the package derives its own purposes' keys
   * from it (flash messages, re-authentication, the modules' values).
   */
  secret: SecretProvider;
  /**
   * The SQL database, migrated (`migrate(db)` of `@portcullis/sql`): users,
   * single-use tokens, security events and the modules' tables (TOTP,
   * passkeys, OpenID Connect). Without it, pass `credentials`, `tokens` and
   * `events`, and list no module that keeps a table.
   */
  db?: SQLDatabase;
  /** Rate limits and short-lived records: Deno KV, libSQL, Upstash, Redis, … (never memory in production). */
  kv: KeyValueStore;
  /** Sends mail. */
  mailer: Mailer;
  /** The public origin, `scheme://host[:port]`: links and the CSRF check use it. */
  appOrigin: string;
  /**
   * The app's modules, in order (their routes, their sections on
   * `/account`, their buttons on `/login`): `password()`,
   * `verification()`, `magicLink()`, `totp()` of `@portcullis/totp/accounts`,
   * a module of the app's own, … A module left out has no routes.
   */
  modules: readonly AccountsModule[];
  /**
   * The app's views, over the package's defaults (`defaultViews` of
   * `@portcullis/accounts/views`): any page or mail replaced.
   */
  views?: ViewOverrides;
  /** Users; default `SQLCredentialStore(db)`. */
  credentials?: CredentialStore;
  /** Single-use token hashes, with an atomic consume; default `SQLVerificationTokenStore(db)`. */
  tokens?: VerificationTokenStore;
  /** Where security events are kept for the activity page; default `SQLAuthEventStore(db)`. */
  events?: SecurityEventStore;
  /** The password hasher; default PBKDF2 at 600000 iterations. */
  hasher?: PasswordHasher;
  /**
   * Refuses new passwords; default the common-password list of
   * `@portcullis/common-passwords`.
   */
  isCompromised?: (password: string) => boolean | Promise<boolean>;
  /**
   * The fewest characters of a new password that is the account's only
   * factor (registration, and a change or reset on an account without a
   * second factor); default 15 (NIST SP 800-63B-4 §3.1.1.2). Passwords set
   * before keep signing in; the app asks their owners to lengthen them.
   */
  minPasswordLength?: number;
  /**
   * The fewest characters of a new password on an account with a second
   * factor (TOTP on, a passkey: each module answers); default 8 (NIST SP
   * 800-63B-4 §3.1.1.2), at most `minPasswordLength`.
   */
  minPasswordLengthWithSecondFactor?: number;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /** Where operational messages go; default `console.log`. */
  log?: (line: string) => void;
  /**
   * Whether cookies are `Secure` and `__Host-` prefixed; default `true`.
   * `false` is for plain-HTTP development on a browser that refuses Secure
   * cookies on `http://localhost`, and is logged.
   */
  cookieSecure?: boolean;
  /**
   * The peer's address (the socket's), given the request and the arguments
   * the runtime passed beside it. Default: Deno's and the Node adapter's
   * `info.remoteAddr.hostname`, Bun's `server.requestIP(req)`, else one
   * shared bucket for every client (logged once when neither this nor a
   * hop-count `trustedProxies` is given). Behind a proxy, set
   * `trustedProxies` rather than reading a forwarding header here: a header
   * read here is believed from anyone.
   */
  clientAddress?: (req: Request, ...rest: unknown[]) => string | null;
  /**
   * The reverse proxies in front of the app, whose forwarding header
   * (`forwardedHeader`) is believed: addresses and CIDR ranges
   * (`"127.0.0.1"`, `"10.0.0.0/8, fd00::/8"`), or a hop count (`"1"`), as
   * {@linkcode TrustedProxies.parse} reads them (`TRUSTED_PROXIES` in the
   * reference app). The client's address for every rate limit is then the
   * rightmost address in the header that is not a trusted proxy. Default:
   * none, so headers are ignored and the peer's address is used.
   */
  trustedProxies?: TrustedProxies | string;
  /**
   * The header the trusted proxies write: `x-forwarded-for` (default),
   * `forwarded`, or a platform's one-address header (`cf-connecting-ip`,
   * `fly-client-ip`, `x-real-ip`).
   */
  forwardedHeader?: string;
  /** Overrides of the default rate limits. */
  limits?: Partial<RateLimits>;
  /**
   * The bound on password hashing for sign-in and registration: at most
   * `concurrency` hashes at once (default: the CPUs the runtime reports, at
   * least 2), `reserved` of them (default 1) kept for browsers holding a
   * trusted-device token, and a queue of `queue` (default 16) per kind; past
   * it the answer is 503 with `Retry-After`. A {@linkcode HashingGate} to
   * share one between apps; `false` for no bound.
   */
  hashing?: HashingGateOptions | HashingGate | false;
  /** Also receives every security event (an audit log, alerts). */
  onSecurityEvent?: SecurityEventHook;
  /**
   * The denylist `sessions` uses, for "my sessions"; default a
   * `KVSessionStore` over `kv` (right when the sessions use that store with
   * the default prefix).
   */
  sessionStore?: SessionStore;
  /**
   * Keeps work going after the answer (mail whose timing must not show,
   * last-seen writes), given the work and the handler's extra arguments.
   * Default: hands it to the `waitUntil` of an extra argument that has one
   * (Cloudflare's `ctx`), and logs a failure.
   */
  defer?: (work: Promise<unknown>, ...rest: unknown[]) => void;
  /**
   * Device-bound browser sessions (DBSC), on while the `deviceBound()`
   * module is in `modules`: a browser able to bind (Chromium over https)
   * renews a 10-minute cookie with its key, so a copied cookie dies within
   * minutes. Options here override the module's; `false` turns it off.
   */
  deviceBound?: DeviceBoundOptions | false;
}

/**
 * The flows as one app: serve {@linkcode Accounts.fetch} (`Deno.serve`,
 * `Bun.serve`, a Worker's `fetch`, a framework's catch-all route), or mount
 * it in a Hono app with `app.mount("/", accounts.fetch)`.
 */
export interface Accounts {
  /**
   * The Web-standard handler: `Deno.serve(accounts.fetch)`,
   * `export default { fetch: accounts.fetch }`, a framework's catch-all
   * route. Extra arguments (Deno's serve info, Workers' `env` and `ctx`)
   * pass through to the client-address reader and `defer`.
   */
  fetch(req: Request, ...rest: unknown[]): Promise<Response>;
  /** Every `METHOD path` the app routes, in the order they were mounted. */
  routes: { method: string; path: string }[];
  /**
   * The app's shared parts (its stores, limits, lifecycle), for an
   * application's own routes beside the flows and for tests.
   */
  context: ModuleContext;
}

/** The default rate limits. */
export const DEFAULT_LIMITS: RateLimits = {
  loginPerAccount: {
    freeFailures: 3,
    baseDelaySeconds: 1,
    maxDelaySeconds: 15 * 60,
    hardStop: 100,
  },
  loginPerAddress: { max: 100, windowSeconds: 15 * 60 },
  passwordChangePerAccount: { max: 10, windowSeconds: 15 * 60 },
  passwordChangePerAddress: { max: 100, windowSeconds: 15 * 60 },
  passwordCheckPerSession: { max: 5, windowSeconds: 15 * 60 },
  registerPerAddress: { max: 10, windowSeconds: 60 * 60 },
  resendPerAccount: { max: 3, windowSeconds: 60 * 60 },
  verifyPerAddress: { max: 30, windowSeconds: 15 * 60 },
  resetPerEmail: { max: 3, windowSeconds: 60 * 60 },
  resetPerAddress: { max: 30, windowSeconds: 15 * 60 },
  totpConsecutiveFailures: { max: 100, windowSeconds: 30 * 24 * 3600 },
  recheckConsecutiveFailures: { max: 100, windowSeconds: 30 * 24 * 3600 },
};

/**
 * Builds the flows as one app.
 *
 * @param options The stores, the mailer, the origin, the modules and the views.
 * @returns The app: its `fetch`, its routes and its shared parts.
 * @throws {TypeError} When two modules share a name, or a module refuses
 * its settings.
 * @throws {RangeError} When a limit is past what the package allows.
 *
 * @example Usage
 * ```ts ignore
 * import { accounts, password, verification } from "@portcullis/accounts";
 *
 * const app = accounts({
 *   sessions, secret, db, kv, mailer,
 *   appOrigin: "https://app.example.com",
 *   modules: [password(), verification()],
 * });
 * Deno.serve(app.fetch);
 * ```
 */
export function accounts(options: AccountsOptions): Accounts {
  const deps = options;
  const appOrigin = deps.appOrigin;
  const hsts = appOrigin.startsWith("https:");
  const now = deps.now ?? Date.now;
  const log = deps.log ?? console.log;
  const secure = deps.cookieSecure ?? true;
  const addresses = new WeakMap<Request, string>();
  const limits = { ...DEFAULT_LIMITS, ...deps.limits };
  for (const name of ["recheckConsecutiveFailures"] as const) {
    if (!(limits[name].max <= 100)) {
      throw new RangeError(
        `limits.${name}.max must be at most 100 consecutive failures (NIST SP 800-63B): received ${
          limits[name].max
        }`,
      );
    }
  }
  if (!(limits.loginPerAccount.hardStop <= 100)) {
    throw new RangeError(
      `limits.loginPerAccount.hardStop must be at most 100 consecutive failures (NIST SP 800-63B): received ${limits.loginPerAccount.hardStop}`,
    );
  }
  if (!(limits.totpConsecutiveFailures.max <= 100)) {
    throw new RangeError(
      `limits.totpConsecutiveFailures.max must be at most 100 consecutive failures (NIST SP 800-63B): received ${limits.totpConsecutiveFailures.max}`,
    );
  }
  const names = new Set<string>();
  for (const m of deps.modules) {
    if (names.has(m.name)) {
      throw new TypeError(
        `Two modules are named "${m.name}": each module of an app must have its own name`,
      );
    }
    names.add(m.name);
  }
  const db = deps.db;
  const needDb = (what: string) => {
    throw new TypeError(
      `accounts() needs db (a migrated SQL database) for ${what}: pass db, or ${what} as an option`,
    );
  };
  const credentials = deps.credentials ??
    (db ? new SQLCredentialStore(db) : needDb("credentials"));
  const tokenStore = deps.tokens ??
    (db ? new SQLVerificationTokenStore(db) : needDb("tokens"));
  const throttle = new LoginThrottle({
    store: deps.kv,
    ...limits.loginPerAccount,
    perAddress: limits.loginPerAddress,
    // The device cookie: a browser that signed in to an account before is
    // exempt from that account's lockout (OWASP "device cookies").
    devices: { signer: purposeSigner(deps.secret, "login-device") },
    now,
  });
  const hasher = deps.hasher ?? new Pbkdf2Hasher();
  const hashing = deps.hashing instanceof HashingGate
    ? deps.hashing
    : deps.hashing === false
    ? new HashingGate({
      concurrency: Number.MAX_SAFE_INTEGER,
      reserved: 0,
      queue: 0,
    })
    : new HashingGate(deps.hashing);
  // Password checks whose callers throttle them (the password login, with
  // the device cookie; the signed-in re-check, with its own limits).
  const unthrottled = new PasswordAuthenticator({
    credentials,
    hasher,
    now,
  });
  const extraArgs = new WeakMap<Request, unknown[]>();
  const deferWith = (rest: unknown[], work: Promise<unknown>): void => {
    const logged = work.catch((error) =>
      log(`background work failed: ${(error as Error)?.message}`)
    );
    if (deps.defer) return deps.defer(logged, ...rest);
    const host = rest.find((r) =>
      typeof (r as { waitUntil?: unknown })?.waitUntil === "function"
    ) as { waitUntil(p: Promise<unknown>): void } | undefined;
    host?.waitUntil(logged);
  };
  // Routes that defer work are all POSTs: GETs (the hot path) record nothing.
  // The work waits for a timer: begun in the handler's own turn, its first
  // steps (a lookup in a local database blocks) would run before the answer
  // is written, and an address's existence would show in the answer's time.
  const defer = (req: Request, work: () => Promise<unknown>): void =>
    deferWith(
      extraArgs.get(req) ?? [],
      new Promise((resolve) => setTimeout(resolve, 0)).then(work),
    );
  const eventStore = deps.events ??
    (db ? new SQLAuthEventStore(db) : needDb("events"));
  const extraHook = deps.onSecurityEvent;
  const events = new SecurityEvents({
    hook: async (event) => {
      await eventStore.append(event);
      await extraHook?.(event);
    },
    now,
    onError: log,
    // An operator acting as the user (impersonation): every event of the
    // request names them.
    // Before the identity is known (a device-bound registration refused
    // inside the identity middleware), the presented token's actor, when
    // this process has already verified it.
    actorOf: (req) =>
      currentIdentity(req)?.actor ?? presentedActor(deps.sessions, req, secure),
  });
  const registry = new SessionRegistry({
    kv: deps.kv,
    manager: deps.sessions,
    revocations: deps.sessionStore ?? new KVSessionStore(deps.kv),
    now,
  });
  const setUp: SetUpModule[] = [];
  const locks = new AccountLocks();
  const ctx: ModuleContext = {
    sessions: deps.sessions,
    credentials,
    get db(): SQLDatabase {
      return db ?? needDb("the modules that keep a table");
    },
    passwords: boundPasswords(
      new PasswordAuthenticator({
        credentials,
        hasher,
        // New passwords are checked against ~49,000 common and breached
        // passwords (NIST SP 800-63B's blocklist); logins are not.
        isCompromised: deps.isCompromised ?? commonPasswordCheck(),
        minPasswordLength: deps.minPasswordLength,
        minPasswordLengthWithSecondFactor:
          deps.minPasswordLengthWithSecondFactor,
        now,
        throttle,
        // Every password write revokes the user's sessions before it writes
        // (a failed revocation changes nothing) and again after.
        revokeSessions: (subject) => deps.sessions.revokeAll(subject),
      }),
      hashing,
    ),
    // A right password of an account a module refuses (a ban) answers as a
    // wrong one: the same answer, and no second step to tell them apart.
    checkPassword: async (email, password, options) => {
      const check = () => unthrottled.login(email, password);
      const result = options?.slotTaken === true
        ? await check()
        : await hashing.run(check);
      return result.kind === "ok" && await signInRefused(ctx, result.subject)
        ? { kind: "invalid" }
        : result;
    },
    exclusive: (subject, work) => locks.run(subject, work),
    deviceCookie: new ShortCookie("device", secure),
    tokens: new OneTimeTokens({ store: tokenStore, now }),
    tokenStore,
    kv: deps.kv,
    mailer: deps.mailer,
    appOrigin,
    flash: new Flash(deps.secret.keys("flash"), secure, now),
    limiter: new SlidingWindowLimiter(deps.kv, { now }),
    throttle,
    limits,
    views: withViews(deps.views),
    now,
    log,
    clientAddress: (req) => addresses.get(req) ?? "unknown",
    hashing,
    events,
    eventStore,
    registry,
    defer,
    cookieSecure: secure,
    reauth: new Reauth(purposeSigner(deps.secret, "reauth"), secure, now),
    signer: (purpose) => purposeSigner(deps.secret, purpose),
    keyList: (purpose) => purposeKeyList(deps.secret, purpose),
    modules: setUp,
    // Every module's part, composed below once each module is set up.
    lifecycle: accountLifecycle([passwordLifecyclePart(credentials)]),
  };
  for (const module of deps.modules) {
    setUp.push({ name: module.name, parts: module.setup(ctx) });
  }
  // Every credential of an account belongs to it: each module takes part
  // in one lifecycle, so no route can forget a method.
  ctx.lifecycle = accountLifecycle([
    ...setUp.flatMap(({ parts }) => parts.lifecycle ?? []),
    // The account record and its password: last, after every module's part.
    passwordLifecyclePart(credentials),
  ]);
  const readPeer = deps.clientAddress ?? defaultClientAddress;
  const trustedProxies = typeof deps.trustedProxies === "string"
    ? TrustedProxies.parse(deps.trustedProxies, "trustedProxies")
    : deps.trustedProxies ?? TrustedProxies.none;
  const forwardedHeader = deps.forwardedHeader ?? "x-forwarded-for";
  // A bad header name throws here, at start, not on a request.
  clientAddress(new Request(appOrigin), { header: forwardedHeader });
  const readAddress = (req: Request, ...rest: unknown[]) =>
    clientAddress(req, {
      remote: readPeer(req, ...rest),
      trustedProxies,
      header: forwardedHeader,
    });
  if (deps.clientAddress === undefined && trustedProxies.hops === undefined) {
    log(
      "warning: clientAddress is not set: per-address rate limits use the runtime's remote address (Deno, Bun, the Node adapter) when it passes one, and otherwise put every client in one shared bucket (one client can then throttle everyone). Behind a proxy, set trustedProxies; on a platform without a socket address, a hop count and its header.",
    );
  }
  if (!trustedProxies.isNone) {
    log(
      `Trusted proxies: ${trustedProxies}; the client's address comes from ${forwardedHeader}`,
    );
  }

  const app: AppHono = new Hono();
  // A sign-in a module refused (a ban) answers as a wrong password.
  answerErrors(app, log, async (error, req) => {
    if (!(error instanceof SignInRefused)) return null;
    await record(ctx, "login_failed", error.subject, req);
    return refusedSignIn(ctx, req);
  });
  // The modules that see every answer, refused ones included (an audit):
  // outside everything but the error handler.
  const answered = setUp.flatMap(({ parts }) =>
    parts.answered ? [parts.answered.bind(parts)] : []
  );
  if (answered.length > 0) {
    app.use(async (c, next) => {
      await next();
      for (const hook of answered) {
        try {
          await hook(c.req.raw, c.res);
        } catch (error) {
          log(`a module's answered hook failed: ${(error as Error)?.message}`);
        }
      }
    });
  }
  app.use(...securityHeaders(hsts));
  // Every body passes the caps before any route sees it.
  app.use(...bodyCaps());
  app.use(async (c, next) => {
    const req = c.req.raw;
    const rest = extraOf(c);
    addresses.set(req, readAddress(req, ...rest) ?? "unknown");
    if (rest.length > 0 && req.method === "POST") extraArgs.set(req, rest);
    await next();
    // "My sessions": at most one deferred write per session an hour, no
    // store round trip on this request.
    const identity = currentIdentity(req);
    const touch = identity === null || identity.apiKey !== undefined
      ? null
      : registry.seen(identity, req.headers.get("user-agent"));
    if (touch !== null) deferWith(rest, touch);
  });
  // What the modules add to the identity middleware (device-bound
  // sessions, DPoP), under the app's own options.
  const added: Partial<IdentityOptions> = Object.assign(
    {},
    ...setUp.map(({ parts }: { parts: ModuleParts }) => parts.identityOptions),
  );
  app.use(honoMiddleware(identityMiddleware(deps.sessions, {
    ...added,
    cookie: { secure },
    crossOrigin: { appOrigin },
    isVerified: async (subject) =>
      ((await credentials.findById(subject))?.verifiedAt ?? 0) > 0,
    deviceBound: deps.deviceBound === false || added.deviceBound === undefined
      ? undefined
      : { ...added.deviceBound, ...deps.deviceBound },
    securityEvents: events,
  })));
  // A form post is a browser's, answered with pages, redirects and cookies;
  // a token bound to a DPoP key goes in none of them. With a proof, a form's
  // sign-in would start a session nobody holds: 400, nothing changes.
  if (added.dpop) {
    app.use(async (c, next) => {
      const req = c.req.raw;
      if (req.headers.has("dpop") && isFormPost(req)) {
        return errorResponse(
          req,
          400,
          "dpop_needs_json",
          "A request with a DPoP proof must send JSON, not a form",
        );
      }
      await next();
    });
  }
  // The modules' hooks around every route (an API key's rate limit, the
  // impersonation banner), once the identity is known.
  const before = setUp.flatMap(({ parts }) =>
    parts.beforeRoute ? [parts.beforeRoute.bind(parts)] : []
  );
  const after = setUp.flatMap(({ parts }) =>
    parts.afterRoute ? [parts.afterRoute.bind(parts)] : []
  );
  if (before.length > 0 || after.length > 0) {
    app.use(async (c, next) => {
      const req = c.req.raw;
      for (const hook of before) {
        const answer = await hook(req);
        if (answer) return answer;
      }
      await next();
      for (const hook of after) {
        const answer = await hook(req, c.res);
        if (answer && answer !== c.res) {
          // The module's answer replaces the route's whole: Hono's setter
          // would otherwise copy the old answer's headers (its cookies
          // among them) over the new one's.
          c.res = undefined;
          c.res = answer;
        }
      }
    });
  }
  const routes: AppHono = new Hono();
  mountPages(routes, ctx);
  mountAccount(routes, ctx);
  for (const { parts } of setUp) {
    // A module's routes are a Hono app of its own (`RouteTable` names the
    // part of it the contract reads).
    if (parts.routes) routes.route("/", parts.routes as AppHono);
  }
  const list = appRoutes(routes);
  app.use(acceptedBodies(list));
  app.use(methodNotAllowed(list));
  app.route("/", routes);
  return {
    fetch: async (req, ...rest) => await app.fetch(req, ...rest),
    routes: list,
    context: ctx,
  };
}

/**
 * The actor of the session token a request presents (its session cookie or
 * its Bearer token), when this process has verified that token already;
 * `undefined` otherwise. Never verifies: it only names who acted.
 */
function presentedActor(
  sessions: SessionManager,
  req: Request,
  secure: boolean,
): string | undefined {
  const token = presentedToken(req, secure);
  return token === null ? undefined : sessions.peek(token)?.actor;
}

function defaultClientAddress(
  req: Request,
  ...rest: unknown[]
): string | null {
  const info = rest[0] as
    | {
      remoteAddr?: { hostname?: unknown };
      requestIP?: (req: Request) => { address?: unknown } | null;
    }
    | undefined;
  const host = info?.remoteAddr?.hostname;
  if (typeof host === "string") return host;
  // Bun's `fetch(req, server)`.
  if (typeof info?.requestIP === "function") {
    const address = info.requestIP(req)?.address;
    if (typeof address === "string") return address;
  }
  return null;
}

/**
 * The password operations with every hash inside the hashing bound
 * ({@linkcode HashingGate.run}): registration and a check through the
 * throttle (a link confirmed with the password, an account linked to a
 * provider) in the anonymous lane, a signed-in owner's change with the
 * current password in the trusted lane under the account; each refused
 * with `HashingBusyError` (503) when the bound is full.
 * Setting a password from a redeemed link (a reset, a recovery) is not
 * refused: its link is spent by then, and its holder is one per mailed
 * link, which the link requests' own limits bound.
 *
 * @param passwords The password authenticator.
 * @param hashing The bound.
 * @returns The same operations, bound.
 */
function boundPasswords(
  passwords: PasswordAuthenticator,
  hashing: HashingGate,
): Passwords {
  return {
    register: (email, password) =>
      hashing.run(() => passwords.register(email, password)),
    login: (email, password, options) =>
      hashing.run(() => passwords.login(email, password, options)),
    // A signed-in owner: the trusted lane, under its subject (never an
    // email: the two cannot meet). The route takes the slot under the
    // account's email itself, before its limits count the attempt.
    changePasswordWithCurrent: (subject, input, options) => {
      const change = () => passwords.changePasswordWithCurrent(subject, input);
      return options?.slotTaken === true
        ? change()
        : hashing.run(change, { account: `subject:${subject}` });
    },
    checkNewPassword: (password, context) =>
      passwords.checkNewPassword(password, context),
    changePassword: (subject, password, context) =>
      passwords.changePassword(subject, password, context),
    minPasswordLength: (context) => passwords.minPasswordLength(context),
  };
}
