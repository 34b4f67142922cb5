/**
 * An in-memory {@linkcode SecurityEventStore} for tests and demos.
 *
 * @module
 */
import type { SecurityEvent } from "./security_event.ts";
import {
  eventListLimit,
  type SecurityEventStore,
} from "./security_event_store.ts";
import {
  aggregationWindow,
  type EventRetention,
  eventRetention,
  type EventRetentionOptions,
  isFloodable,
} from "./event_retention.ts";

/**
 * Keeps each subject's latest events in this isolate. Nothing survives a
 * restart: use `SQLAuthEventStore` (`@portcullis/sql`) for an application.
 *
 * A stranger's flood cannot wipe the activity: the events anyone can cause
 * (`login_failed`, `throttled`) are kept at most once per account and
 * window of each type, and when an account holds more than `maxPerSubject`
 * events the oldest of those go first, then the oldest of the rest (see
 * {@linkcode EventRetentionOptions}).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemorySecurityEventStore } from "./memory_security_event_store.ts";
 * const store = new MemorySecurityEventStore();
 * await store.append({ type: "registered", subject: "u1", at: 1, userAgent: null });
 * await store.append({ type: "login", subject: "u1", at: 2, userAgent: null });
 * assert.deepEqual((await store.list("u1")).map((e) => e.type), ["login", "registered"]);
 * ```
 */
export class MemorySecurityEventStore implements SecurityEventStore {
  #bySubject = new Map<string, SecurityEvent[]>();
  #retention: EventRetention;

  /**
   * Makes an empty store.
   *
   * @param options The aggregation window and the cap per subject (default
   * 1000); a number is the cap alone.
   * @throws {RangeError} For options {@linkcode eventRetention} refuses.
   */
  constructor(options: EventRetentionOptions | number = {}) {
    this.#retention = eventRetention(
      typeof options === "number" ? { maxPerSubject: options } : options,
    );
  }

  /** {@inheritDoc SecurityEventStore.append} */
  append(event: SecurityEvent): Promise<void> {
    if (event.subject === null) return Promise.resolve();
    const list = this.#bySubject.get(event.subject) ?? [];
    const { aggregationWindowMs: w, maxPerSubject } = this.#retention;
    if (isFloodable(event.type)) {
      const window = aggregationWindow(event.at, w);
      const seen = list.some((e) =>
        e.type === event.type && aggregationWindow(e.at, w) === window
      );
      if (seen) return Promise.resolve();
    }
    list.push({ ...event });
    if (list.length > maxPerSubject) {
      // Appended in time order: the first floodable one is the oldest.
      const i = list.findIndex((e) => isFloodable(e.type));
      list.splice(i === -1 ? 0 : i, 1);
    }
    this.#bySubject.set(event.subject, list);
    return Promise.resolve();
  }

  /** {@inheritDoc SecurityEventStore.list} */
  list(subject: string, limit?: number): Promise<SecurityEvent[]> {
    let n: number;
    try {
      n = eventListLimit(limit);
    } catch (error) {
      return Promise.reject(error);
    }
    const list = this.#bySubject.get(subject) ?? [];
    // Appended in time order; a stable sort keeps same-millisecond events
    // in the order they happened.
    const sorted = list.map((e, i) => [e, i] as const).sort((a, b) =>
      b[0].at - a[0].at || b[1] - a[1]
    );
    return Promise.resolve(sorted.slice(0, n).map(([e]) => ({ ...e })));
  }

  /** {@inheritDoc SecurityEventStore.deleteFor} */
  deleteFor(subject: string): Promise<void> {
    this.#bySubject.delete(subject);
    return Promise.resolve();
  }
}
