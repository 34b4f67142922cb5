/**
 * The shared suite every `SecurityEventStore` passes.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { SecurityEvent } from "../../lib/events/security_event.ts";
import type { SecurityEventStore } from "../../lib/events/security_event_store.ts";
import type { StoreConformanceOptions } from "./_conformance.ts";

/**
 * Registers the security-event-store conformance tests for one store.
 *
 * @param name The store's name, for test names.
 * @param make Makes the store; rows of earlier runs may exist, so the suite
 * uses random subjects.
 * @param options See {@linkcode StoreConformanceOptions}.
 */
export function testSecurityEventStore(
  name: string,
  make: () => Promise<SecurityEventStore> | SecurityEventStore,
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
      } finally {
        await options.close?.();
      }
    },
  });
}
