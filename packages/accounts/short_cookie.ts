/**
 * The short-lived cookies of the sign-in methods (the TOTP pending value,
 * the OpenID Connect state): `HttpOnly`, `SameSite=Lax`, `Path=/`, and
 * `Secure` with the `__Host-` prefix unless the app runs without it.
 *
 * @module
 */

/** Reads one cookie of a request; `null` when absent. */
export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.get("cookie");
  if (header === null || header.length > 16384) return null;
  for (const part of header.split(";")) {
    const p = part.trim();
    if (p.startsWith(name + "=")) return p.slice(name.length + 1);
  }
  return null;
}

/** A named short-lived cookie. */
export class ShortCookie {
  /** The cookie's name, with `__Host-` when secure. */
  readonly name: string;
  #attrs: string;

  /**
   * Names a cookie.
   *
   * @param base The name without prefix, for example `"2fa"`.
   * @param secure Whether the cookie is `Secure` and `__Host-` prefixed.
   */
  constructor(base: string, secure: boolean) {
    this.name = secure ? `__Host-${base}` : base;
    this.#attrs = `; Path=/${secure ? "; Secure" : ""}; HttpOnly; SameSite=Lax`;
  }

  /** The value in the request, or `null`. */
  read(req: Request): string | null {
    return readCookie(req, this.name);
  }

  /** `Set-Cookie` for a value living `maxAge` seconds. */
  set(value: string, maxAge: number): string {
    return `${this.name}=${value}${this.#attrs}; Max-Age=${maxAge}`;
  }

  /** `Set-Cookie` that removes it. */
  clear(): string {
    return `${this.name}=${this.#attrs}; Max-Age=0`;
  }
}
