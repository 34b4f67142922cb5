/**
 * A gate that keeps a handler to the methods it was written for.
 *
 * @module
 */
import { errorResponse } from "../_common/error_response.ts";
import type { Middleware } from "./middleware.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Answers 405 (with `Allow`) for any method not listed, so a handler that
 * changes state is never reached by `GET`, `HEAD` or `OPTIONS`, which
 * cross-origin protection and `SameSite=Lax` cookies let through
 * (OWASP ASVS 3.5.3). Mark mutating routes with the unsafe methods they
 * accept; listing a safe method next to an unsafe one is refused at
 * construction, since it would reopen that door.
 *
 * @param methods The accepted methods, upper case.
 * @returns The middleware.
 * @throws {TypeError} For no method, a lower-case method, or safe and unsafe
 * methods mixed.
 *
 * @example Usage
 * ```ts
 * import { allowMethods, compose } from "@portcullis/auth";
 * const deleteNote = compose([allowMethods("DELETE")], () => new Response(null, { status: 204 }));
 * (await deleteNote(new Request("https://example.com/notes/1"))).status; // 405
 * ```
 */
export function allowMethods(...methods: string[]): Middleware {
  if (
    methods.length === 0 ||
    methods.some((m) => m !== m.toUpperCase() || !/^[A-Z]+$/.test(m))
  ) {
    throw new TypeError(
      `allowMethods needs upper-case method names: received ${
        JSON.stringify(methods)
      }`,
    );
  }
  const safe = methods.filter((m) => SAFE.has(m));
  if (safe.length > 0 && safe.length < methods.length) {
    throw new TypeError(
      `allowMethods mixes safe and unsafe methods (${
        methods.join(", ")
      }): route reads and writes separately`,
    );
  }
  const allowed = new Set(methods);
  const allow = methods.join(", ");
  return (req, next) =>
    allowed.has(req.method)
      ? next()
      : errorResponse(req, 405, "method_not_allowed", "Method not allowed", {
        allow,
      });
}
