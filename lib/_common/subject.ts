// The one rule for subject ids, shared by the session layer (which refuses
// to mint a token for a bad subject) and the authentication layer (which
// refuses to create a user whose id could never sign in).

/** The longest subject id, in UTF-8 bytes. */
export const MAX_SUBJECT_BYTES = 255;

// No "|" (the token's field separator) and no C0, DEL or C1 control
// characters.
// deno-lint-ignore no-control-regex
const BAD_SUBJECT_CHAR = /[|\u0000-\u001f\u007f-\u009f]/;
const encoder = new TextEncoder();

/** Why a subject id is refused, or `null` when it is acceptable. */
export type SubjectProblem =
  | "subjectEmpty"
  | "subjectForbiddenCharacter"
  | "subjectTooLong";

/**
 * Checks a subject id: a non-empty string of at most 255 UTF-8 bytes
 * without `|` or control characters.
 *
 * @returns `null` when the subject is acceptable, else the problem.
 */
export function subjectProblem(subject: unknown): SubjectProblem | null {
  if (typeof subject !== "string" || subject === "") return "subjectEmpty";
  if (BAD_SUBJECT_CHAR.test(subject)) return "subjectForbiddenCharacter";
  // Only a long string can exceed the byte bound (at most 3 bytes per
  // UTF-16 unit), so short ones skip the encoding.
  if (
    subject.length * 3 > MAX_SUBJECT_BYTES &&
    encoder.encode(subject).length > MAX_SUBJECT_BYTES
  ) {
    return "subjectTooLong";
  }
  return null;
}

/** Whether a subject parsed from a verified token has an acceptable shape. */
export function hasForbiddenSubjectChar(subject: string): boolean {
  return BAD_SUBJECT_CHAR.test(subject);
}
