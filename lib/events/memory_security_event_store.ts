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

/**
 * Keeps each subject's latest events (at most `perSubject`, default 1000)
 * in this isolate. Nothing survives a restart: use `SQLAuthEventStore`
 * (`@portcullis/sql`) for an application.
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
  #perSubject: number;

  /**
   * Makes an empty store.
   *
   * @param perSubject How many events to keep per subject; default 1000.
   */
  constructor(perSubject = 1000) {
    this.#perSubject = perSubject;
  }

  /** {@inheritDoc SecurityEventStore.append} */
  append(event: SecurityEvent): Promise<void> {
    if (event.subject === null) return Promise.resolve();
    const list = this.#bySubject.get(event.subject) ?? [];
    list.push({ ...event });
    if (list.length > this.#perSubject) list.shift();
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
