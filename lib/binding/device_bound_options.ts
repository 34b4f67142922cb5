/**
 * The options of device-bound sessions (`identityMiddleware`'s
 * `deviceBound`), checked once.
 *
 * @module
 */
import { CookieTransport } from "../session/cookie_transport.ts";
import type { KeyValueStore } from "../kv/key_value_store.ts";
import type { SessionManager } from "../session/session_manager.ts";
import type { SessionRegistry } from "../session/session_registry.ts";

/** Options of device-bound sessions: `identityMiddleware`'s `deviceBound`. */
export interface DeviceBoundOptions {
  /**
   * Where the browser registers its key (POST); default
   * `/auth/dbsc/start`. The middleware answers it.
   */
  registrationPath?: string;
  /** Where the browser renews the bound cookie (POST); default `/auth/dbsc/refresh`. */
  refreshPath?: string;
  /** The life of a bound cookie, in seconds; default 600 (10 minutes). */
  cookieLifetime?: number;
  /**
   * Where the browsers' public keys live, by session id, for as long as the
   * session may; the installable middleware defaults to its own store.
   * Required with a `SessionManager` you built.
   */
  store?: KeyValueStore;
  /** The algorithms offered; default `["ES256", "RS256"]`. */
  algorithms?: readonly ("ES256" | "RS256")[];
  /** Key prefix in the store; default `"portcullis:dbsc:"`. */
  prefix?: string;
  /**
   * The public origin (`https://host[:port]`) named in the session's scope;
   * default the request's origin.
   */
  origin?: string;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /**
   * The "my sessions" registry, if the app keeps one: a registration moves
   * the session's entry to its bound id (shown with `binding: "device"`).
   */
  registry?: SessionRegistry;
}

/** The events of device-bound sessions, for logs and security events. */
export type DeviceBoundEvent =
  | { type: "session_bound"; subject: string; req: Request }
  | { type: "session_refreshed"; subject: string; req: Request }
  | {
    type: "binding_proof_refused";
    subject: string | null;
    reason: string;
    req: Request;
  };

/** The options after checking, every default filled in. */
export interface CheckedDeviceBound {
  registrationPath: string;
  refreshPath: string;
  life: number;
  algorithms: readonly ("ES256" | "RS256")[];
  store: KeyValueStore;
  prefix: string;
  origin: string | null;
  now: () => number;
  registry: SessionRegistry | null;
  /** The bound cookie, named after the unbound one (`__Host-session-bound`). */
  cookie: CookieTransport;
  /** Its attributes as the session JSON names them. */
  attributes: string;
}

/**
 * Checks the options; misuse throws here, not per request.
 *
 * @throws {TypeError} For a missing store, a stateless manager or a path
 * not starting with `/`.
 * @throws {RangeError} For a cookie lifetime outside 10 s to 1 day, or an
 * algorithm other than ES256 and RS256.
 */
export function checkDeviceBound(
  manager: SessionManager,
  unbound: CookieTransport,
  options: DeviceBoundOptions,
): CheckedDeviceBound {
  if (!options.store || typeof options.store.getMany !== "function") {
    throw new TypeError(
      "deviceBound needs a store for the browsers' public keys: pass deviceBound.store (a KeyValueStore)",
    );
  }
  if (!manager.revocable) {
    throw new TypeError(
      "deviceBound needs a SessionManager with a store: registration revokes the unbound token",
    );
  }
  const life = options.cookieLifetime ?? 600;
  if (!Number.isSafeInteger(life) || life < 10 || life > 86400) {
    throw new RangeError(
      `deviceBound.cookieLifetime must be a whole number of seconds from 10 to 86400: received ${life}`,
    );
  }
  const algorithms = options.algorithms ?? ["ES256", "RS256"];
  if (
    algorithms.length === 0 ||
    !algorithms.every((a) => a === "ES256" || a === "RS256")
  ) {
    throw new RangeError(
      `deviceBound.algorithms must be some of ES256, RS256: received ${
        algorithms.join(", ")
      }`,
    );
  }
  const base = unbound.secure ? unbound.name.slice(7) : unbound.name;
  const cookie = new CookieTransport({
    name: `${base}-bound`.slice(0, 64),
    secure: unbound.secure,
    sameSite: unbound.clear().includes("SameSite=Strict") ? "Strict" : "Lax",
    warn: () => {},
  });
  return {
    registrationPath: checkPath(options.registrationPath ?? "/auth/dbsc/start"),
    refreshPath: checkPath(options.refreshPath ?? "/auth/dbsc/refresh"),
    life,
    algorithms,
    store: options.store,
    prefix: options.prefix ?? "portcullis:dbsc:",
    origin: options.origin ?? null,
    now: options.now ?? Date.now,
    registry: options.registry ?? null,
    cookie,
    // "Path=/; Secure; HttpOnly; SameSite=Lax", as the cookie carries them.
    attributes: cookie.clear().split("; ").slice(1, -1).join("; "),
  };
}

function checkPath(path: string): string {
  if (!/^\/[A-Za-z0-9._~\/-]*$/.test(path) || path.startsWith("//")) {
    throw new TypeError(
      `deviceBound paths must be plain same-origin paths starting with "/": received "${path}"`,
    );
  }
  return path;
}
