/**
 * Carries session tokens in a cookie, for browsers.
 *
 * @module
 */

/** Options of {@linkcode CookieTransport}. */
export interface CookieTransportOptions {
  /**
   * The cookie name without prefix; default `"session"`. With `secure` (the
   * default) the cookie is `__Host-<name>`.
   */
  name?: string;
  /**
   * `false` drops `Secure` and the `__Host-` prefix, for plain-HTTP
   * development only. It costs the cookie's protection against network
   * attackers and sibling subdomains, so it is logged once as a warning.
   */
  secure?: boolean;
  /** `"Lax"` (default) or `"Strict"`. `"None"` is not offered. */
  sameSite?: "Lax" | "Strict";
  /** Where the warning for `secure: false` goes; default `console.warn`. */
  warn?: (message: string) => void;
}

// RFC 6265 token characters for names; tokens are base64url and dots.
const NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/;
// A value: 1 to 4096 of these. The bound is checked on the length: a
// bounded repetition ({1,4096}) made V8's matcher the largest single cost of
// reading the cookie on every request.
const VALUE = /^[A-Za-z0-9._-]+$/;
const MAX_VALUE = 4096;

/**
 * Reads and writes the session cookie:
 * `__Host-session=<token>; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=<n>`.
 * A cookie header that is malformed, oversized, holds the name twice or a
 * value outside the token alphabet yields no token, never an exception.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { CookieTransport } from "@portcullis/auth";
 * const cookies = new CookieTransport();
 * const req = new Request("https://example.com/", { headers: { cookie: "__Host-session=abc" } });
 * assert.equal(cookies.read(req), "abc");
 * assert.equal(cookies.serialize("abc", 3600), "__Host-session=abc; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=3600");
 * ```
 */
export class CookieTransport {
  /** The full cookie name, prefix included. */
  readonly name: string;
  /** Whether the cookie is `Secure` (and `__Host-` prefixed). */
  readonly secure: boolean;
  #attrs: string;
  #prefix: string;

  /**
   * Checks the cookie settings once.
   *
   * @param options See {@linkcode CookieTransportOptions}.
   * @throws {TypeError} For a name outside RFC 6265's token characters.
   */
  constructor(options: CookieTransportOptions = {}) {
    const base = options.name ?? "session";
    if (!NAME.test(base) || base.startsWith("__")) {
      throw new TypeError(
        `Cookie name must be an RFC 6265 token without a "__" prefix: received "${base}"`,
      );
    }
    const sameSite = options.sameSite ?? "Lax";
    if (sameSite !== "Lax" && sameSite !== "Strict") {
      throw new TypeError(
        `sameSite must be "Lax" or "Strict": received "${sameSite}"`,
      );
    }
    this.secure = options.secure ?? true;
    this.name = this.secure ? `__Host-${base}` : base;
    this.#prefix = `${this.name}=`;
    this.#attrs = `; Path=/${
      this.secure ? "; Secure" : ""
    }; HttpOnly; SameSite=${sameSite}`;
    if (!this.secure) {
      (options.warn ?? console.warn)(
        `portcullis: cookie "${this.name}" is sent without Secure (secure: false); use this for local HTTP development only`,
      );
    }
  }

  /**
   * Reads the token from the request's `Cookie` header.
   *
   * @param req The request.
   * @returns The token, or `null` when absent or malformed.
   */
  read(req: Request): string | null {
    const value = cookieValue(req, this.#prefix);
    return value !== null && isTokenValue(value) ? value : null;
  }

  /**
   * The `Set-Cookie` value that stores a token.
   *
   * @param token The token (base64url and dots only).
   * @param maxAgeSeconds The cookie's life: the token's remaining life.
   * @returns The header value.
   * @throws {TypeError} For a value outside the token alphabet.
   */
  serialize(token: string, maxAgeSeconds: number): string {
    if (
      token.length > MAX_VALUE || !VALUE.test(token) ||
      this.name.length + 1 + token.length > 4096
    ) {
      throw new TypeError("Cookie value must be a token of at most 4096 bytes");
    }
    const age = Math.max(0, Math.floor(maxAgeSeconds));
    return `${this.name}=${token}${this.#attrs}; Max-Age=${age}`;
  }

  /**
   * The `Set-Cookie` value that removes the cookie (same name, path and
   * attributes, `Max-Age=0`).
   *
   * @returns The header value.
   */
  clear(): string {
    return `${this.name}=${this.#attrs}; Max-Age=0`;
  }
}

/**
 * The value of the cookie `prefix` names (`"<name>="`), with the rules of
 * {@linkcode CookieTransport.read} but one: its alphabet is not checked yet.
 * `null` when absent, present twice, or longer than a token may be.
 *
 * Not exported by any entry point: `identityMiddleware` looks the value up
 * among the tokens it verified before (which all passed the alphabet) and
 * checks the alphabet only of a value it does not know, so that a warm
 * request runs no regular expression over its token.
 *
 * @param req The request.
 * @param prefix The cookie's name and `=`.
 * @returns The value, alphabet unchecked, or `null`.
 */
export function cookieValue(req: Request, prefix: string): string | null {
  const header = req.headers.get("cookie");
  if (header === null || header.length > 16384) return null;
  // One pass with indexOf (this runs on every browser request): find
  // `<name>=` at the start of a cookie-pair, and refuse a second one.
  let found: string | null = null;
  let at = header.indexOf(prefix);
  while (at !== -1) {
    if (atPairStart(header, at)) {
      if (found !== null) return null; // the name twice: take neither
      const start = at + prefix.length;
      const end = header.indexOf(";", start);
      // Spaces before the next `;` end the pair; a value that starts with a
      // space is malformed and fails the alphabet check.
      found = (end === -1 ? header.slice(start) : header.slice(start, end))
        .trimEnd();
    }
    at = header.indexOf(prefix, at + 1);
  }
  return found !== null && found.length <= MAX_VALUE ? found : null;
}

/**
 * Whether a value {@linkcode cookieValue} found is in the token alphabet
 * (not exported by any entry point).
 *
 * @param value The value.
 * @returns `true` when every character is a letter, digit, `.`, `_` or `-`.
 */
export function isTokenValue(value: string): boolean {
  return VALUE.test(value);
}

/** Whether `at` begins a cookie-pair: the header's start, or after `;` and spaces. */
function atPairStart(header: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && (header[i] === " " || header[i] === "\t")) i--;
  return i < 0 || header[i] === ";";
}
