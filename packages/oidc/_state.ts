/**
 * The browser-bound state value of one sign-in, private to this package:
 * `state`, `nonce`, the PKCE verifier, where to go next, whether it is a
 * re-authentication, and its expiry, signed into one cookie-safe string.
 *
 * @module
 */
import type { PurposeSigner } from "./signed_values.ts";

/** What a state value carries. */
export interface SavedState {
  /** The `state` parameter. */
  state: string;
  /** The `nonce` the ID token must carry. */
  nonce: string;
  /** The PKCE code verifier. */
  verifier: string;
  /** Where to go afterwards. */
  next: string;
  /** Whether the provider was asked for a fresh login (`max_age=0`). */
  reauthenticate: boolean;
}

/** Signs a state value for provider `provider`, valid until `expires` (unix s). */
export function signState(
  signer: PurposeSigner,
  provider: string,
  saved: SavedState,
  expires: number,
): Promise<string> {
  return signer.sign(
    new TextEncoder().encode(JSON.stringify({
      p: provider,
      s: saved.state,
      n: saved.nonce,
      v: saved.verifier,
      x: saved.next,
      r: saved.reauthenticate ? 1 : 0,
      e: expires,
    })),
  );
}

/**
 * Reads a state value; `null` when forged, malformed, of another provider
 * or expired at `now` (unix ms).
 */
export async function readState(
  signer: PurposeSigner,
  provider: string,
  value: string,
  now: number,
): Promise<SavedState | null> {
  if (value.length > 2048) return null;
  const payload = await signer.verify(value);
  if (payload === null) return null;
  try {
    const d = JSON.parse(new TextDecoder().decode(payload));
    if (
      d.p !== provider || typeof d.s !== "string" ||
      typeof d.n !== "string" || typeof d.v !== "string" ||
      typeof d.x !== "string" || typeof d.e !== "number" ||
      d.e * 1000 <= now
    ) return null;
    return {
      state: d.s,
      nonce: d.n,
      verifier: d.v,
      next: d.x,
      reauthenticate: d.r === 1,
    };
  } catch {
    return null;
  }
}
