/**
 * The middleware that establishes who is asking, and guards unsafe requests
 * against cross-origin forgery.
 *
 * @module
 */
import {
  CookieTransport,
  type CookieTransportOptions,
} from "../session/cookie_transport.ts";
import type { KeyValueStore } from "../kv/key_value_store.ts";
import { SecretProvider } from "../secrets/secret_provider.ts";
import { SessionManager } from "../session/session_manager.ts";
import { KVSessionStore } from "../session/session_store.ts";
import type { IdentityContext } from "./_request_state.ts";
import { type Identify, identify } from "./_identify.ts";
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
import { errorResponse } from "../_common/error_response.ts";
import type { Middleware } from "./middleware.ts";
import { type DpopOptions, DpopVerifier } from "../binding/dpop_proof.ts";
import {
  type DeviceBoundEvent,
  type DeviceBoundOptions,
  DeviceBoundSessions,
} from "../binding/device_bound_sessions.ts";
import type { SecurityEvents } from "../events/security_event.ts";
import type { ApiKeys } from "../session/api_keys.ts";

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
  /**
   * Opt-in DPoP (RFC 9449): a sign-in request with a valid `DPoP` proof
   * gets a token bound to the proof's key, which then works only as
   * `Authorization: DPoP <token>` with a fresh proof by that key. Any
   * request with a `DPoP` header or scheme whose proof fails gets 401
   * `WWW-Authenticate: DPoP error="invalid_dpop_proof"`. Unbound tokens
   * keep working as `Bearer`. Give `store` so that proofs replayed on
   * another instance are refused too. `htu` is compared with
   * `crossOrigin.appOrigin` when set (else the request's origin).
   *
   * `dpop: { nonce: true }` (or `nonce: { lifetimeSeconds }`, default 60)
   * turns on server nonces (RFC 9449 §8, §9): a proof must then carry a
   * `nonce` this server issued, else the answer is 401
   * `WWW-Authenticate: DPoP error="use_dpop_nonce"` with the nonce in a
   * `DPoP-Nonce` header, on the sign-in as on any other request. A client
   * retries with it (oauth4webapi does when the app catches
   * `isDPoPNonceError`). A nonce holds in its window and the next one; an
   * answer to a proof whose nonce is of the previous window carries the
   * next nonce in `DPoP-Nonce`. The nonces are derived from the sessions'
   * secret: stateless, and the same on every instance. Browser clients on
   * another origin read the header only if the app's CORS answer lists
   * `DPoP-Nonce` (and `WWW-Authenticate`) in `Access-Control-Expose-Headers`.
   *
   * @example Server nonces
   * ```ts
   * import assert from "node:assert/strict";
   * import { compose, currentIdentity, identityMiddleware, KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "@portcullis/auth";
   * const sessions = new SessionManager({
   *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
   *   store: new KVSessionStore(new MemoryKV()),
   * });
   * const app = compose(
   *   [identityMiddleware(sessions, { dpop: { nonce: true } })],
   *   (req) => new Response(currentIdentity(req)?.subject ?? "anonymous"),
   * );
   * // A client's key and its proofs (a DPoP client library makes these).
   * const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
   * const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey);
   * const b64u = (b: Uint8Array) => btoa(String.fromCharCode(...b)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
   * const part = (v: unknown) => b64u(new TextEncoder().encode(JSON.stringify(v)));
   * const proof = async (nonce?: string) => {
   *   const input = `${part({ typ: "dpop+jwt", alg: "ES256", jwk: { kty, crv, x, y } })}.${
   *     part({ jti: crypto.randomUUID(), htm: "GET", htu: "https://api.example/me", iat: Math.floor(Date.now() / 1000), nonce })
   *   }`;
   *   const sig = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, new TextEncoder().encode(input));
   *   return `${input}.${b64u(new Uint8Array(sig))}`;
   * };
   * const first = await app(new Request("https://api.example/me", { headers: { dpop: await proof() } }));
   * assert.equal(first.status, 401);
   * assert.match(first.headers.get("www-authenticate")!, /^DPoP error="use_dpop_nonce"/);
   * const nonce = first.headers.get("dpop-nonce")!;
   * const retry = await app(new Request("https://api.example/me", { headers: { dpop: await proof(nonce) } }));
   * assert.equal(retry.status, 200);
   * ```
   */
  dpop?: boolean | DpopOptions;
  /**
   * Opt-in device-bound browser sessions (W3C DBSC): signed-in browser
   * responses offer registration; a browser that registers gets a bound
   * cookie of `cookieLifetime` (default 10 minutes) that it renews with a
   * proof of possession, and the unbound token it signed in with stops
   * working. Browsers without DBSC keep the ordinary session.
   */
  deviceBound?: DeviceBoundOptions;
  /**
   * Opt-in API keys (personal access tokens): a Bearer value that starts
   * with the keys' prefix (`pc_`) is resolved by these {@linkcode ApiKeys}
   * (one store read by the key's id), never as a session. The identity it
   * gives has `apiKey` set (the key's id and scopes): a policy gate refuses
   * every action outside the scopes, and `requirePerson` refuses the key
   * outright (a key never changes a password, an address or another key).
   * Keys go only in `Authorization: Bearer`, so they need no cross-origin
   * check.
   */
  apiKeys?: ApiKeys;
  /**
   * Where `session_bound`, `session_refreshed` and `binding_proof_refused`
   * security events go. A DPoP proof refused only for its server nonce is
   * not one (clients are expected to meet that refusal); `onEvent` still
   * hears of it, as `dpop_proof_refused` with reason `"nonce"`.
   */
  securityEvents?: SecurityEvents;
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
 *   secret: SecretProvider.fromValue(crypto.getRandomValues(new Uint8Array(32))),
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
    return identify(
      makeContext(managerOrOptions, options, null),
      new CrossOriginProtection(options.crossOrigin),
      options.bearer !== false,
    );
  }
  return installable(managerOrOptions ?? {});
}

function makeContext(
  manager: SessionManager,
  options: IdentityOptions,
  kv: KeyValueStore | null,
): IdentityContext {
  const cookie = options.cookie === false
    ? null
    : options.cookie instanceof CookieTransport
    ? options.cookie
    : new CookieTransport(options.cookie);
  const hook = options.onEvent ?? logAuthEvent;
  const events = options.securityEvents;
  const emit = (e: AuthEvent) => {
    try {
      hook(e);
    } catch {
      // A failing hook must not change an answer.
    }
    // A proof without the current nonce is the protocol's expected first
    // step (RFC 9449 §8, §9), not an attack: the hook hears of it, the
    // security events do not.
    if (e.type === "dpop_proof_refused" && e.reason !== "nonce") {
      events?.emit("binding_proof_refused", null).catch(() => {});
    }
  };
  const dpopOptions = options.dpop === true ? {} : options.dpop || null;
  const nonce = dpopOptions?.nonce;
  const dpop = dpopOptions === null ? null : new DpopVerifier({
    ...dpopOptions,
    store: dpopOptions.store === undefined ? kv : dpopOptions.store,
    // Behind a proxy the request URL may not carry the public origin.
    origin: dpopOptions.origin ?? options.crossOrigin?.appOrigin,
    // Nonces are signed with a key derived from the sessions' secret; any
    // other value goes as it is, for DpopVerifier to refuse.
    nonce: nonce === true
      ? { secret: manager.secret }
      : typeof nonce === "object" && nonce !== null && !Array.isArray(nonce)
      ? { ...nonce, secret: nonce.secret ?? manager.secret }
      : nonce,
  });
  let device: DeviceBoundSessions | null = null;
  if (options.deviceBound) {
    if (cookie === null) {
      throw new TypeError(
        "deviceBound needs the session cookie: do not pass cookie: false",
      );
    }
    const onDevice = (e: DeviceBoundEvent) => {
      events?.emit(e.type, e.subject, e.req).catch(() => {});
    };
    device = new DeviceBoundSessions(
      manager,
      cookie,
      {
        ...options.deviceBound,
        store: options.deviceBound.store ?? kv ?? undefined,
        origin: options.deviceBound.origin ?? options.crossOrigin?.appOrigin,
      },
      emit,
      onDevice,
    );
  }
  return {
    manager,
    cookie,
    isVerified: options.isVerified,
    emit,
    dpop,
    device,
    keys: options.apiKeys ?? null,
  };
}

function installable(options: InstallableIdentityOptions): Middleware {
  const secretName = options.secretName ?? "AUTH_SECRET";
  const choice = options.store ?? "deno-kv";
  checkStoreChoice(choice); // at startup, not on the first request
  // One per set of bindings (Cloudflare passes its env per request; other
  // runtimes read the process's): being built, then built.
  const building = new WeakMap<object, Promise<Identify>>();
  const built = new WeakMap<object, Identify>();
  const processKey = {};
  return (req, next, ...rest) => {
    const env = bindingsFrom(rest, secretName);
    const key = env ?? processKey;
    const run = built.get(key);
    if (run !== undefined) {
      try {
        return run(req, next);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    let ready = building.get(key);
    if (ready === undefined) {
      ready = build(options, secretName, choice, env);
      building.set(key, ready);
      ready.then((r) => built.set(key, r), () => {});
    }
    return ready.then((r) => r(req, next), (error) => {
      building.delete(key);
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
    });
  };
}

async function build(
  options: InstallableIdentityOptions,
  secretName: string,
  choice: "deno-kv" | "memory" | KeyValueStore,
  env: Bindings | null,
): Promise<Identify> {
  const secret = SecretProvider.fromEnv(secretName, env ? { env } : {});
  const kv = await openStore(choice);
  const manager = new SessionManager({
    secret,
    store: new KVSessionStore(kv),
    lifetimeSeconds: options.lifetimeSeconds,
  });
  const appOrigin = options.crossOrigin?.appOrigin ??
    readBinding(env, "APP_ORIGIN");
  const csrf = new CrossOriginProtection({ ...options.crossOrigin, appOrigin });
  return identify(
    makeContext(manager, options, kv),
    csrf,
    options.bearer !== false,
  );
}
