/**
 * The reference app: registration, login, logout, email verification, an
 * account page and a notes API, over portcullis. Web APIs only, so one
 * `createApp` serves Deno, Bun, Node, Vercel Edge and Cloudflare Workers;
 * each runtime's entry builds the stores and passes them in (`main.ts` is
 * Deno's).
 *
 * A Hono app: the shared pages (`routes/pages.ts`), then each module's
 * routes (`modules.ts` lists the modules, `module.ts` is their contract),
 * behind the answers of `http.ts` (errors, security headers, 415, 405),
 * one body cap, and the portcullis identity middleware (sessions,
 * cross-origin protection, device-bound sessions, DPoP) through the Hono adapter. `docs/http_contract.md` documents every route
 * (a test reads them from the Hono app): the pages and the notes API, email
 * verification, the account lifecycle (password reset, email change,
 * deletion, sessions, activity), and the sign-in methods beside the
 * password (TOTP, OpenID Connect, passkeys), whose routes answer 404 while
 * their settings leave them off.
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
import { accountLifecycle } from "@portcullis/auth/passwords";
import {
  OneTimeTokens,
  type VerificationTokenStore,
} from "@portcullis/auth/verification";
import {
  MemorySecurityEventStore,
  type SecurityEventHook,
  SecurityEvents,
  type SecurityEventStore,
} from "@portcullis/auth/events";
import { SessionRegistry } from "@portcullis/auth/session-registry";
import type {
  DeviceBoundOptions,
  IdentityOptions,
} from "@portcullis/auth/http";
import { LoginThrottle, SlidingWindowLimiter } from "@portcullis/auth/throttle";
import { commonPasswordCheck } from "@portcullis/common-passwords";
import type { AppContext, RateLimits } from "./context.ts";
import { Flash } from "./flash.ts";
import { bodyCaps, isFormPost } from "./request_body.ts";
import {
  acceptedBodies,
  answerErrors,
  appRoutes,
  extraOf,
  methodNotAllowed,
  securityHeaders,
} from "./http.ts";
import type { Mailer } from "./mailer.ts";
import { notePolicy, NoteStore } from "./methods/password/notes.ts";
import type { AppHono, AppModule, ModuleSettings } from "./module.ts";

export type { AppHono };
import { mountPages } from "./routes/pages.ts";
import { purposeSigner } from "./sign_in_methods.ts";
import { Reauth } from "./reauth.ts";
import { ShortCookie } from "./sign_in_cookie.ts";

/** What {@linkcode createApp} needs; every part is passed in. */
export interface AppDeps {
  /** Sessions (with a revocation store). */
  sessions: SessionManager;
  /** The secret the sessions use; the app derives its `flash` key from it. */
  secret: SecretProvider;
  /** Users: `SQLCredentialStore` in production. */
  credentials: CredentialStore;
  /** Single-use token hashes: a store with an atomic consume (SQL). */
  tokens: VerificationTokenStore;
  /** Rate limits and notes: Deno KV, libSQL, Upstash, … (never memory in production). */
  kv: KeyValueStore;
  /** Sends mail. */
  mailer: Mailer;
  /** The public origin, `scheme://host[:port]`: links and the CSRF check use it. */
  appOrigin: string;
  /** The password hasher; default PBKDF2 at 600000 iterations. */
  hasher?: PasswordHasher;
  /**
   * Refuses new passwords; default the common-password list of
   * `@portcullis/common-passwords`.
   */
  isCompromised?: (password: string) => boolean | Promise<boolean>;
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
   * The client's address for per-address rate limits. Default: Deno's
   * `info.remoteAddr.hostname` when the runtime passes it, else one shared
   * bucket for every client (logged once by `createApp` when this is not
   * given). Behind a proxy, read the header your platform sets (for example
   * `cf-connecting-ip` on Workers); never trust a header a client can set.
   */
  clientAddress?: (req: Request, ...rest: unknown[]) => string | null;
  /** Overrides of the default rate limits. */
  limits?: Partial<RateLimits>;
  /**
   * Where security events are kept for the activity page:
   * `SQLAuthEventStore` in production; default in memory (lost on restart).
   */
  events?: SecurityEventStore;
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
   * The app's modules, one per sign-in method: `MODULES` of `modules.ts`,
   * the project's one list of them.
   */
  modules: readonly AppModule[];
  /**
   * What each module's `setup` built from configuration
   * (`setupModules(MODULES, …)` of `module.ts`); a module without settings
   * here is off. Default: none.
   */
  settings?: ModuleSettings;
  /**
   * Device-bound browser sessions (DBSC), on while `methods/device_bound`
   * is in `modules.ts`: a browser able to bind (Chromium over https) renews
   * a 10-minute cookie with its key, so a copied cookie dies within
   * minutes. Options here override the module's; `false` turns it off.
   */
  deviceBound?: DeviceBoundOptions | false;
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
};

/**
 * Builds the app from its parts.
 *
 * @param deps The stores, the mailer, the origin and the options.
 * @returns The Hono app; serve `app.fetch`.
 * @throws {TypeError} When `appOrigin` is not `scheme://host[:port]`.
 *
 * @example Usage
 * ```ts ignore
 * const app = createApp({ sessions, secret, credentials, tokens, kv, mailer, appOrigin: "http://localhost:8000", modules: MODULES });
 * Deno.serve(app.fetch);
 * ```
 */
export function createApp(deps: AppDeps): AppHono {
  const appOrigin = deps.appOrigin;
  const hsts = appOrigin.startsWith("https:");
  const now = deps.now ?? Date.now;
  const log = deps.log ?? console.log;
  const secure = deps.cookieSecure ?? true;
  const addresses = new WeakMap<Request, string>();
  const notes = new NoteStore(deps.kv);
  const limits = { ...DEFAULT_LIMITS, ...deps.limits };
  if (!(limits.totpConsecutiveFailures.max <= 100)) {
    throw new RangeError(
      `limits.totpConsecutiveFailures.max must be at most 100 consecutive failures (NIST SP 800-63B): received ${limits.totpConsecutiveFailures.max}`,
    );
  }
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
  // Password checks whose callers throttle them (password_login.ts, with
  // the device cookie; the signed-in re-check, with its own limits).
  const unthrottled = new PasswordAuthenticator({
    credentials: deps.credentials,
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
  const eventStore = deps.events ?? new MemorySecurityEventStore();
  const extraHook = deps.onSecurityEvent;
  const events = new SecurityEvents({
    hook: async (event) => {
      await eventStore.append(event);
      await extraHook?.(event);
    },
    now,
    onError: log,
  });
  const registry = new SessionRegistry({
    kv: deps.kv,
    manager: deps.sessions,
    revocations: deps.sessionStore ?? new KVSessionStore(deps.kv),
    now,
  });
  const parts: Omit<AppContext, "lifecycle"> = {
    sessions: deps.sessions,
    credentials: deps.credentials,
    passwords: new PasswordAuthenticator({
      credentials: deps.credentials,
      hasher,
      // New passwords are checked against ~49,000 common and breached
      // passwords (NIST SP 800-63B's blocklist); logins are not.
      isCompromised: deps.isCompromised ?? commonPasswordCheck(),
      now,
      throttle,
      // Every password write revokes the user's sessions before it writes
      // (a failed revocation changes nothing) and again after.
      revokeSessions: (subject) => deps.sessions.revokeAll(subject),
    }),
    checkPassword: (email, password) => unthrottled.login(email, password),
    deviceCookie: new ShortCookie("device", secure),
    tokens: new OneTimeTokens({ store: deps.tokens, now }),
    kv: deps.kv,
    mailer: deps.mailer,
    appOrigin,
    flash: new Flash(deps.secret.keys("flash"), secure, now),
    limiter: new SlidingWindowLimiter(deps.kv, { now }),
    throttle,
    limits,
    notes,
    notePolicy: notePolicy(notes),
    now,
    log,
    clientAddress: (req) => addresses.get(req) ?? "unknown",
    events,
    eventStore,
    registry,
    defer,
    cookieSecure: secure,
    reauth: new Reauth(purposeSigner(deps.secret, "reauth"), secure, now),
    modules: deps.modules,
    settings: deps.settings ?? new Map(),
  };
  // Every credential of an account belongs to it: the password (and the
  // account record) and each module that is on take part in one
  // lifecycle, so no route can forget a method. (A module's part reads
  // only the context's stores and settings.)
  const ctx: AppContext = Object.assign(parts, {
    lifecycle: accountLifecycle(
      deps.modules.flatMap((m) => m.lifecycle?.(parts as AppContext) ?? []),
    ),
  });
  const readAddress = deps.clientAddress ?? defaultClientAddress;
  if (deps.clientAddress === undefined) {
    log(
      "warning: clientAddress is not set: per-address rate limits use Deno's remote address when the runtime passes it, and otherwise put every client in one shared bucket (one client can then throttle everyone). Pass clientAddress, reading the address your platform sets.",
    );
  }

  const app: AppHono = new Hono();
  answerErrors(app, log);
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
    const touch = identity === null
      ? null
      : registry.seen(identity, req.headers.get("user-agent"));
    if (touch !== null) deferWith(rest, touch);
  });
  // What the modules add to the identity middleware (device-bound
  // sessions, DPoP), under the app's own options.
  const added: Partial<IdentityOptions> = Object.assign(
    {},
    ...deps.modules.map((m) => m.identityOptions?.(ctx)),
  );
  app.use(honoMiddleware(identityMiddleware(deps.sessions, {
    ...added,
    cookie: { secure },
    crossOrigin: { appOrigin },
    isVerified: async (subject) =>
      ((await deps.credentials.findById(subject))?.verifiedAt ?? 0) > 0,
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
  app.use(acceptedBodies);
  const routes: AppHono = new Hono();
  mountPages(routes, ctx);
  for (const module of deps.modules) module.routes?.(routes, ctx);
  app.use(methodNotAllowed(appRoutes(routes)));
  app.route("/", routes);
  return app;
}

function defaultClientAddress(
  _req: Request,
  ...rest: unknown[]
): string | null {
  const info = rest[0] as { remoteAddr?: { hostname?: unknown } } | undefined;
  const host = info?.remoteAddr?.hostname;
  return typeof host === "string" ? host : null;
}
