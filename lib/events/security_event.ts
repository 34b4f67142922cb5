/**
 * Security events: what happened to an account, for an activity page, an
 * audit log or alerts, through one hook.
 *
 * @module
 */

/** Every kind of security event, in the order an account meets them. */
export const SECURITY_EVENT_TYPES = [
  "registered",
  "login",
  "login_failed",
  "throttled",
  "logout",
  "password_changed",
  "password_reset",
  "email_changed",
  "verified",
  "credentials_removed",
  "session_revoked",
  "account_deleted",
  "session_bound",
  "session_refreshed",
  "binding_proof_refused",
  "passkey_added",
  "passkey_removed",
  "totp_enabled",
  "totp_disabled",
  "api_key_created",
  "api_key_revoked",
  "account_banned",
  "account_unbanned",
  "impersonation_started",
  "impersonation_ended",
  "operator_acted",
] as const;

/** One kind of security event. */
export type SecurityEventType = typeof SECURITY_EVENT_TYPES[number];

/**
 * Something that happened to an account. Events never carry a password, a
 * token, a hash or a secret; the user agent is cut to 256 characters with
 * control characters removed.
 */
export interface SecurityEvent {
  /** What happened. */
  readonly type: SecurityEventType;
  /**
   * The account it happened to, or `null` when there is none (a failed
   * login for an address nobody registered).
   */
  readonly subject: string | null;
  /** When, in unix milliseconds. */
  readonly at: number;
  /** The client's `User-Agent`, cleaned, or `null`. */
  readonly userAgent: string | null;
  /**
   * Who acted, when not the account's owner: the subject id of an operator
   * (acting from the console, or impersonating the user; RFC 8693's
   * `act`). Absent when the owner acted.
   */
  readonly actor?: string;
  /**
   * A short note of what was done, for an audit trail (`POST /api/notes
   * → 201`, a ban's reason); plain text, control characters removed, at
   * most 200 characters. Absent when there is nothing to add.
   */
  readonly detail?: string;
}

/** What {@linkcode SecurityEvents.emit} may add to an event. */
export interface SecurityEventDetails {
  /** The operator who acted (see {@linkcode SecurityEvent.actor}). */
  actor?: string | null;
  /** A short note (see {@linkcode SecurityEvent.detail}). */
  detail?: string | null;
}

/** Receives every security event; a failure is reported, never rethrown. */
export type SecurityEventHook = (
  event: SecurityEvent,
) => void | Promise<void>;

/** Options of {@linkcode SecurityEvents}. */
export interface SecurityEventsOptions {
  /** The one hook every event goes through. */
  hook: SecurityEventHook;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /**
   * Where a failing hook is reported (its message only); default
   * `console.error`.
   */
  onError?: (message: string) => void;
  /**
   * The operator acting on the request, if any (an impersonation
   * session's actor): every event emitted with that request carries it,
   * unless the caller names the actor itself.
   */
  actorOf?: (req: Request) => string | null | undefined;
}

const MAX_USER_AGENT = 256;
const MAX_DETAIL = 200;
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Builds events from requests and hands them to the hook. `emit` waits for
 * the hook (so a test or a request that must record before it answers can
 * await it) but never throws: an event that could not be recorded must not
 * turn a password reset into an error page.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { type SecurityEvent, SecurityEvents } from "./security_event.ts";
 * const seen: SecurityEvent[] = [];
 * const events = new SecurityEvents({ hook: (e) => void seen.push(e), now: () => 1000 });
 * await events.emit("login", "user_1", new Request("http://x/", { headers: { "user-agent": "Firefox" } }));
 * assert.deepEqual(seen, [{ type: "login", subject: "user_1", at: 1000, userAgent: "Firefox" }]);
 * ```
 */
export class SecurityEvents {
  #hook: SecurityEventHook;
  #now: () => number;
  #onError: (message: string) => void;
  #actorOf: ((req: Request) => string | null | undefined) | undefined;

  /**
   * Checks the options once.
   *
   * @param options See {@linkcode SecurityEventsOptions}.
   * @throws {TypeError} When `hook` is not a function.
   */
  constructor(options: SecurityEventsOptions) {
    if (typeof options?.hook !== "function") {
      throw new TypeError(
        "SecurityEvents needs a hook: pass hook: (event) => …",
      );
    }
    this.#hook = options.hook;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError ?? ((m) => console.error(m));
    this.#actorOf = options.actorOf;
  }

  /**
   * Records one event.
   *
   * @param type What happened.
   * @param subject The account, or `null`.
   * @param req The request it happened on, for the user agent (and the
   * actor, with `actorOf`).
   * @param details The operator who acted and a short note, if any.
   * @throws {TypeError} For a type that is not a {@linkcode SecurityEventType}.
   */
  async emit(
    type: SecurityEventType,
    subject: string | null,
    req?: Request,
    details: SecurityEventDetails = {},
  ): Promise<void> {
    if (!(SECURITY_EVENT_TYPES as readonly string[]).includes(type)) {
      throw new TypeError(`Unknown security event type: received "${type}"`);
    }
    let actor = details.actor;
    if (actor === undefined && req !== undefined && this.#actorOf) {
      try {
        actor = this.#actorOf(req);
      } catch {
        actor = undefined;
      }
    }
    const detail = cleanText(details.detail ?? null, MAX_DETAIL);
    const event: SecurityEvent = Object.freeze({
      type,
      subject,
      at: Math.floor(this.#now()),
      userAgent: cleanUserAgent(req?.headers.get("user-agent") ?? null),
      ...(typeof actor === "string" && actor !== "" ? { actor } : {}),
      ...(detail === null ? {} : { detail }),
    });
    try {
      await this.#hook(event);
    } catch (error) {
      this.#onError(
        `portcullis: security event hook failed for ${type}: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
    }
  }
}

/**
 * A `User-Agent` as events keep it: control characters removed, at most 256
 * characters, `null` when empty.
 *
 * @param value The header value, or `null`.
 * @returns The cleaned value, or `null`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { cleanUserAgent } from "./security_event.ts";
 * assert.equal(cleanUserAgent("Firefox\n"), "Firefox");
 * assert.equal(cleanUserAgent(""), null);
 * ```
 */
export function cleanUserAgent(value: string | null): string | null {
  return cleanText(value, MAX_USER_AGENT);
}

function cleanText(value: string | null, max: number): string | null {
  if (value === null) return null;
  const clean = value.replace(CONTROL, "").trim().slice(0, max);
  return clean === "" ? null : clean;
}
