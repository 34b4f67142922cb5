// DPoP server nonces (RFC 9449 §8, §9), stateless: a nonce is the signed
// length and number of a time window, `v1.<kid>.<base64url(payload)>.<tag>`
// in the signed-token wire form, under a key derived from the application
// secret for the `dpop.nonce` purpose alone (`signToken` refuses `dpop.*`).
// The length is signed with the number so that a window of one lifetime is
// never taken for another lifetime's window of the same number, which could
// lie days ahead. Every instance built from the same secret issues the same
// nonce for a window and accepts the others'; nothing is stored. A nonce is
// accepted in its own window and the next one, so it lives between one and
// two `lifetimeSeconds`.
//
// What a nonce shows: the key id (eight characters derived from the secret,
// not secret, as in every signed token), the lifetime and the window's
// number (the time divided by the lifetime). The MAC reveals nothing of its
// key.
import type {
  PurposeKeys,
  SecretProvider,
} from "../secrets/secret_provider.ts";
import { signToken, verifyToken } from "../tokens/signed_token.ts";

/** The purpose label of DPoP nonces (the HKDF info and the MAC's prefix). */
export const DPOP_NONCE_PURPOSE = "dpop.nonce";

/** Where a presented nonce belongs: its window is the current or the last one. */
export type NonceAge = "current" | "previous";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** `<lifetime in seconds>:<window number>`, both decimal. */
const PAYLOAD = /^([0-9]{1,4}):([0-9]{1,15})$/;
/** The longest nonce looked at; real ones are about 70 characters. */
const MAX_NONCE_LENGTH = 256;

/** Issues and checks the nonces of one DPoP verifier. */
export class DpopNonces {
  #keys: Promise<PurposeKeys>;
  #lifetime: number;
  #windowMs: number;
  #now: () => number;
  #issued: { window: number; nonce: Promise<string> } | null = null;

  /**
   * @param secret The application secret; the `dpop.nonce` keys are derived
   * from it (and from previous secrets, which keep verifying).
   * @param lifetimeSeconds The length of a window, a whole number of
   * seconds.
   * @param now The clock, in unix milliseconds.
   */
  constructor(
    secret: SecretProvider,
    lifetimeSeconds: number,
    now: () => number,
  ) {
    this.#keys = secret.keys(DPOP_NONCE_PURPOSE);
    // An unhandled rejection here would surface later, on first use.
    this.#keys.catch(() => {});
    this.#lifetime = lifetimeSeconds;
    this.#windowMs = lifetimeSeconds * 1000;
    this.#now = now;
  }

  /**
   * The nonce of the current window (the same on every instance sharing
   * the secret), signed once per window.
   *
   * @returns The nonce.
   */
  issue(): Promise<string> {
    const window = this.#window();
    const issued = this.#issued;
    if (issued !== null && issued.window === window) return issued.nonce;
    const nonce = this.#keys.then((keys) =>
      signToken(
        keys.current,
        DPOP_NONCE_PURPOSE,
        encoder.encode(`${this.#lifetime}:${window}`),
      )
    );
    // A failure is not kept: the next call signs again.
    this.#issued = { window, nonce };
    nonce.catch(() => {
      if (this.#issued?.nonce === nonce) this.#issued = null;
    });
    return nonce;
  }

  /**
   * Checks a proof's `nonce` claim: the MAC under the `dpop.nonce` keys
   * (constant time), then the lifetime and the window.
   *
   * @param value The claim, of any type.
   * @returns `"current"` or `"previous"` for a nonce of this window or the
   * last one; `null` for anything else (absent, forged, of another purpose,
   * secret or lifetime, older).
   */
  async check(value: unknown): Promise<NonceAge | null> {
    if (typeof value !== "string" || value.length > MAX_NONCE_LENGTH) {
      return null;
    }
    const payload = await verifyToken(
      await this.#keys,
      DPOP_NONCE_PURPOSE,
      value,
    );
    if (payload === null) return null;
    const parts = PAYLOAD.exec(decoder.decode(payload));
    if (parts === null || Number(parts[1]) !== this.#lifetime) return null;
    const window = Number(parts[2]);
    const current = this.#window();
    return window === current
      ? "current"
      : window === current - 1
      ? "previous"
      : null;
  }

  #window(): number {
    return Math.floor(this.#now() / this.#windowMs);
  }
}
