/**
 * The payload a session token carries, `subject|jti|expiry`, or
 * `subject|jti|expiry|actor` for a session an operator holds on the
 * subject's behalf (impersonation: the actor is RFC 8693's `act`), and the
 * jti format: 6 bytes of issue time (unix milliseconds, big-endian) then 16
 * random bytes, base64url. Strict in both directions: whatever
 * {@linkcode parseSessionPayload} accepts, {@linkcode encodeSessionPayload}
 * would have produced.
 *
 * @module
 */
import { base64UrlSextet, encodeBase64Url } from "../_common/base64url.ts";
import { AuthError } from "../auth_error.ts";
import {
  hasForbiddenSubjectChar,
  MAX_SUBJECT_BYTES,
  subjectProblem,
} from "../_common/subject.ts";

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
  /**
   * What the session is bound to: `"device"` (a device-bound browser
   * session, DBSC), `"dpop"` (a DPoP-bound token), or absent for an
   * ordinary session.
   */
  readonly binding?: "device" | "dpop";
  /**
   * Who holds this session on the subject's behalf: an operator's subject
   * id (impersonation; RFC 8693's `act` claim). Absent when the subject is
   * acting for itself. A session with an actor is never bound to a key,
   * never renewed past its end, and a sign-in that re-mints it keeps it.
   */
  readonly actor?: string;
  /**
   * Set when the request was authenticated by an API key (a personal
   * access token) rather than a session: the key's id and the policy
   * actions it may perform. `jti` is then the key's id, `issuedAt` its
   * creation and `expiresAt` its expiry. A policy gate refuses every action
   * outside `scopes`, whatever the policy says.
   */
  readonly apiKey?: {
    /** The key's public identifier. */
    readonly id: string;
    /** The policy actions the key may perform; nothing else. */
    readonly scopes: readonly string[];
  };
}

/** A freshly minted token with the identity it carries. */
export interface IssuedSession {
  /** The opaque token: a cookie value or a Bearer credential. */
  readonly token: string;
  /** What `SessionManager.resolve` will answer for it. */
  readonly identity: Identity;
}

const encoder = new TextEncoder();
// ignoreBOM: a subject that begins with U+FEFF keeps it (a decoder that
// stripped it would turn "\uFEFFadmin" into "admin").
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The bytes a token for this identity signs. */
export function encodeSessionPayload(identity: Identity): Uint8Array {
  const base = `${identity.subject}|${identity.jti}|${identity.expiresAt}`;
  return encoder.encode(
    identity.actor === undefined ? base : `${base}|${identity.actor}`,
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

/**
 * The bytes as a binary string (one character per byte). Through plain
 * arrays: applying `String.fromCharCode` to a typed subarray costs three
 * times as much.
 */
function binaryString(bytes: Uint8Array): string {
  let out = "";
  for (let at = 0; at < bytes.length; at += 1024) {
    const end = Math.min(bytes.length, at + 1024);
    const codes = new Array<number>(end - at);
    for (let i = at; i < end; i++) codes[i - at] = bytes[i];
    out += String.fromCharCode.apply(null, codes);
  }
  return out;
}

/** The UTF-8 text of the binary string's `[start, end)`, or `null`. */
function utf8(binary: string, start: number, end: number): string | null {
  const bytes = new Uint8Array(end - start);
  for (let i = start; i < end; i++) bytes[i - start] = binary.charCodeAt(i);
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

const PIPE = 0x7c;
const ZERO = 0x30;

/**
 * Parses `subject|jti|expiry` (or `subject|jti|expiry|actor`) strictly, in
 * one pass over the bytes: the subject (and the actor) without `|` or
 * control characters (UTF-8), a jti of exactly 30 base64url characters in
 * canonical form, an expiry of 1 to 16 digits without a leading zero.
 *
 * @param payload The bytes a verified MAC covered.
 * @returns The identity, or `null` for anything not of that exact form.
 */
export function parseSessionPayload(payload: Uint8Array): Identity | null {
  return parseSessionPayloadText(binaryString(payload));
}

/**
 * {@linkcode parseSessionPayload} of the same bytes given as a binary string
 * (one character per byte, as `atob` answers): the one parser, whose ASCII
 * fields are then slices of the string. A character above 255 is no byte,
 * and refused.
 *
 * @param payload The payload a verified MAC covered, one character a byte.
 * @returns The identity, or `null` for anything not of that exact form.
 */
export function parseSessionPayloadText(payload: string): Identity | null {
  const n = payload.length;
  let a = -1;
  let b = -1;
  let c3 = -1;
  let ascii = true;
  for (let i = 0; i < n; i++) {
    const c = payload.charCodeAt(i);
    if (c === PIPE) {
      if (a < 0) a = i;
      else if (b < 0) b = i;
      else if (c3 < 0) c3 = i;
      else return null;
    } else if (c > 0x7f) {
      if (c > 0xff) return null;
      ascii = false;
    }
  }
  // A non-empty subject, a jti of 30 characters, 1 to 16 digits, and a
  // non-empty actor when there is a fourth field.
  const end = c3 < 0 ? n : c3;
  const digits = end - b - 1;
  if (a <= 0 || b - a - 1 !== 30 || digits < 1 || digits > 16) return null;
  if (c3 >= 0 && (c3 === n - 1 || n - c3 - 1 > MAX_SUBJECT_BYTES)) return null;
  if (payload.charCodeAt(b + 1) === ZERO) return null;
  let expiresAt = 0;
  for (let i = b + 1; i < end; i++) {
    const d = payload.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return null;
    expiresAt = expiresAt * 10 + d;
  }
  if (!Number.isSafeInteger(expiresAt)) return null;
  // The jti: 22 bytes as 30 characters; the last carries 2 bits of data, so
  // its low 4 bits are 0 in the one canonical form. Its first 8 characters
  // are the 6 bytes of the issue time.
  let issuedAt = 0;
  for (let i = a + 1, k = 0; i < b; i++, k++) {
    const v = base64UrlSextet(payload.charCodeAt(i));
    if (v < 0) return null;
    if (k < 8) issuedAt = issuedAt * 64 + v;
  }
  if ((base64UrlSextet(payload.charCodeAt(b - 1)) & 15) !== 0) return null;
  const jti = payload.slice(a + 1, b);
  const subject = ascii ? payload.slice(0, a) : utf8(payload, 0, a);
  if (subject === null || hasForbiddenSubjectChar(subject)) return null;
  if (c3 < 0) return Object.freeze({ subject, jti, issuedAt, expiresAt });
  const actor = ascii ? payload.slice(c3 + 1) : utf8(payload, c3 + 1, n);
  if (actor === null || hasForbiddenSubjectChar(actor)) return null;
  return Object.freeze({ subject, jti, issuedAt, expiresAt, actor });
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
