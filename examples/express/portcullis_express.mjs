// @ts-check
/**
 * The Express glue, a recipe of a few dozen lines: any portcullis middleware
 * (`identityMiddleware`, `requireAuth()`, your own) as Express middleware.
 *
 * Each Express request gets one Web `Request` (method, URL, headers; no
 * body, which Express's own parsers read), shared by every portcullis
 * middleware and reachable from routes as `req.portcullis`, so `signIn`,
 * `signOut`, `authorize` and `currentUser` work on it. After
 * `identityMiddleware`, `req.identity` holds the identity or `null`.
 *
 * A portcullis answer (401, 303 to /login, 403 for a cross-site request)
 * ends the chain; otherwise its headers (a renewed cookie) are kept and
 * the next Express handler runs.
 */
import { currentIdentity } from "@portcullis/auth";
import { writeResponse } from "@portcullis/auth/adapters/node";

/**
 * @typedef {import("express").Request & {
 *   portcullis?: Request,
 *   identity?: import("@portcullis/auth").Identity | null,
 * }} AuthedRequest
 */

/**
 * The Web `Request` portcullis sees for an Express request (made once).
 *
 * @param {AuthedRequest} req The Express request.
 * @param {string} origin The public origin the URL is built on.
 * @returns {Request}
 */
export function webRequest(req, origin) {
  if (req.portcullis) return req.portcullis;
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  // Joined, not resolved: a path like `//other.host/` stays a path.
  const path = req.originalUrl.startsWith("/") ? req.originalUrl : "/";
  const base = origin.replace(/\/$/, "");
  req.portcullis = new Request(new URL(`${base}${path}`), {
    method: req.method,
    headers,
  });
  return req.portcullis;
}

/**
 * Wraps a portcullis middleware as Express middleware.
 *
 * @param {import("@portcullis/auth").Middleware} middleware
 * @param {{ origin: string }} options The public origin (`APP_ORIGIN`).
 * @returns {import("express").RequestHandler}
 */
export function portcullis(middleware, { origin }) {
  return (req, res, next) => {
    const request = webRequest(req, origin);
    let reached = false;
    Promise.resolve(middleware(request, (r) => {
      if (r !== undefined && r !== request) {
        throw new TypeError("portcullis needs next() to get the same Request");
      }
      reached = true;
      return Promise.resolve(new Response(null));
    })).then(async (answer) => {
      if (!reached) return await writeResponse(res, answer);
      for (const cookie of answer.headers.getSetCookie()) {
        res.append("set-cookie", cookie);
      }
      /** @type {AuthedRequest} */ (req).identity = currentIdentity(request);
      next();
    }).catch(next);
  };
}

/**
 * Sends a `Response` (an `errorResponse`, a gate's answer) through Express.
 *
 * @param {import("express").Response} res
 * @param {Response} response
 * @returns {Promise<void>}
 */
export function send(res, response) {
  return writeResponse(res, response);
}
