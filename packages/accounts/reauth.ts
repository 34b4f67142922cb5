/**
 * Accounts without a password, and the fresh re-authentication that stands
 * in for the password re-check on sensitive actions (email change, account
 * deletion, turning TOTP off).
 *
 * An account created by OpenID Connect has no password: its stored hash is
 * {@linkcode NO_PASSWORD}, which no hasher accepts. Before a sensitive
 * action such a user re-authenticates on purpose, with their provider
 * (a forced fresh login, `prompt=login`, `max_age=0`) or one of their
 * passkeys. That sets a cookie signed for the `reauth` purpose alone, bound
 * to the user **and to the session it was made in** (its jti), living five
 * minutes. The age of the session itself plays no part: a stolen session
 * cookie, however fresh, never passes the re-check, and the proof is worth
 * nothing beside any other session.
 *
 * @module
 */
import { currentIdentity } from "@portcullis/auth";
import { ShortCookie } from "./short_cookie.ts";

/** The stored hash of an account without a password; no hasher accepts it. */
export const NO_PASSWORD = "!oidc-only";

/** How long a re-authentication counts, in seconds. */
export const REAUTH_SECONDS = 300;

/**
 * Whether a user can give a password (their hash is a real one).
 *
 * @param user The stored user.
 * @returns `false` for an account without a password.
 */
export function hasPassword(user: { passwordHash: string }): boolean {
  // Real hashes are PHC strings (`$pbkdf2-sha256$…`) or bcrypt's `$2b$…`;
  // a leading "!" marks "no password", as a locked entry in /etc/shadow.
  return !user.passwordHash.startsWith("!");
}

/** Signs and verifies values of one purpose (`purposeSigner`). */
export interface ReauthSigner {
  /** Signs bytes. */
  sign(payload: Uint8Array): Promise<string>;
  /** The signed bytes, or `null` when forged or malformed. */
  verify(value: string): Promise<Uint8Array | null>;
}

/** Grants and checks the re-authentication cookie. */
export class Reauth {
  #signer: ReauthSigner;
  #cookie: ShortCookie;
  #now: () => number;

  /**
   * Makes the re-authentication's cookie.
   *
   * @param signer Signs for the `reauth` purpose alone.
   * @param secure Whether the cookie is `Secure` and `__Host-` prefixed.
   * @param now The clock, in unix milliseconds.
   */
  constructor(signer: ReauthSigner, secure: boolean, now: () => number) {
    this.#signer = signer;
    this.#cookie = new ShortCookie("reauth", secure);
    this.#now = now;
  }

  /**
   * The `Set-Cookie` that records a re-authentication of the request's
   * session (call it only after the user proved it was them just now).
   *
   * @param req A signed-in request.
   * @param method How they proved it (`oidc`, `passkey`).
   * @returns The cookie, or `null` when the request has no session.
   */
  async grant(req: Request, method: string): Promise<string | null> {
    const identity = currentIdentity(req);
    if (identity === null) return null;
    const value = await this.#signer.sign(new TextEncoder().encode(
      JSON.stringify({
        s: identity.subject,
        j: identity.jti,
        m: method,
        e: Math.floor(this.#now() / 1000) + REAUTH_SECONDS,
      }),
    ));
    return this.#cookie.set(value, REAUTH_SECONDS);
  }

  /**
   * Whether the request carries a re-authentication of its own session
   * (same user, same jti) that has not expired.
   *
   * @param req A request after `identityMiddleware`.
   * @returns `true` when it does.
   */
  async isFresh(req: Request): Promise<boolean> {
    const identity = currentIdentity(req);
    const value = this.#cookie.read(req);
    if (identity === null || value === null || value.length > 1024) {
      return false;
    }
    const payload = await this.#signer.verify(value);
    if (payload === null) return false;
    try {
      const d = JSON.parse(new TextDecoder().decode(payload));
      return d.s === identity.subject && d.j === identity.jti &&
        typeof d.e === "number" && d.e * 1000 > this.#now();
    } catch {
      return false;
    }
  }

  /** The `Set-Cookie` that removes it. */
  clear(): string {
    return this.#cookie.clear();
  }
}
