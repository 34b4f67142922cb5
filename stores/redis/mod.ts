/**
 * A key-value store on Redis or Redis Cluster over a node-redis client
 * (`@redis/client` or `redis`, v5 or v6) that you create, connect and close.
 *
 * Consistency: immediate. Every command goes to the primary that owns the
 * key (on a cluster too, even when the client was made with
 * `useReplicas: true`), so a revocation written by one instance is seen by
 * the next read from any instance. Latency: one network round trip per call;
 * on a cluster, `getMany` sends one `MGET` per hash slot it touches, all at
 * once (see {@linkcode RedisKV.getMany}). Keep `maxmemory-policy noeviction`
 * (the default) on that Redis: every key here has a TTL, so the `volatile-*`
 * and `allkeys-*` policies may evict denylist entries and un-revoke tokens.
 *
 * @example Usage
 * ```ts ignore
 * import { createClient } from "@redis/client";
 * import { RedisKV } from "@portcullis/redis";
 *
 * const client = await createClient({
 *   url: "redis://127.0.0.1:6379",
 *   disableOfflineQueue: true,
 * }).on("error", () => {}).connect();
 * const kv = new RedisKV(client, { prefix: "auth:" });
 * await kv.put("deny:abc", "1", { ttlSeconds: 3600 });
 * const [hit, miss] = await kv.getMany(["deny:abc", "deny:xyz"]);
 * // hit === "1", miss === null
 * ```
 *
 * @module
 */
import type { KeyValueStore } from "@portcullis/auth";
import type { PutOptions } from "@portcullis/auth/sessions";
import { keySlot } from "./_key_slot.ts";

/**
 * The part of a node-redis client (`createClient()`) or client pool
 * (`createClientPool()`) this store uses: the raw `sendCommand`. Described
 * by shape, so any v5 or v6 build fits.
 */
export interface RedisClientLike {
  /**
   * Sends one command.
   *
   * @param args The command and its arguments.
   * @returns The raw reply.
   */
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * The part of a node-redis cluster client (`createCluster()`) this store
 * uses. `masters` is how the store tells a cluster from a single client.
 */
export interface RedisClusterLike {
  /**
   * Sends one command to the node that owns `firstKey`'s slot.
   *
   * @param firstKey The key that routes the command.
   * @param isReadonly `false` sends it to the primary.
   * @param args The command and its arguments.
   * @returns The raw reply.
   */
  sendCommand(
    firstKey: string,
    isReadonly: boolean,
    args: string[],
  ): Promise<unknown>;
  /** The cluster's primaries. */
  readonly masters: unknown;
}

/** Options of {@linkcode RedisKV}. */
export interface RedisKVOptions {
  /**
   * Prepended to every key, such as `"auth:"`; empty by default. On a
   * cluster, a prefix with a hash tag (`"{auth}:"`) keeps every key in one
   * slot: `getMany` is then always one `MGET`, but one primary holds all
   * the keys. Without a tag the keys spread over the cluster.
   */
  prefix?: string;
  /**
   * Milliseconds a call may take before it rejects with a `TimeoutError`
   * `DOMException`; 5,000 by default. This bounds every call whatever the
   * client does (a command already written to a server that stopped
   * answering waits for the socket otherwise), so the session layer fails
   * closed with a 503 instead of hanging.
   */
  timeoutMs?: number;
}

/** The counter script: INCR, and an expiry when the key has none. */
const INCREMENT_SCRIPT = `local n = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** The longest `setTimeout` delay. */
const MAX_TIMEOUT_MS = 2_147_483_647;

const decoder = new TextDecoder();

/** Checks a time to live and answers it in whole milliseconds. */
function ttlMillis(ttlSeconds: number): number {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(
      `ttlSeconds must be a positive number of seconds: received ${ttlSeconds}`,
    );
  }
  return Math.ceil(ttlSeconds * 1000);
}

/** A reply value as a string: node-redis answers strings, or buffers when a type mapping says so. */
function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return decoder.decode(value);
  return String(value);
}

/**
 * A {@linkcode KeyValueStore} on Redis: `getMany` is `MGET`, `put` is
 * `SET key value [PX ms]`, `delete` is `DEL`, and `increment` is one Lua
 * script (`INCR`, then `PEXPIRE` when the key has no expiry), so the first
 * increment starts the window and later ones keep it, atomically, in one
 * round trip. Values are plain strings that other clients read as they are.
 *
 * The store does not connect, reconnect or close: pass a connected client
 * and keep owning it. Make it with `disableOfflineQueue: true`, so calls
 * made while the connection is down reject at once instead of waiting in
 * the client's queue, and give it an `"error"` listener (node-redis emits
 * connection errors as events). The client's own `keyPrefix` is refused:
 * use `prefix`. Sentinel clients are not supported.
 *
 * On a cluster every command is sent to the primary owning its key, and
 * `getMany` groups its keys by hash slot: one `MGET` per slot, all sent at
 * once, so a call costs one round trip of latency but may touch several
 * primaries. A prefix with a hash tag makes it one `MGET` on one primary.
 *
 * @example Usage
 * ```ts ignore
 * import { createCluster } from "@redis/client";
 * import { RedisKV } from "@portcullis/redis";
 *
 * const cluster = await createCluster({
 *   rootNodes: [{ url: "redis://10.0.0.1:7000" }],
 *   defaults: { disableOfflineQueue: true },
 * }).on("error", () => {}).connect();
 * const kv = new RedisKV(cluster, { prefix: "{auth}:" });
 * const n = await kv.increment("rate:login:ab12", 60); // 1, then 2, …
 * ```
 */
export class RedisKV implements KeyValueStore {
  #client: RedisClientLike | null;
  #cluster: RedisClusterLike | null;
  #prefix: string;
  #timeoutMs: number;

  /**
   * Wraps a connected client.
   *
   * @param client A node-redis client, client pool or cluster client,
   * already connected.
   * @param options See {@linkcode RedisKVOptions}.
   * @throws {TypeError} When `client` has no `sendCommand`, or has its own
   * `keyPrefix`.
   * @throws {RangeError} When `timeoutMs` is not a positive number of
   * milliseconds.
   */
  constructor(
    client: RedisClientLike | RedisClusterLike,
    options: RedisKVOptions = {},
  ) {
    if (
      typeof client !== "object" || client === null ||
      typeof client.sendCommand !== "function"
    ) {
      throw new TypeError(
        "RedisKV needs a node-redis client, client pool or cluster: received an object without sendCommand",
      );
    }
    const ownPrefix = (client as { _keyPrefix?: unknown })._keyPrefix;
    if (ownPrefix !== undefined && ownPrefix !== null && ownPrefix !== "") {
      throw new TypeError(
        "RedisKV needs a client without keyPrefix: pass the prefix as RedisKV's prefix option instead",
      );
    }
    const timeoutMs = options.timeoutMs ?? 5000;
    if (
      !Number.isFinite(timeoutMs) || timeoutMs <= 0 ||
      timeoutMs > MAX_TIMEOUT_MS
    ) {
      throw new RangeError(
        `timeoutMs must be a positive number of milliseconds: received ${timeoutMs}`,
      );
    }
    const isCluster = "masters" in client;
    this.#cluster = isCluster ? client as RedisClusterLike : null;
    this.#client = isCluster ? null : client as RedisClientLike;
    this.#prefix = options.prefix ?? "";
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Reads several keys: one `MGET` on a single node; on a cluster, one
   * `MGET` per hash slot, sent together.
   *
   * @param keys The keys to read.
   * @returns One value per key, in order; `null` for a missing or expired key.
   */
  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    const full = keys.map((k) => this.#prefix + k);
    if (this.#cluster === null) {
      return this.#send(full[0], ["MGET", ...full]).then((reply) =>
        values(reply, full.length)
      );
    }
    return this.#getManyBySlot(full);
  }

  async #getManyBySlot(full: string[]): Promise<(string | null)[]> {
    const groups = new Map<number, number[]>();
    full.forEach((key, i) => {
      const slot = keySlot(key);
      const group = groups.get(slot);
      if (group === undefined) groups.set(slot, [i]);
      else group.push(i);
    });
    const out = new Array<string | null>(full.length);
    await Promise.all(
      Array.from(groups.values(), async (indices) => {
        const slotKeys = indices.map((i) => full[i]);
        const reply = await this.#send(slotKeys[0], ["MGET", ...slotKeys]);
        values(reply, indices.length).forEach((v, j) => out[indices[j]] = v);
      }),
    );
    return out;
  }

  /**
   * Writes one value with `SET`, with `PX` when a time to live is given.
   *
   * @param key The key.
   * @param value The value.
   * @param options The time to live; without it the entry does not expire.
   * @throws {RangeError} When `ttlSeconds` is not a positive number.
   */
  async put(key: string, value: string, options?: PutOptions): Promise<void> {
    const k = this.#prefix + key;
    const args = ["SET", k, value];
    if (options?.ttlSeconds !== undefined) {
      args.push("PX", String(ttlMillis(options.ttlSeconds)));
    }
    await this.#send(k, args);
  }

  /**
   * Atomic counter in one round trip: a Lua script runs `INCR` and, when the
   * key has no expiry yet (it was just created), `PEXPIRE`. Redis freezes
   * time while a script runs, so the key cannot expire between the two.
   *
   * @param key The counter's key.
   * @param ttlSeconds The window, from the first increment.
   * @returns The counter after this increment.
   * @throws {RangeError} When `ttlSeconds` is not a positive number.
   */
  async increment(key: string, ttlSeconds: number): Promise<number> {
    const k = this.#prefix + key;
    const ms = String(ttlMillis(ttlSeconds));
    const reply = await this.#send(k, ["EVAL", INCREMENT_SCRIPT, "1", k, ms]);
    const n = Number(text(reply));
    if (!Number.isSafeInteger(n)) {
      throw new Error(`Redis answered the increment with a non-integer`);
    }
    return n;
  }

  /**
   * Removes one key with `DEL`.
   *
   * @param key The key.
   */
  async delete(key: string): Promise<void> {
    const k = this.#prefix + key;
    await this.#send(k, ["DEL", k]);
  }

  /** Sends a command to the primary owning `key`, within the deadline. */
  #send(key: string, args: string[]): Promise<unknown> {
    let sent: Promise<unknown>;
    try {
      sent = this.#cluster !== null
        ? this.#cluster.sendCommand(key, false, args)
        : this.#client!.sendCommand(args);
    } catch (error) {
      return Promise.reject(error);
    }
    // Settles like `sent`, or rejects with a `TimeoutError` after the
    // deadline, whichever comes first; a late rejection of `sent` is
    // handled by the race, so it never surfaces as unhandled.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() =>
        reject(
          new DOMException(
            `Redis did not answer within ${this.#timeoutMs} ms`,
            "TimeoutError",
          ),
        ), this.#timeoutMs);
    });
    return Promise.race([sent, deadline]).finally(() => clearTimeout(timer));
  }
}

/** Checks an `MGET` reply and answers its values as strings. */
function values(reply: unknown, expected: number): (string | null)[] {
  if (!Array.isArray(reply) || reply.length !== expected) {
    throw new Error(
      `Redis answered MGET with ${
        Array.isArray(reply) ? reply.length : "no"
      } values: expected ${expected}`,
    );
  }
  return reply.map(text);
}

/** The key-value protocol this store implements, re-exported so this entry documents itself. */
export type { KeyValueStore } from "@portcullis/auth";
export type { PutOptions } from "@portcullis/auth/sessions";
