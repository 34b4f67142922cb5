/**
 * Flash messages: a signed, short-lived cookie, shown once.
 *
 * @module
 */
import type { PurposeKeys } from "@portcullis/auth/sessions";
import { signToken, verifyToken } from "@portcullis/auth/tokens";
import type { FlashMessage } from "./views/auth/layout.ts";

const PURPOSE = "flash";
const LIFETIME_SECONDS = 60;
const VALUE = /^[A-Za-z0-9._-]{1,1024}$/;

/**
 * Writes and reads the flash cookie. The value is a token signed with the
 * secret's `flash` key (so it never passes as a session), holding the message
 * and an expiry one minute away. Reading it answers the message and the
 * header that clears the cookie, so it is shown once.
 */
export class Flash {
  #keys: Promise<PurposeKeys>;
  #name: string;
  #attrs: string;
  #now: () => number;

  /**
   * Makes the flash cookie codec.
   *
   * @param keys The secret's `flash` keys (`secret.keys("flash")`).
   * @param secure Whether the cookie is `Secure` and `__Host-` prefixed.
   * @param now The clock, in unix milliseconds.
   */
  constructor(keys: Promise<PurposeKeys>, secure: boolean, now: () => number) {
    this.#keys = keys;
    this.#name = secure ? "__Host-flash" : "flash";
    this.#attrs = `; Path=/${secure ? "; Secure" : ""}; HttpOnly; SameSite=Lax`;
    this.#now = now;
  }

  /**
   * The `Set-Cookie` value that carries a message to the next page.
   *
   * @param message The message.
   * @returns The header value.
   */
  async set(message: FlashMessage): Promise<string> {
    const expires = Math.floor(this.#now() / 1000) + LIFETIME_SECONDS;
    const payload = new TextEncoder().encode(
      JSON.stringify({
        k: message.kind,
        m: message.message.slice(0, 300),
        e: expires,
      }),
    );
    const token = await signToken((await this.#keys).current, PURPOSE, payload);
    return `${this.#name}=${token}${this.#attrs}; Max-Age=${LIFETIME_SECONDS}`;
  }

  /**
   * Reads the flash cookie of a request.
   *
   * @param req The request.
   * @returns The message (or `null` when absent, forged or expired) and the
   * `Set-Cookie` that clears it (or `null` when there was no cookie).
   */
  async take(
    req: Request,
  ): Promise<{ flash: FlashMessage | null; clear: string | null }> {
    const value = readCookie(req, this.#name);
    if (value === null) return { flash: null, clear: null };
    const clear = `${this.#name}=${this.#attrs}; Max-Age=0`;
    if (!VALUE.test(value)) return { flash: null, clear };
    const payload = await verifyToken(await this.#keys, PURPOSE, value);
    if (payload === null) return { flash: null, clear };
    try {
      const data = JSON.parse(new TextDecoder().decode(payload));
      if (
        (data.k !== "notice" && data.k !== "alert") ||
        typeof data.m !== "string" || typeof data.e !== "number" ||
        data.e * 1000 <= this.#now()
      ) return { flash: null, clear };
      return { flash: { kind: data.k, message: data.m }, clear };
    } catch {
      return { flash: null, clear };
    }
  }
}

function readCookie(req: Request, name: string): string | null {
  const header = req.headers.get("cookie");
  if (header === null || header.length > 16384) return null;
  for (const part of header.split(";")) {
    const p = part.trim();
    if (p.startsWith(name + "=")) return p.slice(name.length + 1);
  }
  return null;
}
