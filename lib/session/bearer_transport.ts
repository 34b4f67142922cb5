/**
 * Carries session tokens in `Authorization: Bearer`, for API and native
 * clients.
 *
 * @module
 */

/** What {@linkcode BearerTransport.read} found. */
export interface BearerCredentials {
  /** Whether the request has an `Authorization` header at all. */
  readonly present: boolean;
  /** The token when the header is exactly `Bearer <token>`, else `null`. */
  readonly token: string | null;
}

// RFC 6750 §2.1: the scheme (case-insensitive), one space, a b64token. The
// scheme is compared as a string and only the token goes through a regex
// without a capture group: no match array per request.
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const ABSENT: BearerCredentials = Object.freeze({
  present: false,
  token: null,
});
const INVALID: BearerCredentials = Object.freeze({
  present: true,
  token: null,
});

/**
 * Parses `Authorization: Bearer <token>` strictly (RFC 6750). Another scheme,
 * a missing or doubled token, extra parts, non-ASCII or an oversized header
 * is not authentication. When the header is present, only it counts: the
 * cookie is ignored, never used as a fallback.
 *
 * @example Usage
 * ```ts
 * import { BearerTransport } from "@portcullis/auth";
 * const bearer = new BearerTransport();
 * bearer.read(new Request("https://example.com/", { headers: { authorization: "Bearer abc" } }));
 * // { present: true, token: "abc" }
 * ```
 */
export class BearerTransport {
  /**
   * Reads the token from the `Authorization` header.
   *
   * @param req The request.
   * @returns Whether a header was present, and its token if well formed.
   */
  read(req: Request): BearerCredentials {
    const header = req.headers.get("authorization");
    if (header === null) return ABSENT;
    if (header.length > 4096 + 7 || header.charCodeAt(6) !== 32) {
      return INVALID;
    }
    const scheme = header.slice(0, 6);
    if (scheme !== "Bearer" && scheme.toLowerCase() !== "bearer") {
      return INVALID;
    }
    const token = header.slice(7);
    return B64TOKEN.test(token) ? { present: true, token } : INVALID;
  }
}
