/**
 * The reference app: registration, login, logout, email verification, an
 * account page and a notes API, over portcullis. Web APIs only, so one
 * `createApp` serves Deno, Bun, Node, Vercel Edge and Cloudflare Workers;
 * each runtime's entry builds the stores and passes them in (`main.ts` is
 * Deno's).
 *
 * Routes (DESIGN.md §10): `GET /`, `GET|POST /register`, `GET|POST /login`,
 * `POST /logout`, `GET /account`, `POST /account/password`, `GET /api/me`,
 * `POST /api/notes`, `GET|PUT /api/notes/:id`, and with email
 * verification `GET|POST /verify` and `POST /verify/resend` (`GET /verify`
 * only shows a confirmation form and `POST /verify` redeems the token: a
 * deliberate deviation from DESIGN.md §10, where `GET` redeemed). The
 * sign-in methods beside the password (TOTP, OpenID Connect, passkeys) add
 * theirs through `routes/sign_in_routes.ts` when `signInMethods` turns
 * them on.
 *
 * @module
 */
import {
  AuthError,
  compose,
  type CredentialStore,
  errorResponse,
  identityMiddleware,
  type KeyValueStore,
  OneTimeTokens,
  PasswordAuthenticator,
  type PasswordHasher,
  Pbkdf2Hasher,
  requireAuth,
  type SecretProvider,
  type SessionManager,
  type VerificationTokenStore,
} from "@portcullis/auth";
import { commonPasswordCheck } from "@portcullis/auth/passwords/common";
import type { AppContext, RateLimits } from "./context.ts";
import { Flash } from "./flash.ts";
import type { Mailer } from "./mailer.ts";
import { notePolicy, NoteStore } from "./notes.ts";
import { RateLimiter } from "./rate_limit.ts";
import { createNote, getNote, me, putNote } from "./routes/api.ts";
import { changePassword, login, logout, register } from "./routes/auth.ts";
import { account, home, loginForm, registerForm } from "./routes/pages.ts";
import { signInRoute } from "./routes/sign_in_routes.ts";
import { signInMethods, type SignInMethodsDeps } from "./sign_in_methods.ts";
// [verification] begin
import { confirmVerify, resend, verify } from "./routes/verify.ts";
// [verification] end

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
   * `@portcullis/auth/passwords/common`.
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
   * Sign-in methods beside the password (TOTP, OpenID Connect, passkeys),
   * each on when given; see `sign_in_methods.ts`. Default: none.
   */
  signInMethods?: SignInMethodsDeps;
}

/** The app: a Web-standard handler. */
export type App = (req: Request, ...rest: unknown[]) => Promise<Response>;

/** The default rate limits. */
export const DEFAULT_LIMITS: RateLimits = {
  loginPerEmail: { max: 10, windowSeconds: 15 * 60 },
  loginPerAddress: { max: 100, windowSeconds: 15 * 60 },
  passwordChangePerAccount: { max: 10, windowSeconds: 15 * 60 },
  passwordChangePerAddress: { max: 100, windowSeconds: 15 * 60 },
  registerPerAddress: { max: 10, windowSeconds: 60 * 60 },
  resendPerAccount: { max: 3, windowSeconds: 60 * 60 },
  verifyPerAddress: { max: 30, windowSeconds: 15 * 60 },
};

const NOTE_PATH = /^\/api\/notes\/([^/]+)$/;

/**
 * Builds the app from its parts.
 *
 * @param deps The stores, the mailer, the origin and the options.
 * @returns The handler: `(req, ...rest) => Promise<Response>`.
 * @throws {TypeError} When `appOrigin` is not `scheme://host[:port]`.
 *
 * @example Usage
 * ```ts ignore
 * const app = createApp({ sessions, secret, credentials, tokens, kv, mailer, appOrigin: "http://localhost:8000" });
 * Deno.serve(app);
 * ```
 */
export function createApp(deps: AppDeps): App {
  const appOrigin = checkOrigin(deps.appOrigin);
  const now = deps.now ?? Date.now;
  const log = deps.log ?? console.log;
  const secure = deps.cookieSecure ?? true;
  const addresses = new WeakMap<Request, string>();
  const notes = new NoteStore(deps.kv);
  const ctx: AppContext = {
    sessions: deps.sessions,
    credentials: deps.credentials,
    passwords: new PasswordAuthenticator({
      credentials: deps.credentials,
      hasher: deps.hasher ?? new Pbkdf2Hasher(),
      // New passwords are checked against ~49,000 common and breached
      // passwords (SECURITY.md item 13); logins are not.
      isCompromised: deps.isCompromised ?? commonPasswordCheck(),
      now,
    }),
    tokens: new OneTimeTokens({ store: deps.tokens, now }),
    kv: deps.kv,
    mailer: deps.mailer,
    appOrigin,
    flash: new Flash(deps.secret.keys("flash"), secure, now),
    limiter: new RateLimiter(deps.kv, now),
    limits: { ...DEFAULT_LIMITS, ...deps.limits },
    notes,
    notePolicy: notePolicy(notes),
    now,
    log,
    clientAddress: (req) => addresses.get(req) ?? "unknown",
    methods: signInMethods(deps.signInMethods, log, secure),
  };
  const readAddress = deps.clientAddress ?? defaultClientAddress;
  if (deps.clientAddress === undefined) {
    log(
      "warning: clientAddress is not set: per-address rate limits use Deno's remote address when the runtime passes it, and otherwise put every client in one shared bucket (one client can then throttle everyone). Pass clientAddress, reading the address your platform sets.",
    );
  }

  const accountGroup = compose([requireAuth()], (req) => account(ctx, req));
  const router = (req: Request): Promise<Response> | Response => {
    const path = new URL(req.url).pathname;
    const method = req.method === "HEAD" ? "GET" : req.method;
    const only = (
      allowed: string,
      handler: () => Promise<Response> | Response,
    ) => method === allowed ? handler() : notAllowed(req, allowed);
    const signInMethod = signInRoute(ctx, req, path, method);
    if (signInMethod !== null) return signInMethod;
    switch (path) {
      case "/":
        return only("GET", () => home(ctx, req));
      case "/register":
        return method === "POST"
          ? register(ctx, req)
          : only("GET", registerForm);
      case "/login":
        return method === "POST"
          ? login(ctx, req)
          : only("GET", () => loginForm(ctx, req));
      case "/logout":
        return only("POST", () => logout(ctx, req));
      // [verification] begin
      case "/verify":
        return method === "POST"
          ? verify(ctx, req)
          : only("GET", () => confirmVerify(ctx, req));
      case "/verify/resend":
        return only("POST", () => resend(ctx, req));
      // [verification] end
      case "/account":
        return only("GET", () => accountGroup(req));
      case "/account/password":
        return only("POST", () => changePassword(ctx, req));
      case "/api/me":
        return only("GET", () => me(ctx, req));
      case "/api/notes":
        return only("POST", () => createNote(ctx, req));
    }
    const note = NOTE_PATH.exec(path);
    if (note !== null) {
      if (method === "GET") return getNote(ctx, req, note[1]);
      return only("PUT", () => putNote(ctx, req, note[1]));
    }
    return errorResponse(req, 404, "not_found", "Nothing here");
  };

  const handler = compose<unknown[]>([
    identityMiddleware(deps.sessions, {
      cookie: { secure },
      crossOrigin: { appOrigin },
      isVerified: async (subject) =>
        ((await deps.credentials.findById(subject))?.verifiedAt ?? 0) > 0,
    }),
  ], router);

  return async (req, ...rest) => {
    addresses.set(req, readAddress(req, ...rest) ?? "unknown");
    let res: Response;
    try {
      res = await handler(req, ...rest);
    } catch (error) {
      if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
        log(`store unavailable: ${error.message}`);
        res = errorResponse(
          req,
          503,
          "unavailable",
          "The service is temporarily unavailable, try again shortly",
          { "retry-after": "5" },
        );
      } else {
        log(
          `unexpected error on ${req.method} ${new URL(req.url).pathname}: ${
            (error as Error)?.message
          }`,
        );
        res = errorResponse(req, 500, "internal", "Something went wrong");
      }
    }
    return withSecurityHeaders(res);
  };
}

function defaultClientAddress(
  _req: Request,
  ...rest: unknown[]
): string | null {
  const info = rest[0] as { remoteAddr?: { hostname?: unknown } } | undefined;
  const host = info?.remoteAddr?.hostname;
  return typeof host === "string" ? host : null;
}

function notAllowed(req: Request, allowed: string): Response {
  return errorResponse(req, 405, "method_not_allowed", "Method not allowed", {
    allow: allowed === "GET" ? "GET, HEAD" : allowed,
  });
}

function withSecurityHeaders(res: Response): Response {
  // Set the headers in place: re-wrapping the body in a new Response would
  // turn it into a stream and cost the server its fast path. Responses with
  // immutable headers (Response.redirect, fetch results) are re-wrapped.
  try {
    setSecurityHeaders(res.headers);
    return res;
  } catch {
    const headers = new Headers(res.headers);
    setSecurityHeaders(headers);
    return new Response(res.body, {
      status: res.status,
      statusText: res.statusText,
      headers,
    });
  }
}

function setSecurityHeaders(headers: Headers): void {
  headers.set("x-content-type-options", "nosniff");
  headers.set("x-frame-options", "DENY");
  if (!headers.has("referrer-policy")) {
    headers.set("referrer-policy", "same-origin");
  }
  if ((headers.get("content-type") ?? "").startsWith("text/html")) {
    headers.set(
      "content-security-policy",
      // script-src and connect-src 'self': the passkey pages load the
      // app's own /assets/passkeys.js, which posts to the app.
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
  }
}

function checkOrigin(origin: string): string {
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    // reported below
  }
  if (
    url === null || (url.protocol !== "https:" && url.protocol !== "http:") ||
    url.origin !== origin
  ) {
    throw new TypeError(
      `appOrigin must be scheme://host[:port] with no path or trailing slash: received "${origin}"`,
    );
  }
  return origin;
}
