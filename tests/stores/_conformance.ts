/**
 * The shared suites every store passes (STYLE.md §11). A store's own test
 * file calls one of these with a factory, plus whatever is special to it.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { KeyValueStore } from "../../lib/session/key_value_store.ts";

/** Options of {@linkcode testKeyValueStore}. */
export interface KVConformanceOptions {
  /** Skip the whole suite when this answers false (service missing). */
  available?: () => Promise<boolean>;
  /**
   * Waits long enough for an entry with `ttlSeconds: 1` to be gone. Stores
   * with an injectable clock advance it; others sleep.
   */
  expire?: () => Promise<void>;
  /** Called once after the suite. */
  close?: () => Promise<void> | void;
}

/**
 * Registers the key-value conformance tests for one store.
 *
 * @param name The store's name, for test names.
 * @param make Makes a fresh store; keys may be shared with earlier runs, so
 * the suite uses random keys.
 * @param options See {@linkcode KVConformanceOptions}.
 */
export function testKeyValueStore(
  name: string,
  make: () => Promise<KeyValueStore> | KeyValueStore,
  options: KVConformanceOptions = {},
): void {
  Deno.test({
    name: `${name} passes the key-value conformance suite`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      if (options.available && !(await options.available())) return;
      const kv = await make();
      const p = `conf:${crypto.randomUUID()}:`;
      try {
        await t.step(
          "getMany of missing keys answers null for each",
          async () => {
            assert.deepEqual(await kv.getMany([p + "a", p + "b"]), [
              null,
              null,
            ]);
          },
        );
        await t.step("getMany of no keys answers an empty list", async () => {
          assert.deepEqual(await kv.getMany([]), []);
        });
        await t.step(
          "put then getMany reads values back in key order",
          async () => {
            await kv.put(p + "x", "1");
            await kv.put(p + "y", "two words | and ünïcode ✓");
            assert.deepEqual(
              await kv.getMany([p + "y", p + "missing", p + "x"]),
              [
                "two words | and ünïcode ✓",
                null,
                "1",
              ],
            );
          },
        );
        await t.step("put overwrites", async () => {
          await kv.put(p + "x", "3");
          assert.deepEqual(await kv.getMany([p + "x"]), ["3"]);
        });
        await t.step(
          "delete removes, and deleting a missing key is fine",
          async () => {
            await kv.delete(p + "x");
            await kv.delete(p + "never-set");
            assert.deepEqual(await kv.getMany([p + "x"]), [null]);
          },
        );
        await t.step(
          "keys with separators and unicode are distinct",
          async () => {
            await kv.put(p + "a:b", "colon");
            await kv.put(p + "a|b", "pipe");
            await kv.put(p + "ä", "umlaut");
            assert.deepEqual(
              await kv.getMany([p + "a:b", p + "a|b", p + "ä", p + "a"]),
              [
                "colon",
                "pipe",
                "umlaut",
                null,
              ],
            );
          },
        );
        await t.step(
          "an entry with a time to live is readable before it expires",
          async () => {
            await kv.put(p + "ttl", "soon gone", { ttlSeconds: 3600 });
            assert.deepEqual(await kv.getMany([p + "ttl"]), ["soon gone"]);
          },
        );
        if (options.expire) {
          await t.step(
            "an entry is never read after its time to live",
            async () => {
              await kv.put(p + "short", "v", { ttlSeconds: 1 });
              await kv.put(p + "long", "w", { ttlSeconds: 3600 });
              await options.expire!();
              assert.deepEqual(await kv.getMany([p + "short", p + "long"]), [
                null,
                "w",
              ]);
            },
          );
        }
        await t.step("many keys in one call", async () => {
          const keys = Array.from({ length: 50 }, (_, i) => `${p}many:${i}`);
          await Promise.all(keys.map((k, i) => kv.put(k, String(i))));
          const got = await kv.getMany(keys);
          assert.deepEqual(got, keys.map((_, i) => String(i)));
        });
      } finally {
        await options.close?.();
      }
    },
  });
}
