/**
 * An in-process key-value store.
 *
 * @module
 */
import type { KeyValueStore, PutOptions } from "./key_value_store.ts";
import { registerWriteLog } from "./_write_log.ts";

/** Options of {@linkcode MemoryKV}. */
export interface MemoryKVOptions {
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
}

interface Entry {
  value: string;
  expiresAt: number; // unix ms; Infinity when it does not expire
}

/**
 * A {@linkcode KeyValueStore} in process memory: for tests, demos and a
 * single process. Revocations vanish on restart and are not shared between
 * instances or isolates, so production deployments use Deno KV, libSQL,
 * Upstash or another shared store. Expired entries are never returned and
 * are swept as writes happen.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryKV } from "@portcullis/auth";
 * const kv = new MemoryKV();
 * await kv.put("k", "v", { ttlSeconds: 60 });
 * assert.deepEqual(await kv.getMany(["k"]), ["v"]);
 * ```
 */
export class MemoryKV implements KeyValueStore {
  #map = new Map<string, Entry>();
  #now: () => number;
  #writes = 0;
  // Every change of any key counts here (see `_write_log.ts`): a reader
  // that saw none of its keys held knows the answer until the count moves.
  #log = {
    writes: 0,
    noneHeld: (keys: readonly string[]) => this.#noneHeld(keys),
  };

  /**
   * Makes an empty store.
   *
   * @param options The clock.
   */
  constructor(options: MemoryKVOptions = {}) {
    this.#now = options.now ?? Date.now;
    registerWriteLog(this, this.#log);
  }

  /** How many entries are held, expired ones included until swept. */
  get size(): number {
    return this.#map.size;
  }

  /** {@inheritDoc KeyValueStore.getMany} */
  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    return Promise.resolve(this.getManySync(keys));
  }

  /** {@inheritDoc KeyValueStore.getManySync} */
  getManySync(keys: readonly string[]): (string | null)[] {
    const now = this.#now();
    const out: (string | null)[] = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const e = this.#map.get(keys[i]);
      out[i] = e !== undefined && e.expiresAt > now ? e.value : null;
    }
    return out;
  }

  /** {@inheritDoc KeyValueStore.put} */
  put(key: string, value: string, options: PutOptions = {}): Promise<void> {
    const ttl = options.ttlSeconds;
    const expiresAt = ttl === undefined ? Infinity : this.#now() + ttl * 1000;
    this.#log.writes++;
    this.#map.set(key, { value, expiresAt });
    if (++this.#writes % 1024 === 0) this.#sweep();
    return Promise.resolve();
  }

  /** {@inheritDoc KeyValueStore.increment} */
  increment(key: string, ttlSeconds: number): Promise<number> {
    this.#log.writes++;
    const now = this.#now();
    const e = this.#map.get(key);
    if (e !== undefined && e.expiresAt > now) {
      const n = (Number.parseInt(e.value, 10) || 0) + 1;
      e.value = String(n);
      return Promise.resolve(n);
    }
    this.#map.set(key, { value: "1", expiresAt: now + ttlSeconds * 1000 });
    return Promise.resolve(1);
  }

  /** {@inheritDoc KeyValueStore.delete} */
  delete(key: string): Promise<void> {
    this.#log.writes++;
    this.#map.delete(key);
    return Promise.resolve();
  }

  #noneHeld(keys: readonly string[]): boolean {
    for (let i = 0; i < keys.length; i++) {
      if (this.#map.has(keys[i])) return false;
    }
    return true;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [k, e] of this.#map) if (e.expiresAt <= now) this.#map.delete(k);
  }
}
