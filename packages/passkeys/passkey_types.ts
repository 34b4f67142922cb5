/**
 * The passkey ceremonies' public types, and how a library error maps to a
 * refusal.
 *
 * @module
 */

/** Why a ceremony was refused. */
export type PasskeyRefusal =
  | "malformed"
  | "challenge_invalid"
  | "challenge_used"
  | "unknown_credential"
  | "credential_exists"
  | "origin_mismatch"
  | "rp_id_mismatch"
  | "counter_stale"
  | "verification_failed";

/** The outcome of a ceremony. */
export type PasskeyOutcome<T> =
  | ({ kind: "ok" } & T)
  | { kind: "refused"; reason: PasskeyRefusal };

/**
 * Creation options as JSON (WebAuthn's
 * `PublicKeyCredentialCreationOptionsJSON`): pass them unchanged to
 * `startRegistration({ optionsJSON })` in the browser.
 */
export interface CreationOptionsJSON {
  /** The single-use challenge, base64url. */
  readonly challenge: string;
  /** The relying party. */
  readonly rp: { readonly id?: string; readonly name: string };
  /** Everything else WebAuthn defines. */
  readonly [member: string]: unknown;
}

/**
 * Request options as JSON (WebAuthn's
 * `PublicKeyCredentialRequestOptionsJSON`): pass them unchanged to
 * `startAuthentication({ optionsJSON })` in the browser.
 */
export interface RequestOptionsJSON {
  /** The single-use challenge, base64url. */
  readonly challenge: string;
  /** The relying party id. */
  readonly rpId?: string;
  /** Everything else WebAuthn defines. */
  readonly [member: string]: unknown;
}

/** The refusal a library error stands for. */
export function reasonOf(error: unknown): PasskeyRefusal {
  const m = String((error as Error)?.message ?? "");
  if (/counter/i.test(m)) return "counter_stale";
  if (/origin/i.test(m)) return "origin_mismatch";
  if (/RP ID/i.test(m)) return "rp_id_mismatch";
  if (/challenge/i.test(m)) return "challenge_invalid";
  return "verification_failed";
}
