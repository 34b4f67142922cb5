/**
 * The rule for a passkey's name (the label its owner gives it at
 * registration or rename), private to the package.
 *
 * The same characters are refused as in an API key's name
 * (`@portcullis/accounts`' `api_keys/routes.ts`): a copy, kept in step by
 * hand, because the one shared home that both packages reach is the
 * accounts plugin entry, which this change does not touch.
 *
 * @module
 */

/** The longest name, in UTF-16 code units (the account page's `maxlength`). */
export const MAX_PASSKEY_NAME: number = 64;

/** The name given when none is: empty or only spaces. */
export const DEFAULT_PASSKEY_NAME: string = "Passkey";

// Control characters, and the invisible and direction-changing ones a list
// could be spoofed with (zero-width, bidirectional marks, embeddings,
// overrides and isolates, word joiner and invisible operators, the
// byte-order mark).
const REFUSED =
  // deno-lint-ignore no-control-regex -- control characters are what it finds
  /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

/**
 * A passkey's name as it is stored: trimmed, the default when empty; or
 * `null` when it is refused (longer than {@linkcode MAX_PASSKEY_NAME}, or
 * holding a control, invisible or direction-changing character).
 *
 * @param raw The name as given.
 * @returns The name to store, or `null`.
 */
export function passkeyName(raw: string): string | null {
  const name = raw.trim();
  if (name === "") return DEFAULT_PASSKEY_NAME;
  if (name.length > MAX_PASSKEY_NAME || REFUSED.test(name)) return null;
  return name;
}

/** What a refused name is told. */
export const PASSKEY_NAME_MESSAGE: string =
  `A passkey's name has at most ${MAX_PASSKEY_NAME} characters, none of them invisible or changing the text's direction`;
