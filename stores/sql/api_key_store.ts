/**
 * `SQLApiKeyStore`: API keys (personal access tokens) in SQL through
 * drizzle-orm: the `ApiKeyStore` the core's `ApiKeys` reads on each request
 * that presents a key, and what the account page lists and revokes.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import type { ApiKeyStore, StoredApiKey } from "@portcullis/auth/sessions";
import {
  detectDialect,
  type DrizzleDatabase,
  type SQLDatabase,
  type SQLDialect,
} from "./dialect.ts";
import { execute, queryRows, type Row } from "./_exec.ts";
import { schemaGate } from "./_schema_gate.ts";
import { isUniqueViolation, storeError } from "./_errors.ts";
import { accessTableNames, type SQLStoreOptions } from "./table_names.ts";
import { touched } from "./_signin_exec.ts";

/** One key as the store lists it (never its hash). */
export interface SQLApiKeyRecord {
  /** The key's public id. */
  id: string;
  /** Its owner. */
  subject: string;
  /** The owner's name for it. */
  name: string;
  /** The policy actions it may perform. */
  scopes: string[];
  /** Unix milliseconds of its creation. */
  createdAt: number;
  /** Unix milliseconds when it stops working. */
  expiresAt: number;
  /** Unix milliseconds of its last use (to the minute); 0 before any. */
  lastUsedAt: number;
}

/** A new key: the listed fields and the hash of the whole key. */
export interface SQLNewApiKey extends SQLApiKeyRecord {
  /** SHA-256 of the whole key, 64 hex digits. */
  hash: string;
}

const COLUMNS = sql.raw(
  "id, user_id, name, scopes, created_at, expires_at, last_used_at",
);

/**
 * API keys in the `api_keys` table (migration `0002_api_keys_and_bans`, `migrate(db)`), stored
 * as the SHA-256 of the whole key. `findApiKey` is one query by primary
 * key that also refuses a key whose owner is banned (`account_bans`), so a
 * ban stops every key at once and an unban brings them back; deleting the
 * user removes the keys (`ON DELETE CASCADE`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLApiKeyStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * const keys = new SQLApiKeyStore(db);
 * assert.equal(await keys.findApiKey("aaaaaaaaaaaaaaaa"), null);
 * db.$client.close();
 * ```
 */
export class SQLApiKeyStore implements ApiKeyStore {
  #db: DrizzleDatabase;
  #keys: SQL;
  #bans: SQL;
  #gate: () => Promise<void> | undefined;
  /** The dialect the store speaks, detected or given. */
  readonly dialect: SQLDialect;

  /**
   * Makes the store; the dialect is detected unless given.
   *
   * @param db A drizzle database of any supported dialect.
   * @param options The table prefix, and the dialect if detection is not wanted.
   */
  constructor(db: SQLDatabase, options: SQLStoreOptions = {}) {
    this.#db = db as DrizzleDatabase;
    this.dialect = options.dialect ?? detectDialect(db);
    this.#gate = schemaGate(db, this.dialect, options.tablePrefix ?? "");
    const names = accessTableNames(options.tablePrefix);
    this.#keys = sql`${sql.identifier(names.apiKeys)}`;
    this.#bans = sql`${sql.identifier(names.accountBans)}`;
  }

  /**
   * The key of this id for the request path, or `null` when there is none
   * or its owner is banned: one query.
   *
   * @param id The key's id.
   * @returns The stored key.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async findApiKey(id: string): Promise<StoredApiKey | null> {
    await this.#gate();
    const rows = await this.#rows(
      sql`SELECT k.user_id, k.secret_hash, k.scopes, k.created_at, k.expires_at, k.last_used_at FROM ${this.#keys} k WHERE k.id = ${id} AND NOT EXISTS (SELECT 1 FROM ${this.#bans} b WHERE b.user_id = k.user_id)`,
    );
    if (rows.length === 0) return null;
    const row = rows[0];
    return {
      subject: String(row.user_id),
      hash: String(row.secret_hash),
      scopes: scopesOf(row.scopes),
      createdAt: Number(row.created_at),
      expiresAt: Number(row.expires_at),
      lastUsedAt: Number(row.last_used_at),
    };
  }

  /**
   * Stamps a key's last use (never moving it back).
   *
   * @param id The key's id.
   * @param at Unix milliseconds.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async recordApiKeyUse(id: string, at: number): Promise<void> {
    await this.#gate();
    try {
      await execute(
        this.#db,
        this.dialect,
        sql`UPDATE ${this.#keys} SET last_used_at = ${at} WHERE id = ${id} AND last_used_at < ${at}`,
      );
    } catch (err) {
      throw storeError("Recording an API key's use", err);
    }
  }

  /**
   * Adds a key.
   *
   * @param key The key's fields and hash.
   * @returns `false` when the id exists (mint another).
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async add(key: SQLNewApiKey): Promise<boolean> {
    await this.#gate();
    try {
      await execute(
        this.#db,
        this.dialect,
        sql`INSERT INTO ${this.#keys} (id, user_id, name, secret_hash, scopes, created_at, expires_at, last_used_at) VALUES (${key.id}, ${key.subject}, ${key.name}, ${key.hash}, ${
          key.scopes.join(" ")
        }, ${key.createdAt}, ${key.expiresAt}, ${key.lastUsedAt})`,
      );
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw storeError("Storing an API key", err);
    }
  }

  /**
   * A user's keys, newest first, expired ones included.
   *
   * @param subject The user.
   * @returns The keys, without their hashes.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async listFor(subject: string): Promise<SQLApiKeyRecord[]> {
    await this.#gate();
    const rows = await this.#rows(
      sql`SELECT ${COLUMNS} FROM ${this.#keys} WHERE user_id = ${subject} ORDER BY created_at DESC, id`,
    );
    return rows.map(toRecord);
  }

  /**
   * Revokes one of a user's keys.
   *
   * @param subject The user.
   * @param id The key's id.
   * @returns Whether a key of that user was removed.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async remove(subject: string, id: string): Promise<boolean> {
    await this.#gate();
    try {
      return await touched(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#keys} WHERE id = ${id} AND user_id = ${subject}`,
      ) === 1;
    } catch (err) {
      throw storeError("Revoking an API key", err);
    }
  }

  /**
   * Revokes every key of a user.
   *
   * @param subject The user.
   * @returns How many keys went.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async removeAllFor(subject: string): Promise<number> {
    await this.#gate();
    try {
      return await touched(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#keys} WHERE user_id = ${subject}`,
      );
    } catch (err) {
      throw storeError("Revoking API keys", err);
    }
  }

  async #rows(query: SQL): Promise<Row[]> {
    try {
      return await queryRows(this.#db, this.dialect, query);
    } catch (err) {
      throw storeError("Reading API keys", err);
    }
  }
}

function scopesOf(value: unknown): string[] {
  const text = String(value ?? "");
  return text === "" ? [] : text.split(" ");
}

function toRecord(row: Row): SQLApiKeyRecord {
  return {
    id: String(row.id),
    subject: String(row.user_id),
    name: String(row.name),
    scopes: scopesOf(row.scopes),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    lastUsedAt: Number(row.last_used_at),
  };
}
