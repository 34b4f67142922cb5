/**
 * Security events (`@portcullis/auth/events`): typed events of an
 * account's life (registered, login, login_failed, throttled, logout,
 * password_changed, password_reset, email_changed, verified,
 * session_revoked, account_deleted, passkey_added, passkey_removed,
 * totp_enabled, totp_disabled, …) through one hook, and stores for a
 * user's activity page (`SQLAuthEventStore` lives in
 * `@portcullis/sql`). Stores aggregate the events a stranger can cause
 * (`login_failed`, `throttled`: at most one of each per account and
 * window) and bound each account's rows, dropping those first, so a flood
 * never pushes the account's own history out.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemorySecurityEventStore, SecurityEvents } from "@portcullis/auth/events";
 * const store = new MemorySecurityEventStore();
 * const events = new SecurityEvents({ hook: (e) => store.append(e) });
 * await events.emit("registered", "user_1");
 * assert.equal((await store.list("user_1"))[0].type, "registered");
 * ```
 *
 * @module
 */
export {
  cleanUserAgent,
  SECURITY_EVENT_TYPES,
  type SecurityEvent,
  type SecurityEventDetails,
  type SecurityEventHook,
  SecurityEvents,
  type SecurityEventsOptions,
  type SecurityEventType,
} from "./security_event.ts";
export {
  DEFAULT_EVENT_LIST_LIMIT,
  eventListLimit,
  type SecurityEventStore,
} from "./security_event_store.ts";
export { MemorySecurityEventStore } from "./memory_security_event_store.ts";
export {
  aggregationWindow,
  DEFAULT_AGGREGATION_WINDOW_MS,
  DEFAULT_MAX_EVENTS_PER_SUBJECT,
  type EventRetention,
  eventRetention,
  type EventRetentionOptions,
  FLOODABLE_EVENT_TYPES,
  isFloodable,
} from "./event_retention.ts";
