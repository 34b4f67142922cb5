/**
 * Cross-origin request protection for cookie-authenticated requests: the
 * algorithm of Go 1.25's `CrossOriginProtection`, with exact matching.
 *
 * @module
 */

/** Options of {@linkcode CrossOriginProtection}. */
export interface CrossOriginOptions {
  /**
   * The public origin of the app (`APP_ORIGIN`), `scheme://host[:port]`.
   * When set, an `Origin` header must equal it exactly; otherwise `Origin`'s
   * host is compared with the request's `Host`. Set it behind proxies (Vercel,
   * Workers) where the request URL may not carry the public host.
   */
  appOrigin?: string;
  /** Origins allowed to send unsafe requests, each `scheme://host[:port]`. */
  trustedOrigins?: readonly string[];
  /**
   * Paths exempt from the check, matched exactly against the request URL's
   * path: no prefix, no trailing-slash or case leniency.
   */
  exemptPaths?: readonly string[];
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Decides whether an unsafe request may go on:
 * 1. `GET`, `HEAD` and `OPTIONS` pass.
 * 2. `Sec-Fetch-Site: same-origin` or `none` passes; any other value fails
 *    unless the request is exempt.
 * 3. Without `Sec-Fetch-Site`: no `Origin` passes (not a browser); an
 *    `Origin` matching the app passes; else it fails unless exempt.
 * `Origin: null` never matches. Content type plays no part.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { CrossOriginProtection } from "@portcullis/auth/http";
 * const csrf = new CrossOriginProtection({ trustedOrigins: ["https://admin.example.com"] });
 * const forged = new Request("https://example.com/x", {
 *   method: "POST",
 *   headers: { "sec-fetch-site": "cross-site" },
 * });
 * assert.equal(csrf.check(forged), false);
 * ```
 */
export class CrossOriginProtection {
  #appOrigin: string | null;
  #trusted: Set<string>;
  #exempt: Set<string>;

  /**
   * Checks the settings once.
   *
   * @param options See {@linkcode CrossOriginOptions}.
   * @throws {TypeError} For an origin that is not exactly
   * `scheme://host[:port]`, or a path that does not start with `/`.
   */
  constructor(options: CrossOriginOptions = {}) {
    this.#appOrigin =
      options.appOrigin === undefined || options.appOrigin === ""
        ? null
        : checkOrigin(options.appOrigin, "appOrigin");
    this.#trusted = new Set(
      (options.trustedOrigins ?? []).map((o) =>
        checkOrigin(o, "trustedOrigins")
      ),
    );
    this.#exempt = new Set(
      (options.exemptPaths ?? []).map((p) => {
        if (typeof p !== "string" || !p.startsWith("/") || /[?#\s]/.test(p)) {
          throw new TypeError(
            `exemptPaths entries must be paths starting with "/": received "${p}"`,
          );
        }
        return p;
      }),
    );
  }

  /**
   * Decides one request.
   *
   * @param req The request.
   * @returns `true` when the request may go on, `false` for 403.
   */
  check(req: Request): boolean {
    if (SAFE_METHODS.has(req.method)) return true;
    const site = req.headers.get("sec-fetch-site");
    if (site === "same-origin" || site === "none") return true;
    if (site !== null) return this.#exempted(req);
    const origin = req.headers.get("origin");
    if (origin === null) return true;
    if (this.#matchesApp(req, origin)) return true;
    return this.#exempted(req);
  }

  /**
   * The origin whose unsafe requests pass without a trusted-origin or
   * exempt-path rule: the configured `appOrigin`, or else the request's own
   * scheme and `Host`. For refusal messages, so that a developer sees what
   * the app expects.
   *
   * @param req The request.
   * @returns `scheme://host[:port]`.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { CrossOriginProtection } from "@portcullis/auth/http";
   * const csrf = new CrossOriginProtection({ appOrigin: "https://app.example.com" });
   * assert.equal(
   *   csrf.expectedOrigin(new Request("http://10.0.0.7:8000/login")),
   *   "https://app.example.com",
   * );
   * ```
   */
  expectedOrigin(req: Request): string {
    if (this.#appOrigin !== null) return this.#appOrigin;
    const url = new URL(req.url);
    return `${url.protocol}//${req.headers.get("host") ?? url.host}`;
  }

  #matchesApp(req: Request, origin: string): boolean {
    if (this.#appOrigin !== null) return origin === this.#appOrigin;
    if (origin === "null") return false;
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      return false;
    }
    const reqHost = req.headers.get("host") ?? new URL(req.url).host;
    return host !== "" && host === reqHost;
  }

  #exempted(req: Request): boolean {
    const origin = req.headers.get("origin");
    if (origin !== null && this.#trusted.has(origin)) return true;
    if (this.#exempt.size === 0) return false;
    return this.#exempt.has(new URL(req.url).pathname);
  }
}

function checkOrigin(origin: string, what: string): string {
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
      `${what} must hold origins of the form scheme://host[:port] with no path or trailing slash: received "${origin}"`,
    );
  }
  return origin;
}
