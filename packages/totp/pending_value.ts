/**
 * The "second factor pending" value: who gave the right password, where to
 * go next, until when, and a fingerprint of the account's credentials as
 * they were then; signed for its own purpose, so it is no session.
 *
 * @module
 */
import { encodeBase64Url } from "@portcullis/bytes";
import type { PurposeSigner } from "./signed_values.ts";

/** What a pending value carries once verified. */
export interface PendingSecondFactor {
  /** The user who gave the right password. */
  subject: string;
  /** Where to go after the second factor (a local path the app checked). */
  next: string;
  /**
   * A fingerprint of the credentials the value is bound to (the TOTP
   * enrolment, its last used time step, the count of recovery codes left,
   * and the application's account state such as the password hash). It changes after every successful
   * second step, a password change or reset, and a new enrolment, and
   * never otherwise: a key for counting one account's consecutive failures
   * that only those events start afresh. Opaque; not secret.
   */
  fingerprint: string;
  /**
   * What the first step tied the value to (the thumbprint of the client's
   * DPoP key), or `null`: the value opens only for a second step that
   * presents the same.
   */
  boundTo: string | null;
}

/** Signs a pending value (`expires` in unix seconds). */
export function signPending(
  signer: PurposeSigner,
  input: {
    subject: string;
    next: string;
    expires: number;
    fingerprint: string;
    boundTo: string | null;
  },
): Promise<string> {
  return signer.sign(
    new TextEncoder().encode(
      JSON.stringify({
        s: input.subject,
        n: input.next,
        e: input.expires,
        f: input.fingerprint,
        ...(input.boundTo === null ? {} : { k: input.boundTo }),
      }),
    ),
  );
}

/**
 * Reads a pending value; `null` when forged, malformed or expired at `now`
 * (unix milliseconds). The fingerprint is the one it was signed with: the
 * caller compares it with the credentials' current one.
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
      typeof data.e !== "number" || data.e * 1000 <= now ||
      typeof data.f !== "string" || data.f === "" ||
      (data.k !== undefined && (typeof data.k !== "string" || data.k === ""))
    ) return null;
    return {
      subject: data.s,
      next: data.n,
      fingerprint: data.f,
      boundTo: data.k ?? null,
    };
  } catch {
    return null;
  }
}

/**
 * The fingerprint of a user's credentials: SHA-256 over the sealed TOTP
 * secret, the enrolment time, the last accepted time step, the count of
 * recovery codes left and the application's account state, 128 bits as
 * base64url. The sealed secret (random nonce and ciphertext) makes it
 * unguessable from outside, so it reveals nothing of the account state
 * folded in.
 */
export async function credentialFingerprint(
  record: { secret: string; enabledAt: number; lastStep: number },
  recoveryCodesLeft: number,
  accountState: string,
): Promise<string> {
  const text = JSON.stringify([
    "portcullis/totp-pending/v2",
    record.secret,
    record.enabledAt,
    record.lastStep,
    recoveryCodesLeft,
    accountState,
  ]);
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return encodeBase64Url(new Uint8Array(digest, 0, 16));
}
