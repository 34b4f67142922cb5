/**
 * The shared suite every `SecurityEventStore` passes.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  SECURITY_EVENT_TYPES,
  type SecurityEvent,
  type SecurityEventType,
} from "../../lib/events/security_event.ts";
import {
  DEFAULT_AGGREGATION_WINDOW_MS,
  type EventRetentionOptions,
  isFloodable,
} from "../../lib/events/event_retention.ts";
import type { SecurityEventStore } from "../../lib/events/security_event_store.ts";
import type { StoreConformanceOptions } from "./_conformance.ts";

/**
 * Registers the security-event-store conformance tests for one store.
 *
 * @param name The store's name, for test names.
 * @param make Makes a store with the given retention options (several may
 * share one database); rows of earlier runs may exist, so the suite uses
 * random subjects.
 * @param options See {@linkcode StoreConformanceOptions}.
 */
export function testSecurityEventStore(
  name: string,
  make: (
    retention?: EventRetentionOptions,
  ) => Promise<SecurityEventStore> | SecurityEventStore,
  options: StoreConformanceOptions = {},
): void {
  Deno.test({
    name: `${name} passes the security-event-store conformance suite`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      if (options.available && !(await options.available())) return;
      const store = await make();
      const subject = () => `user_${crypto.randomUUID()}`;
      const event = (
        over: Partial<SecurityEvent> & { subject: string },
      ): SecurityEvent => ({
        type: "login",
        at: 1_767_225_600_123,
        userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
        ...over,
      });
      try {
        await t.step("list() of an unknown subject is empty", async () => {
          assert.deepEqual(await store.list(subject()), []);
        });

        await t.step(
          "append() then list(): every field back, newest first, also within one millisecond",
          async () => {
            const s = subject();
            const events = [
              event({ subject: s, type: "registered", at: 1_000 }),
              event({ subject: s, type: "login", at: 2_000, userAgent: null }),
              event({ subject: s, type: "logout", at: 2_000 }),
              event({
                subject: s,
                type: "password_changed",
                at: 1_767_225_600_999,
                userAgent: "ünïcode agent ✓",
              }),
            ];
            for (const e of events) await store.append(e);
            assert.deepEqual(await store.list(s), [
              events[3],
              events[2],
              events[1],
              events[0],
            ]);
          },
        );

        await t.step(
          "list() keeps subjects apart and honours the limit",
          async () => {
            const a = subject();
            const b = subject();
            for (let i = 0; i < 60; i++) {
              await store.append(event({ subject: a, at: 10_000 + i }));
            }
            await store.append(event({ subject: b, type: "verified" }));
            const latest = await store.list(a);
            assert.equal(latest.length, 50, "50 by default");
            assert.equal(latest[0].at, 10_059);
            assert.equal(latest[49].at, 10_010);
            assert.deepEqual(
              (await store.list(a, 3)).map((e) => e.at),
              [10_059, 10_058, 10_057],
            );
            assert.deepEqual((await store.list(b)).map((e) => e.type), [
              "verified",
            ]);
            await assert.rejects(store.list(a, 0), RangeError);
            await assert.rejects(store.list(a, 1001), RangeError);
          },
        );

        await t.step("an event without a subject is not kept", async () => {
          await store.append({
            type: "login_failed",
            subject: null,
            at: 1,
            userAgent: null,
          });
          assert.deepEqual(await store.list("null"), []);
        });

        await t.step(
          "deleteFor() removes one subject's events only",
          async () => {
            const gone = subject();
            const kept = subject();
            await store.append(event({ subject: gone }));
            await store.append(event({ subject: kept }));
            await store.deleteFor(gone);
            await store.deleteFor(subject()); // nothing there: fine
            assert.deepEqual(await store.list(gone), []);
            assert.equal((await store.list(kept)).length, 1);
          },
        );

        // Issue 16 finding 8: a stranger's 120 attempts wrote 120 events and
        // pushed the last 50 real entries out.
        const REAL: SecurityEventType[] = SECURITY_EVENT_TYPES.filter((t) =>
          !isFloodable(t)
        );
        const W = DEFAULT_AGGREGATION_WINDOW_MS;
        const base = 1_767_225_600_000 - (1_767_225_600_000 % W); // a window's start

        await t.step(
          "issue 16 finding 8: 120 failed and 120 throttled attempts in one window keep one event of each type, and the last 50 real entries survive",
          async () => {
            const s = subject();
            const real: SecurityEvent[] = [];
            for (let i = 0; i < 50; i++) {
              const e = event({
                subject: s,
                type: REAL[i % REAL.length],
                at: base - 100_000 + i * 1000,
              });
              real.push(e);
              await store.append(e);
            }
            for (let i = 0; i < 120; i++) {
              await store.append(
                event({ subject: s, type: "login_failed", at: base + 2 * i }),
              );
              await store.append(
                event({ subject: s, type: "throttled", at: base + 2 * i + 1 }),
              );
            }
            const all = await store.list(s, 1000);
            assert.equal(all.length, 52);
            assert.deepEqual(
              all.filter((e) => isFloodable(e.type)).map((e) => [e.type, e.at]),
              [["throttled", base + 1], ["login_failed", base]],
            );
            assert.deepEqual(
              all.filter((e) => !isFloodable(e.type)),
              real.toReversed(),
            );
            // The activity page's 50: the two aggregated ones and 48 real.
            const page = await store.list(s);
            assert.equal(page.filter((e) => !isFloodable(e.type)).length, 48);
            // The next window keeps one more of each.
            await store.append(
              event({ subject: s, type: "throttled", at: base + W }),
            );
            await store.append(
              event({ subject: s, type: "throttled", at: base + W + 5 }),
            );
            assert.equal(
              (await store.list(s, 1000)).filter((e) => e.type === "throttled")
                .length,
              2,
            );
          },
        );

        await t.step(
          "issue 16 finding 8: an account's rows are bounded; past the cap the oldest floodable events go first, then the oldest of the rest",
          async () => {
            const capped = await make({
              maxPerSubject: 50,
              aggregationWindowMs: 1,
            });
            const s = subject();
            for (let i = 0; i < 40; i++) {
              await capped.append(
                event({
                  subject: s,
                  type: REAL[i % REAL.length],
                  at: 1000 + i,
                }),
              );
            }
            for (let i = 0; i < 30; i++) {
              await capped.append(
                event({ subject: s, type: "login_failed", at: 2000 + i }),
              );
            }
            let kept = await capped.list(s, 1000);
            assert.equal(kept.length, 50);
            assert.equal(kept.filter((e) => !isFloodable(e.type)).length, 40);
            assert.deepEqual(
              kept.filter((e) => isFloodable(e.type)).map((e) => e.at),
              Array.from({ length: 10 }, (_, i) => 2029 - i),
            );
            for (let i = 0; i < 20; i++) {
              await capped.append(
                event({ subject: s, type: "login", at: 3000 + i }),
              );
            }
            kept = await capped.list(s, 1000);
            assert.equal(kept.length, 50);
            assert.equal(kept.filter((e) => isFloodable(e.type)).length, 0);
            // The 10 oldest real ones went last, after every floodable one.
            assert.equal(kept.at(-1)!.at, 1010);
          },
        );
      } finally {
        await options.close?.();
      }
    },
  });
}
