/**
 * A key-value store in one SQLite / libSQL table (`@libsql/client`): a local
 * file on Bun and Node, `:memory:` in tests, or a Turso database over the
 * network.
 *
 * Consistency: immediate. Every read and write goes to the one database (a
 * Turso embedded replica is the exception: its reads are as fresh as its
 * last sync). Latency: one statement per call; local files answer in
 * microseconds, a remote database in one network round trip.
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that the reference app's first start does not download it (deno task installs every import-map dependency)
import type { Client, InValue } from "npm:@libsql/client@^0.18.0";
import type { KeyValueStore } from "@portcullis/auth";
import type { PutOptions } from "@portcullis/auth/sessions";

/** The table {@linkcode LibsqlKV} keeps its entries in. */
export const LIBSQL_KV_TABLE = "portcullis_kv";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS ${LIBSQL_KV_TABLE} (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires_at INTEGER
  )`,
  `CREATE INDEX IF NOT EXISTS ${LIBSQL_KV_TABLE}_expires_at
    ON ${LIBSQL_KV_TABLE} (expires_at) WHERE expires_at IS NOT NULL`,
];

/** Keys read per statement; SQLite allows 32,766 parameters. */
const KEYS_PER_QUERY = 500;

/** Options of {@linkcode LibsqlKV}. */
export interface LibsqlKVOptions {
  /** The clock, in unix milliseconds; `Date.now` by default. */
  now?: () => number;
  /**
   * Milliseconds between two lazy cleanups of expired rows, run after a
   * `put`; 60,000 by default, `Infinity` to never clean up lazily (then call
   * {@linkcode LibsqlKV.deleteExpired} from a scheduled job).
   */
  cleanupIntervalMs?: number;
}

/** Checks a time to live and answers it in milliseconds. */
function ttlMillis(ttlSeconds: number): number {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(
      `ttlSeconds must be a positive number of seconds: received ${ttlSeconds}`,
    );
  }
  return Math.ceil(ttlSeconds * 1000);
}

/**
 * A {@linkcode KeyValueStore} in the table `portcullis_kv(key TEXT PRIMARY
 * KEY, value TEXT NOT NULL, expires_at INTEGER)`, `expires_at` in unix
 * milliseconds or `NULL` for no expiry.
 *
 * - The table (and an index on `expires_at`) is created on first use, or by
 *   {@linkcode LibsqlKV.migrate}; both are idempotent.
 * - `getMany` is one `SELECT … WHERE key IN (…)` (one per 500 keys) that
 *   skips rows whose `expires_at` has passed, so an expired row is never
 *   read even before it is deleted.
 * - `put` is one upsert. Expired rows are deleted lazily: after a `put`, at
 *   most once per `cleanupIntervalMs` per store object, one `DELETE` of
 *   every expired row (its failure is ignored; the next one retries). Reads
 *   never clean up, so they stay one statement.
 *
 * Consistency: immediate (see the module doc). A database failure throws
 * the client's error.
 *
 * @example Usage
 * ```ts
 * import { createClient } from "@libsql/client";
 * import { LibsqlKV } from "@portcullis/libsql-kv";
 *
 * const client = createClient({ url: ":memory:" });
 * const kv = new LibsqlKV(client);
 * await kv.put("revoked:abc", "1", { ttlSeconds: 3600 });
 * const [hit, miss] = await kv.getMany(["revoked:abc", "revoked:xyz"]);
 * // hit === "1", miss === null
 * client.close();
 * ```
 */
export class LibsqlKV implements KeyValueStore {
  #client: Client;
  #now: () => number;
  #cleanupIntervalMs: number;
  #migrated: Promise<void> | undefined;
  #lastCleanup = -Infinity;

  /**
   * Makes a store over a libSQL client; no statement runs until first use.
   *
   * @param client A client from `createClient()`.
   * @param options See {@linkcode LibsqlKVOptions}.
   * @throws {RangeError} When `cleanupIntervalMs` is negative or not a number.
   */
  constructor(client: Client, options: LibsqlKVOptions = {}) {
    this.#client = client;
    this.#now = options.now ?? Date.now;
    this.#cleanupIntervalMs = options.cleanupIntervalMs ?? 60_000;
    if (!(this.#cleanupIntervalMs >= 0)) {
      throw new RangeError(
        `cleanupIntervalMs must be zero or more: received ${this.#cleanupIntervalMs}`,
      );
    }
  }

  /**
   * Creates the table and its index when missing. Called on first use; call
   * it at startup to keep that statement off the first request.
   *
   * @returns When the schema exists.
   */
  migrate(): Promise<void> {
    this.#migrated ??= (async () => {
      for (const sql of SCHEMA) await this.#client.execute(sql);
    })().catch((err) => {
      this.#migrated = undefined; // let the next call try again
      throw err;
    });
    return this.#migrated;
  }

  /**
   * Reads several keys in one query, skipping expired rows.
   *
   * @param keys The keys to read.
   * @returns One value per key, in order; `null` for a missing or expired key.
   */
  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    if (keys.length === 0) return [];
    await this.migrate();
    const now = this.#now();
    const found = new Map<string, string>();
    const chunks: string[][] = [];
    for (let i = 0; i < keys.length; i += KEYS_PER_QUERY) {
      chunks.push([...new Set(keys.slice(i, i + KEYS_PER_QUERY))]);
    }
    await Promise.all(chunks.map(async (chunk) => {
      const marks = chunk.map(() => "?").join(", ");
      const result = await this.#client.execute({
        sql: `SELECT key, value FROM ${LIBSQL_KV_TABLE}
          WHERE key IN (${marks}) AND (expires_at IS NULL OR expires_at > ?)`,
        args: [...chunk, now],
      });
      for (const row of result.rows) {
        found.set(String(row.key), String(row.value));
      }
    }));
    return keys.map((k) => found.get(k) ?? null);
  }

  /**
   * Writes one value (an upsert); may then delete expired rows.
   *
   * @param key The key.
   * @param value The value.
   * @param options The time to live; without it the entry does not expire.
   * @throws {RangeError} When `ttlSeconds` is not a positive number.
   */
  async put(key: string, value: string, options?: PutOptions): Promise<void> {
    const now = this.#now();
    const expiresAt: InValue = options?.ttlSeconds === undefined
      ? null
      : now + ttlMillis(options.ttlSeconds);
    await this.migrate();
    await this.#client.execute({
      sql: `INSERT INTO ${LIBSQL_KV_TABLE} (key, value, expires_at)
        VALUES (?, ?, ?)
        ON CONFLICT (key) DO UPDATE
        SET value = excluded.value, expires_at = excluded.expires_at`,
      args: [key, value, expiresAt],
    });
    if (now - this.#lastCleanup >= this.#cleanupIntervalMs) {
      this.#lastCleanup = now;
      await this.deleteExpired().catch(() => {});
    }
  }

  /**
   * Atomic counter in one statement: an upsert that restarts an expired
   * window and answers the new value (`RETURNING`).
   *
   * @param key The counter's key.
   * @param ttlSeconds The window, from the first increment.
   * @returns The counter after this increment.
   */
  async increment(key: string, ttlSeconds: number): Promise<number> {
    const now = this.#now();
    await this.migrate();
    const result = await this.#client.execute({
      sql: `INSERT INTO ${LIBSQL_KV_TABLE} (key, value, expires_at)
        VALUES (?, '1', ?)
        ON CONFLICT (key) DO UPDATE SET
          value = CASE WHEN expires_at IS NOT NULL AND expires_at <= ?
            THEN '1' ELSE CAST(CAST(value AS INTEGER) + 1 AS TEXT) END,
          expires_at = CASE WHEN expires_at IS NOT NULL AND expires_at <= ?
            THEN excluded.expires_at ELSE expires_at END
        RETURNING value`,
      args: [key, now + ttlMillis(ttlSeconds), now, now],
    });
    return Number(result.rows[0].value);
  }

  /**
   * Removes one key.
   *
   * @param key The key.
   */
  async delete(key: string): Promise<void> {
    await this.migrate();
    await this.#client.execute({
      sql: `DELETE FROM ${LIBSQL_KV_TABLE} WHERE key = ?`,
      args: [key],
    });
  }

  /**
   * Deletes every expired row now; for a scheduled job when lazy cleanup is
   * off.
   *
   * @returns How many rows were deleted.
   */
  async deleteExpired(): Promise<number> {
    await this.migrate();
    const result = await this.#client.execute({
      sql: `DELETE FROM ${LIBSQL_KV_TABLE}
        WHERE expires_at IS NOT NULL AND expires_at <= ?`,
      args: [this.#now()],
    });
    return result.rowsAffected;
  }
}

/** The key-value protocol this store implements, re-exported so this entry documents itself. */
export type { KeyValueStore } from "@portcullis/auth";
export type { PutOptions } from "@portcullis/auth/sessions";
