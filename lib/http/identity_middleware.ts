/**
 * The middleware that establishes who is asking, and guards unsafe requests
 * against cross-origin forgery.
 *
 * @module
 */
import { AuthError } from "../auth_error.ts";
import { BearerTransport } from "../session/bearer_transport.ts";
import {
  CookieTransport,
  type CookieTransportOptions,
} from "../session/cookie_transport.ts";
import type { KeyValueStore } from "../session/key_value_store.ts";
import { SecretProvider } from "../session/secret_provider.ts";
import {
  type Identity,
  PEEK_SESSION,
  SessionManager,
} from "../session/session_manager.ts";
import { KVSessionStore } from "../session/session_store.ts";
import {
  ANONYMOUS,
  type IdentityContext,
  type RequestState,
  requestStates,
  type SessionState,
  type Via,
} from "./_request_state.ts";
import {
  type Bindings,
  bindingsFrom,
  checkStoreChoice,
  openStore,
  readBinding,
} from "./bindings.ts";
import { type AuthEvent, logAuthEvent } from "./auth_event.ts";
import {
  type CrossOriginOptions,
  CrossOriginProtection,
} from "./cross_origin_protection.ts";
import { errorResponse } from "./error_response.ts";
import type { Middleware, Next } from "./middleware.ts";

/** Options of {@linkcode identityMiddleware}. */
export interface IdentityOptions {
  /**
   * The session cookie: options, a transport, or `false` for Bearer only.
   * Default `__Host-session`.
   */
  cookie?: CookieTransportOptions | CookieTransport | false;
  /** Accept `Authorization: Bearer`; default `true`. */
  bearer?: boolean;
  /** Cross-origin protection settings (trusted origins, exempt paths). */
  crossOrigin?: CrossOriginOptions;
  /**
   * Whether a subject's email is verified, for `requireVerified`. Usually
   * a lookup in the credential store.
   */
  isVerified?: (subject: string, req: Request) => boolean | Promise<boolean>;
  /** Receives events; default {@linkcode logAuthEvent}. */
  onEvent?: (event: AuthEvent) => void;
}

/** Options of the installable form of {@linkcode identityMiddleware}. */
export interface InstallableIdentityOptions extends IdentityOptions {
  /** The binding or variable holding the secret; default `AUTH_SECRET`. */
  secretName?: string;
  /**
   * Where revocations live: `"deno-kv"` (the default, Deno only),
   * `"memory"` (tests, single process: asked for by name only) or any
   * {@linkcode KeyValueStore}.
   */
  store?: "deno-kv" | "memory" | KeyValueStore;
  /** Token lifetime in seconds; default 7 days. */
  lifetimeSeconds?: number;
}

/**
 * Resolves the request's session (a Bearer token when an `Authorization`
 * header is present, else the cookie; never both), attaches it to the
 * `Request` for {@linkcode currentUser} and the gates, and rejects unsafe
 * cross-origin requests that are not Bearer-authenticated with 403.
 *
 * Two forms: `identityMiddleware(manager, options)` with a
 * {@linkcode SessionManager} you built, or `identityMiddleware(options)`,
 * which reads the secret from the bindings named `AUTH_SECRET` (or
 * `secretName`): the handler's second argument when it is an object
 * (Cloudflare's `env`), else `Deno.env` or `process.env`. `APP_ORIGIN` is
 * read the same way.
 *
 * A store outage never authenticates: the request continues anonymous and
 * the gates answer 503.
 *
 * @param managerOrOptions A manager, or the installable form's options.
 * @param options Options when a manager is given.
 * @returns The middleware.
 *
 * @example Usage
 * ```ts
 * import { compose, identityMiddleware, KVSessionStore, MemoryKV, requireAuth, SecretProvider, SessionManager } from "@portcullis/auth";
 * const sessions = new SessionManager({
 *   secret: SecretProvider.fromValue("19CRqcgP/VC3Dlx2GK5guv7BIfJjXBwWoyeP1VwPfnI="),
 *   store: new KVSessionStore(new MemoryKV()),
 * });
 * const app = compose([identityMiddleware(sessions), requireAuth()], () => new Response("hi"));
 * ```
 */
export function identityMiddleware(
  managerOrOptions?: SessionManager | InstallableIdentityOptions,
  options: IdentityOptions = {},
): Middleware {
  if (managerOrOptions instanceof SessionManager) {
    const context = makeContext(managerOrOptions, options);
    const csrf = new CrossOriginProtection(options.crossOrigin);
    return (req, next) =>
      handle(req, next, context, csrf, options.bearer !== false);
  }
  return installable(managerOrOptions ?? {});
}

function makeContext(
  manager: SessionManager,
  options: IdentityOptions,
): IdentityContext {
  const cookie = options.cookie === false
    ? null
    : options.cookie instanceof CookieTransport
    ? options.cookie
    : new CookieTransport(options.cookie);
  const emit = options.onEvent ?? logAuthEvent;
  return {
    manager,
    cookie,
    isVerified: options.isVerified,
    emit: (e) => {
      try {
        emit(e);
      } catch {
        // A failing hook must not change an answer.
      }
    },
  };
}

const bearerTransport = new BearerTransport();
/** Every method but the three safe ones (three comparisons, no regex). */
function unsafe(method: string): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
}

// No async frames on this path: it runs on every request. A token this
// process verified before, whose revocation state memory can tell (a
// stateless manager, or `revocationStaleness` within its bound), reaches the
// handler without a single promise of our own.
function handle(
  req: Request,
  next: Next,
  context: IdentityContext,
  csrf: CrossOriginProtection,
  bearer: boolean,
): Response | Promise<Response> {
  // As an async function would: whatever throws becomes a rejection.
  try {
    return identify(req, next, context, csrf, bearer);
  } catch (error) {
    return Promise.reject(error);
  }
}

function identify(
  req: Request,
  next: Next,
  context: IdentityContext,
  csrf: CrossOriginProtection,
  bearer: boolean,
): Response | Promise<Response> {
  let token: string | null = null;
  let via: Via = "cookie";
  const credentials = bearerTransport.read(req);
  if (credentials.present) {
    via = "bearer";
    if (bearer) token = credentials.token;
  } else if (context.cookie !== null) {
    token = context.cookie.read(req);
  }
  if (token === null) {
    const session = credentials.present
      ? { kind: "invalid", via } as const
      : ANONYMOUS;
    return proceed(req, next, context, csrf, session);
  }
  const manager = context.manager;
  let known: Identity | null | undefined;
  try {
    known = manager[PEEK_SESSION](token);
  } catch {
    known = undefined; // resolve() below asks again and fails closed
  }
  if (known !== undefined) {
    return proceed(req, next, context, csrf, settled(known, via));
  }
  let resolving: Promise<Identity | null>;
  try {
    resolving = manager.resolve(token);
  } catch (error) {
    resolving = Promise.reject(error);
  }
  return resolving.then(
    (identity) => proceed(req, next, context, csrf, settled(identity, via)),
    (error) => proceed(req, next, context, csrf, failed(error, via, context)),
  );
}

function settled(identity: Identity | null, via: Via): SessionState {
  return identity === null
    ? { kind: "invalid", via }
    : { kind: "signedIn", identity, via };
}

/** The cross-origin check, the state, the handler, and renewal if due. */
function proceed(
  req: Request,
  next: Next,
  context: IdentityContext,
  csrf: CrossOriginProtection,
  session: SessionState,
): Response | Promise<Response> {
  const bearerIdentity = session.kind === "signedIn" &&
    session.via === "bearer";
  if (!bearerIdentity && unsafe(req.method) && !csrf.check(req)) {
    context.emit({
      type: "cross_origin_rejected",
      method: req.method,
      path: new URL(req.url).pathname,
    });
    return errorResponse(
      req,
      403,
      "cross_origin_rejected",
      "Cross-origin request refused",
    );
  }
  const state: RequestState = { session, changed: false, context };
  requestStates.set(req, state);
  // Renewal only where it can happen: otherwise the handler's promise is
  // answered as it is, with no frame of ours around it.
  if (
    session.kind === "signedIn" && session.via === "cookie" &&
    context.cookie !== null && context.manager.sliding
  ) {
    const cookie = context.cookie;
    return Promise.resolve(next(req)).then((response) =>
      state.changed
        ? response
        : renewed(response, session.identity, state, cookie)
    );
  }
  return next(req);
}

/** The state of a request whose token could not be resolved. */
function failed(
  error: unknown,
  via: Via,
  context: IdentityContext,
): SessionState {
  if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
    context.emit({ type: "store_unavailable", error: error.cause ?? error });
    return { kind: "unavailable", via };
  }
  context.emit({
    type: "misconfigured",
    message: String((error as Error)?.message),
  });
  return { kind: "invalid", via };
}

async function renewed(
  response: Response,
  identity: Identity,
  state: RequestState,
  cookie: CookieTransport,
): Promise<Response> {
  const manager = state.context.manager;
  let fresh;
  try {
    fresh = await manager.renew(identity);
  } catch {
    return response;
  }
  if (fresh === null) return response;
  const out = new Response(response.body, response);
  out.headers.append(
    "set-cookie",
    cookie.serialize(fresh.token, manager.secondsLeft(fresh.identity)),
  );
  return out;
}

function installable(options: InstallableIdentityOptions): Middleware {
  const secretName = options.secretName ?? "AUTH_SECRET";
  const choice = options.store ?? "deno-kv";
  checkStoreChoice(choice); // at startup, not on the first request
  const built = new WeakMap<
    object,
    Promise<[IdentityContext, CrossOriginProtection]>
  >();
  const processKey = {};
  return async (req, next, ...rest) => {
    const env = bindingsFrom(rest, secretName);
    const key = env ?? processKey;
    let ready = built.get(key);
    if (ready === undefined) {
      ready = build(options, secretName, choice, env);
      built.set(key, ready);
    }
    let context: IdentityContext, csrf: CrossOriginProtection;
    try {
      [context, csrf] = await ready;
    } catch (error) {
      built.delete(key);
      logAuthEvent({
        type: "misconfigured",
        message: (error as Error).message,
      });
      return errorResponse(
        req,
        500,
        "misconfigured",
        "Authentication is not configured on this server",
      );
    }
    return handle(req, next, context, csrf, options.bearer !== false);
  };
}

async function build(
  options: InstallableIdentityOptions,
  secretName: string,
  choice: "deno-kv" | "memory" | KeyValueStore,
  env: Bindings | null,
): Promise<[IdentityContext, CrossOriginProtection]> {
  const secret = SecretProvider.fromEnv(secretName, env ? { env } : {});
  const manager = new SessionManager({
    secret,
    store: new KVSessionStore(await openStore(choice)),
    lifetimeSeconds: options.lifetimeSeconds,
  });
  const appOrigin = options.crossOrigin?.appOrigin ??
    readBinding(env, "APP_ORIGIN");
  const csrf = new CrossOriginProtection({ ...options.crossOrigin, appOrigin });
  return [makeContext(manager, options), csrf];
}
