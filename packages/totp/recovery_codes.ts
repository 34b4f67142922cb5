/**
 * Recovery codes: ten random codes of 50 bits each, shown once, stored as
 * SHA-256 (enough for random values of that size: there is no dictionary to
 * try), typed as `XXXXX-XXXXX` in any case, with or without the dash.
 *
 * @module
 */

/** How many codes a user gets. */
export const RECOVERY_CODE_COUNT = 10;

// Crockford's base32 alphabet: no I, L, O, U.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** Makes `count` codes of the form `XXXXX-XXXXX`. */
export function newRecoveryCodes(count: number): string[] {
  const codes: string[] = [];
  for (let i = 0; i < count; i++) {
    const bytes = crypto.getRandomValues(new Uint8Array(10));
    let s = "";
    for (const b of bytes) s += ALPHABET[b & 31];
    codes.push(`${s.slice(0, 5)}-${s.slice(5)}`);
  }
  return codes;
}

/**
 * The canonical form of a typed code (upper case, no dash, Crockford's
 * look-alikes mapped), or `null` when it cannot be one.
 */
export function normalizeRecoveryCode(typed: string): string | null {
  const s = typed.toUpperCase().replace(/-/g, "").replace(/[IL]/g, "1")
    .replace(/O/g, "0");
  return /^[0-9A-HJKMNP-TV-Z]{10}$/.test(s) ? s : null;
}
