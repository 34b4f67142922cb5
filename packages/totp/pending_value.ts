/**
 * The "second factor pending" value: who gave the right password, where to
 * go next, and until when; signed for its own purpose, so it is no session.
 *
 * @module
 */
import type { PurposeSigner } from "./signed_values.ts";

/** What a pending value carries once verified. */
export interface PendingSecondFactor {
  /** The user who gave the right password. */
  subject: string;
  /** Where to go after the second factor (a local path the app checked). */
  next: string;
}

/** Signs a pending value (`expires` in unix seconds). */
export function signPending(
  signer: PurposeSigner,
  input: { subject: string; next: string; expires: number },
): Promise<string> {
  return signer.sign(
    new TextEncoder().encode(
      JSON.stringify({ s: input.subject, n: input.next, e: input.expires }),
    ),
  );
}

/**
 * Reads a pending value; `null` when forged, malformed or expired at `now`
 * (unix milliseconds).
 */
export async function openPending(
  signer: PurposeSigner,
  value: string,
  now: number,
): Promise<PendingSecondFactor | null> {
  if (typeof value !== "string" || value.length === 0 || value.length > 2048) {
    return null;
  }
  const payload = await signer.verify(value);
  if (payload === null) return null;
  try {
    const data = JSON.parse(new TextDecoder().decode(payload));
    if (
      typeof data.s !== "string" || typeof data.n !== "string" ||
      typeof data.e !== "number" || data.e * 1000 <= now
    ) return null;
    return { subject: data.s, next: data.n };
  } catch {
    return null;
  }
}
