/**
 * The protocol security events are kept in, for a user's activity page.
 *
 * @module
 */
import type { SecurityEvent } from "./security_event.ts";

/** The most events {@linkcode SecurityEventStore.list} answers by default. */
export const DEFAULT_EVENT_LIST_LIMIT = 50;

/**
 * Keeps security events per account. Events without a subject (a failed
 * login for an unregistered address) belong to no account and are not
 * kept. A backend that cannot be reached throws.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemorySecurityEventStore } from "./memory_security_event_store.ts";
 * const store = new MemorySecurityEventStore();
 * await store.append({ type: "login", subject: "u1", at: 1, userAgent: null });
 * assert.equal((await store.list("u1"))[0].type, "login");
 * ```
 */
export interface SecurityEventStore {
  /**
   * Keeps one event (nothing happens for `subject: null`).
   *
   * @param event The event.
   */
  append(event: SecurityEvent): Promise<void>;
  /**
   * A subject's latest events, newest first.
   *
   * @param subject The subject.
   * @param limit At most this many; default 50.
   * @returns The events.
   */
  list(subject: string, limit?: number): Promise<SecurityEvent[]>;
  /**
   * Removes every event of a subject (the account was deleted).
   *
   * @param subject The subject.
   */
  deleteFor(subject: string): Promise<void>;
}

/**
 * Checks a list limit: a whole number from 1 to 1000.
 *
 * @param limit The limit asked for, or `undefined` for the default.
 * @returns The limit.
 * @throws {RangeError} Outside 1–1000.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { eventListLimit } from "./security_event_store.ts";
 * assert.equal(eventListLimit(undefined), 50);
 * ```
 */
export function eventListLimit(limit: number | undefined): number {
  const n = limit ?? DEFAULT_EVENT_LIST_LIMIT;
  if (!Number.isSafeInteger(n) || n < 1 || n > 1000) {
    throw new RangeError(
      `An event list limit must be a whole number from 1 to 1000: received ${n}`,
    );
  }
  return n;
}
