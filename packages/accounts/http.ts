/**
 * The app's answers around its routes, as Hono middleware: errors (503 for
 * a store that cannot tell, 500 otherwise, 404 for a path no route has),
 * the security headers, the media types a body may have (415), and 405
 * with `Allow` for a method a path lacks. `createApp` puts them in order.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import {
  AuthError,
  BearerTransport,
  CookieTransport,
  errorResponse,
} from "@portcullis/auth";
import type { Hono } from "hono";
import type { AccountsEnv } from "./module_parts.ts";
import { acceptedBody } from "./request_body.ts";
import { HashingBusyError } from "./hashing_gate.ts";

/** The package's Hono app (internal: the public face is `fetch`). */
export type AppHono = Hono<AccountsEnv>;

/**
 * The pages' content security policy. `'self'` for scripts and fetches:
 * the passkey pages load the app's own `/assets/passkeys.js`, which posts
 * to the app.
 */
const CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Answers what a route threw and what no route has: `answer`'s answer
 * when it has one (a refused sign-in), 503 with `Retry-After` for a store
 * that cannot be reached or a password check the hashing bound had no room
 * for (`busy`), 500 for anything else (logged, never shown), 404
 * `not_found`.
 *
 * @param app The app.
 * @param log Where operational messages go.
 * @param answer The app's own answer to an error, or `null` for the default.
 */
export function answerErrors(
  app: AppHono,
  log: (line: string) => void,
  answer?: (error: unknown, req: Request) => Promise<Response | null>,
): void {
  app.onError(async (error, c) => {
    const req = c.req.raw;
    const answered = await answer?.(error, req);
    if (answered) return answered;
    if (error instanceof HashingBusyError) {
      // A password check the hashing bound had no room for: nothing ran.
      return errorResponse(
        req,
        503,
        "busy",
        error.message,
        { "retry-after": String(error.retryAfterSeconds) },
      );
    }
    if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
      log(`store unavailable: ${error.message}`);
      return errorResponse(
        req,
        503,
        "unavailable",
        "The service is temporarily unavailable, try again shortly",
        { "retry-after": "5" },
      );
    }
    log(
      `unexpected error on ${req.method} ${new URL(req.url).pathname}: ${
        (error as Error)?.message
      }`,
    );
    return errorResponse(req, 500, "internal", "Something went wrong");
  });
  app.notFound((c) =>
    errorResponse(c.req.raw, 404, "not_found", "Nothing here")
  );
}

/**
 * The security headers: Hono's `secureHeaders` with the app's own set
 * (`nosniff`, `X-Frame-Options: DENY`, `Referrer-Policy: same-origin`
 * unless a page set its own, HSTS over https) and none of its other
 * defaults, then the content security policy on pages.
 *
 * @param hsts Whether the app is served over https.
 * @returns The middlewares, in order.
 */
export function securityHeaders(hsts: boolean): MiddlewareHandler[] {
  return [
    secureHeaders({
      xFrameOptions: "DENY",
      // Pages that carry a token in their URL set "strict-origin".
      referrerPolicy: "same-origin",
      // Served over https: browsers use nothing else for a year, so a
      // first plain-HTTP request cannot be downgraded (the cross-origin
      // check relies on it too).
      strictTransportSecurity: hsts ? "max-age=31536000" : false,
      overwrite: false,
      crossOriginResourcePolicy: false,
      crossOriginOpenerPolicy: false,
      originAgentCluster: false,
      xDnsPrefetchControl: false,
      xDownloadOptions: false,
      xPermittedCrossDomainPolicies: false,
      xXssProtection: false,
    }),
    // The content security policy goes on pages only, as it always has:
    // secureHeaders would put it on every answer, and with it on the JSON
    // 413 for an oversized body, Deno sent that answer's head and body in
    // separate writes about half the time (measured over raw TCP), so a
    // client that stops reading at the head missed the body.
    async (c, next) => {
      await next();
      if ((c.res.headers.get("content-type") ?? "").startsWith("text/html")) {
        c.res.headers.set("content-security-policy", CSP);
      }
    },
  ];
}

/**
 * 415 for a `POST`, `PUT` or `PATCH` whose body is not JSON or a form
 * (`acceptedBody`), on a path a route takes: a path no route has answers
 * 404 whatever its body, so that an answer never tells which paths exist
 * (the console hides itself behind that 404).
 *
 * @param routes The app's routes ({@linkcode appRoutes}).
 * @returns The middleware.
 */
export function acceptedBodies(
  routes: { method: string; path: string }[],
): MiddlewareHandler {
  const methodsOf = routeMethods(routes);
  return async (c, next) => {
    const method = c.req.method;
    if (
      (method === "POST" || method === "PUT" || method === "PATCH") &&
      !acceptedBody(c.req.raw) && methodsOf(c.req.path) !== undefined
    ) {
      return errorResponse(
        c.req.raw,
        415,
        "unsupported_media_type",
        "Send application/json, application/x-www-form-urlencoded or multipart/form-data",
      );
    }
    await next();
  };
}

/**
 * Every route the app serves, `METHOD path` (Hono's route list without the
 * middleware and the 405 catch-alls): what `docs/http_contract.md` lists.
 *
 * @param app The app.
 * @returns The routes, in the order they were mounted.
 */
export function appRoutes(
  app: AppHono,
): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  for (const { method, path } of app.routes) {
    if (method === "ALL") continue;
    if (!out.some((r) => r.method === method && r.path === path)) {
      out.push({ method, path });
    }
  }
  return out;
}

/**
 * What a runtime passed beside the request: Hono's `env` (Deno's serve
 * info, Workers' bindings) and its execution context where there is one.
 *
 * @param c The Hono context.
 * @returns The extra arguments, as a Web-standard handler gets them.
 */
export function extraOf(c: {
  env: unknown;
  readonly executionCtx: unknown;
}): unknown[] {
  let executionCtx: unknown;
  try {
    executionCtx = c.executionCtx;
  } catch {
    return c.env === undefined ? [] : [c.env];
  }
  return [c.env, executionCtx];
}

/**
 * Answers 405 with `Allow` for a method a path's routes lack, before any
 * route runs. A path without a parameter wins over one with: `GET
 * /login/oidc/link` is 405 (the path takes only `POST`), not a provider
 * named "link".
 *
 * @param routes The app's routes ({@linkcode appRoutes}).
 * @returns The middleware.
 */
export function methodNotAllowed(
  routes: { method: string; path: string }[],
): MiddlewareHandler {
  const methodsOf = routeMethods(routes);
  return async (c, next) => {
    const methods = methodsOf(c.req.path);
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    if (methods === undefined || methods.includes(method)) return await next();
    return errorResponse(
      c.req.raw,
      405,
      "method_not_allowed",
      "Method not allowed",
      {
        allow: methods.flatMap((m) => m === "GET" ? ["GET", "HEAD"] : [m]).join(
          ", ",
        ),
      },
    );
  };
}

/**
 * The methods the routes take on a path, or `undefined` for a path no route
 * has. A path without a parameter wins over one with.
 */
function routeMethods(
  routes: { method: string; path: string }[],
): (path: string) => string[] | undefined {
  const allowed = new Map<string, string[]>();
  for (const { method, path } of routes) {
    allowed.set(path, [...allowed.get(path) ?? [], method]);
  }
  const patterns = [...allowed.keys()].filter((p) => p.includes("/:")).map(
    (path) => ({
      path,
      pattern: new RegExp(`^${path.replace(/\/:[a-z]+/g, "/[^/]+")}$`),
    }),
  );
  return (path) => {
    const route = allowed.has(path)
      ? path
      : patterns.find((p) => p.pattern.test(path))?.path;
    return route === undefined ? undefined : allowed.get(route);
  };
}

const BEARER = new BearerTransport();
const COOKIES = {
  secure: new CookieTransport({ secure: true, warn: () => {} }),
  plain: new CookieTransport({ secure: false, warn: () => {} }),
};

/**
 * The session token a request presents, read by the core's transports: a
 * well-formed `Authorization: Bearer` token when that header is there (the
 * cookie then does not count), else the session cookie. Nothing is
 * verified: for naming who acted on a request the identity middleware has
 * not (or not yet) resolved.
 *
 * @param req The request.
 * @param secure Whether the app's cookies are `Secure` (`__Host-` names).
 * @returns The token, or `null`.
 */
export function presentedToken(req: Request, secure: boolean): string | null {
  const bearer = BEARER.read(req);
  if (bearer.present) return bearer.token;
  return (secure ? COOKIES.secure : COOKIES.plain).read(req);
}
