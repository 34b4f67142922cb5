/**
 * How event stores keep an account's activity readable when a stranger
 * floods it: the events anyone can cause are aggregated per window, and
 * when an account holds too many rows they go first.
 *
 * @module
 */
import type { SecurityEventType } from "./security_event.ts";

/**
 * The event types a stranger can cause on someone else's account without
 * any credential of it: a wrong password or code (`login_failed`), a
 * refused attempt (`throttled`), and a refused proof of a key-bound
 * session (`binding_proof_refused`: a device-bound session's id is all a
 * refresh names, and it is readable in the bound cookie and travels in a
 * header that proxy logs keep). Every other type needs the account's own
 * credentials or session, so it is security-relevant and never dropped for
 * these.
 */
export const FLOODABLE_EVENT_TYPES: readonly SecurityEventType[] = Object
  .freeze(["login_failed", "throttled", "binding_proof_refused"]);

/** The default aggregation window of floodable events: 15 minutes. */
export const DEFAULT_AGGREGATION_WINDOW_MS = 15 * 60 * 1000;

/** The default cap on stored events per account. */
export const DEFAULT_MAX_EVENTS_PER_SUBJECT = 1000;

/** How a store aggregates and bounds an account's events. */
export interface EventRetentionOptions {
  /**
   * At most one event of each floodable type per account and per window of
   * this many milliseconds (windows are aligned to the epoch): the first
   * one stands for the rest. Default 15 minutes.
   */
  aggregationWindowMs?: number;
  /**
   * The most events kept per account (at least 50, the activity page's length; default 1000). Past
   * it the oldest floodable events go first, then the oldest of the rest.
   */
  maxPerSubject?: number;
}

/** The checked form of {@linkcode EventRetentionOptions}. */
export interface EventRetention {
  /** The aggregation window, in milliseconds. */
  readonly aggregationWindowMs: number;
  /** The most events kept per account. */
  readonly maxPerSubject: number;
}

/**
 * Checks retention options and fills in the defaults.
 *
 * @param options The options.
 * @returns The retention.
 * @throws {RangeError} For a window that is not a positive whole number of
 * milliseconds, or a cap below 50.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventRetention } from "./event_retention.ts";
 * assert.deepEqual(eventRetention({}), { aggregationWindowMs: 900000, maxPerSubject: 1000 });
 * ```
 */
export function eventRetention(
  options: EventRetentionOptions = {},
): EventRetention {
  const window = options.aggregationWindowMs ?? DEFAULT_AGGREGATION_WINDOW_MS;
  if (!Number.isSafeInteger(window) || window < 1) {
    throw new RangeError(
      `aggregationWindowMs must be a positive whole number of milliseconds: received ${window}`,
    );
  }
  const max = options.maxPerSubject ?? DEFAULT_MAX_EVENTS_PER_SUBJECT;
  if (!Number.isSafeInteger(max) || max < 50) {
    throw new RangeError(
      `maxPerSubject must be a whole number of at least 50: received ${max}`,
    );
  }
  return { aggregationWindowMs: window, maxPerSubject: max };
}

/**
 * Whether a stranger can cause this event type on any account (see
 * {@linkcode FLOODABLE_EVENT_TYPES}).
 *
 * @param type The type.
 * @returns `true` for `login_failed`, `throttled` and
 * `binding_proof_refused`.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { isFloodable } from "./event_retention.ts";
 * assert.equal(isFloodable("throttled"), true);
 * assert.equal(isFloodable("password_changed"), false);
 * ```
 */
export function isFloodable(type: string): boolean {
  return (FLOODABLE_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * The window an event falls in: its start, in unix milliseconds.
 *
 * @param at The event's time, in unix milliseconds.
 * @param windowMs The window's length.
 * @returns The start of the window.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { aggregationWindow } from "./event_retention.ts";
 * assert.equal(aggregationWindow(1_000_123, 1000), 1_000_000);
 * ```
 */
export function aggregationWindow(at: number, windowMs: number): number {
  return Math.floor(at / windowMs) * windowMs;
}
