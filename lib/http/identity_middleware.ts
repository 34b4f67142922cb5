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
import { DenoKV } from "../session/deno_kv.ts";
import type { KeyValueStore } from "../session/key_value_store.ts";
import { MemoryKV } from "../session/memory_kv.ts";
import { SecretProvider } from "../session/secret_provider.ts";
import { SessionManager } from "../session/session_manager.ts";
import { KVSessionStore } from "../session/session_store.ts";
import {
  type IdentityContext,
  type RequestState,
  requestStates,
} from "./_request_state.ts";
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
 *   secret: SecretProvider.fromValue("a-32-byte-or-longer-random-secret-value!"),
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
const UNSAFE = /^(?!GET$|HEAD$|OPTIONS$)/;

async function handle(
  req: Request,
  next: Next,
  context: IdentityContext,
  csrf: CrossOriginProtection,
  bearer: boolean,
): Promise<Response> {
  const state: RequestState = {
    identity: null,
    via: null,
    authorization: false,
    invalidToken: false,
    storeUnavailable: false,
    sessionChanged: false,
    context,
  };
  let token: string | null = null;
  const credentials = bearerTransport.read(req);
  if (credentials.present) {
    state.authorization = true;
    if (bearer) token = credentials.token;
    if (token === null) state.invalidToken = true;
  } else if (context.cookie !== null) {
    token = context.cookie.read(req);
  }
  if (token !== null) {
    try {
      state.identity = await context.manager.resolve(token);
      if (state.identity !== null) {
        state.via = credentials.present ? "bearer" : "cookie";
      } else state.invalidToken = true;
    } catch (error) {
      state.identity = null;
      if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
        state.storeUnavailable = true;
        context.emit({
          type: "store_unavailable",
          error: error.cause ?? error,
        });
      } else {
        state.invalidToken = true;
        context.emit({
          type: "misconfigured",
          message: String((error as Error)?.message),
        });
      }
    }
  }
  if (state.via !== "bearer" && UNSAFE.test(req.method) && !csrf.check(req)) {
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
  requestStates.set(req, state);
  const response = await next(req);
  // Renewal only where it is on: the common case adds no await.
  if (
    state.via === "cookie" && !state.sessionChanged &&
    context.cookie !== null && context.manager.sliding
  ) {
    return await renewed(response, state, context.cookie);
  }
  return response;
}

async function renewed(
  response: Response,
  state: RequestState,
  cookie: CookieTransport,
): Promise<Response> {
  const manager = state.context.manager;
  let fresh;
  try {
    fresh = await manager.renew(state.identity!);
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
  const built = new WeakMap<
    object,
    Promise<[IdentityContext, CrossOriginProtection]>
  >();
  const processKey = {};
  return async (req, next, ...rest) => {
    // A second handler argument is the bindings object (Cloudflare's env) only
    // when it holds the secret's binding; Deno and Node pass connection info
    // there, and then the process environment is read.
    const candidate = rest[0] as Record<string, unknown> | undefined;
    const env = typeof candidate === "object" && candidate !== null &&
        typeof candidate[secretName] === "string"
      ? candidate
      : null;
    const key = env ?? processKey;
    let ready = built.get(key);
    if (ready === undefined) {
      ready = build(options, secretName, env);
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
  env: Record<string, unknown> | null,
): Promise<[IdentityContext, CrossOriginProtection]> {
  const secret = SecretProvider.fromEnv(secretName, env ? { env } : {});
  const read = (name: string): string | undefined => {
    if (env) {
      return typeof env[name] === "string" ? env[name] as string : undefined;
    }
    const g = globalThis as {
      Deno?: { env: { get(n: string): string | undefined } };
      process?: { env: Record<string, string | undefined> };
    };
    return g.Deno?.env.get(name) ?? g.process?.env[name];
  };
  let kv: KeyValueStore;
  const choice = options.store ?? "deno-kv";
  if (choice === "memory") kv = new MemoryKV();
  else if (choice === "deno-kv") kv = await DenoKV.open();
  else kv = choice;
  const manager = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
    lifetimeSeconds: options.lifetimeSeconds,
  });
  const appOrigin = options.crossOrigin?.appOrigin ?? read("APP_ORIGIN");
  const csrf = new CrossOriginProtection({ ...options.crossOrigin, appOrigin });
  return [makeContext(manager, options), csrf];
}
