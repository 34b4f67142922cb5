/**
 * A breached-or-common password check for registration and password change
 * (NIST SP 800-63B's blocklist, OWASP ASVS 6.2.4), over the password list
 * of `@zxcvbn-ts/language-common` (about 49,000 common passwords, drawn from
 * breach corpora and kept with zxcvbn-ts). On its own subpath so that the
 * core loads no list.
 *
 * @module
 */
import { dictionary } from "@zxcvbn-ts/language-common";

/** Options of {@linkcode commonPasswordCheck}. */
export interface CommonPasswordCheckOptions {
  /**
   * Only the first `top` entries of the list (it is ranked, most common
   * first); default all of them. NIST asks for at least the most common
   * passwords; OWASP ASVS 6.2.4 for at least 3000.
   */
  top?: number;
  /** Extra words to refuse: the app's name, its domain, … */
  extra?: readonly string[];
}

/**
 * Makes an `isCompromised` check for {@linkcode PasswordAuthenticator}: a
 * password is refused when, NFKC-normalised and lower-cased, it is on the
 * list. The password itself is still hashed exactly as typed; the list only
 * decides whether it may be chosen. Logins are not checked.
 *
 * @param options How much of the list, and extra words.
 * @returns `(password) => boolean`, `true` for a common password.
 * @throws {RangeError} When `top` is not a positive whole number.
 *
 * @example Usage
 * ```ts
 * import { commonPasswordCheck } from "@portcullis/common-passwords";
 * const isCommon = commonPasswordCheck();
 * isCommon("Password1"); // true
 * isCommon("a long and unusual passphrase"); // false
 * ```
 */
export function commonPasswordCheck(
  options: CommonPasswordCheckOptions = {},
): (password: string) => boolean {
  const list = (dictionary as Record<string, unknown>)["passwords-common"];
  if (!Array.isArray(list) || list.length < 3000) {
    throw new TypeError(
      "The common-password list could not be loaded from @zxcvbn-ts/language-common",
    );
  }
  const top = options.top ?? list.length;
  if (!Number.isSafeInteger(top) || top <= 0) {
    throw new RangeError(
      `top must be a positive whole number: received ${top}`,
    );
  }
  const words = new Set<string>();
  for (const word of list.slice(0, top)) words.add(fold(String(word)));
  for (const word of options.extra ?? []) words.add(fold(word));
  return (password: string) => words.has(fold(password));
}

function fold(text: string): string {
  return text.normalize("NFKC").toLowerCase();
}
