/**
 * The payload a session token carries, `subject|jti|expiry`, and the jti
 * format: 6 bytes of issue time (unix milliseconds, big-endian) then 16
 * random bytes, base64url. Strict in both directions: whatever
 * {@linkcode parseSessionPayload} accepts, {@linkcode encodeSessionPayload}
 * would have produced.
 *
 * @module
 */
import { decodeBase64Url, encodeBase64Url } from "../_common/base64url.ts";
import { AuthError } from "../auth_error.ts";
import { hasForbiddenSubjectChar, subjectProblem } from "../_common/subject.ts";

/** What a verified, unexpired, unrevoked session token proves. */
export interface Identity {
  /** The subject id the token was issued to. */
  readonly subject: string;
  /** The session id: 6 bytes of issue time and 16 random bytes, base64url. */
  readonly jti: string;
  /** When the session began, in unix milliseconds (from the jti). */
  readonly issuedAt: number;
  /** When this token expires, in unix seconds. */
  readonly expiresAt: number;
}

/** A freshly minted token with the identity it carries. */
export interface IssuedSession {
  /** The opaque token: a cookie value or a Bearer credential. */
  readonly token: string;
  /** What `SessionManager.resolve` will answer for it. */
  readonly identity: Identity;
}

/**
 * Mints a token and answers the identity it carries. Not public API: the
 * HTTP glue (`signIn`) needs the expiry for the cookie and the JSON answer;
 * applications call `issue()` or `signIn()`.
 */
export const ISSUE_SESSION: unique symbol = Symbol("portcullis.issueSession");

const JTI_SHAPE = /^[A-Za-z0-9_-]{30}$/;
const EXPIRY_SHAPE = /^[1-9][0-9]{0,15}$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The bytes a token for this identity signs. */
export function encodeSessionPayload(identity: Identity): Uint8Array {
  return encoder.encode(
    `${identity.subject}|${identity.jti}|${identity.expiresAt}`,
  );
}

/**
 * A new jti for a session that begins at `issuedAtMs`.
 *
 * @param issuedAtMs The issue time, unix milliseconds.
 * @param random At least 16 random bytes (the first 16 are used).
 */
export function newJti(issuedAtMs: number, random: Uint8Array): string {
  if (random.length < 16) {
    throw new RangeError("randomBytes must return the length asked for");
  }
  const bytes = new Uint8Array(22);
  let t = issuedAtMs;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes.set(random.subarray(0, 16), 6);
  return encodeBase64Url(bytes);
}

/** The string of an all-ASCII byte array, or `null` when a byte is not ASCII. */
function asciiText(bytes: Uint8Array): string | null {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] > 0x7f) return null;
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/**
 * Parses `subject|jti|expiry` strictly.
 *
 * @param payload The bytes a verified MAC covered.
 * @returns The identity, or `null` for anything not of that exact form.
 */
export function parseSessionPayload(payload: Uint8Array): Identity | null {
  let text = asciiText(payload);
  if (text === null) {
    try {
      text = decoder.decode(payload);
    } catch {
      return null;
    }
  }
  const a = text.indexOf("|");
  const b = text.indexOf("|", a + 1);
  if (a <= 0 || b < 0 || text.indexOf("|", b + 1) !== -1) return null;
  const subject = text.slice(0, a);
  const jti = text.slice(a + 1, b);
  const expiry = text.slice(b + 1);
  if (
    hasForbiddenSubjectChar(subject) || !JTI_SHAPE.test(jti) ||
    !EXPIRY_SHAPE.test(expiry)
  ) {
    return null;
  }
  const expiresAt = Number(expiry);
  if (!Number.isSafeInteger(expiresAt)) return null;
  // The jti's shape was checked above; its first 8 characters carry the
  // issue time.
  const head = decodeBase64Url(jti.slice(0, 8));
  if (head === null) return null;
  let issuedAt = 0;
  for (let i = 0; i < 6; i++) issuedAt = issuedAt * 256 + head[i];
  return Object.freeze({ subject, jti, issuedAt, expiresAt });
}

const SUBJECT_MESSAGES = {
  subjectEmpty: "Subject must be a non-empty string",
  subjectForbiddenCharacter:
    "Subject must not contain '|' or control characters",
  subjectTooLong: "Subject must be at most 255 bytes",
} as const;

/**
 * Refuses a subject a token cannot carry.
 *
 * @throws {AuthError} `INVALID_SUBJECT`, with the problem as its reason.
 */
export function checkSubject(subject: string): void {
  const problem = subjectProblem(subject);
  if (problem !== null) {
    throw new AuthError("INVALID_SUBJECT", SUBJECT_MESSAGES[problem], {
      reason: problem,
    });
  }
}
