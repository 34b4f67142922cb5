/**
 * `SQLBanStore`: accounts an operator banned, in SQL through drizzle-orm.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import {
  detectDialect,
  type DrizzleDatabase,
  type SQLDatabase,
  type SQLDialect,
} from "./dialect.ts";
import { execute, queryRows } from "./_exec.ts";
import { schemaGate } from "./_schema_gate.ts";
import { errorMentions, isUniqueViolation, storeError } from "./_errors.ts";
import { accessTableNames, type SQLStoreOptions } from "./table_names.ts";
import { touched } from "./_signin_exec.ts";

/** One ban. */
export interface SQLBanRecord {
  /** The banned account. */
  subject: string;
  /** Why, as the operator wrote it. */
  reason: string;
  /** The operator's subject id. */
  bannedBy: string;
  /** Unix milliseconds. */
  bannedAt: number;
}

/**
 * Bans in the `account_bans` table (migration `0002_api_keys_and_bans`, `migrate(db)`): one row
 * per banned account, removed with the account (`ON DELETE CASCADE`). The
 * API key store reads it in the same query as a key, so a ban stops every
 * key of the account at once.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLBanStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * assert.equal(await new SQLBanStore(db).find("user_1"), null);
 * db.$client.close();
 * ```
 */
export class SQLBanStore {
  #db: DrizzleDatabase;
  #table: SQL;
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
    this.#table = sql`${
      sql.identifier(accessTableNames(options.tablePrefix).accountBans)
    }`;
  }

  /**
   * Bans an account.
   *
   * @param ban Who, why, by whom, when.
   * @returns `false` when the account was banned already (or does not exist).
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async ban(ban: SQLBanRecord): Promise<boolean> {
    await this.#gate();
    try {
      await execute(
        this.#db,
        this.dialect,
        sql`INSERT INTO ${this.#table} (user_id, reason, banned_by, banned_at) VALUES (${ban.subject}, ${ban.reason}, ${ban.bannedBy}, ${ban.bannedAt})`,
      );
      return true;
    } catch (err) {
      // A duplicate, or a user who does not exist (the foreign key).
      if (
        isUniqueViolation(err) || errorMentions(err, "FOREIGN KEY") ||
        errorMentions(err, "foreign key")
      ) {
        return false;
      }
      throw storeError("Banning an account", err);
    }
  }

  /**
   * Lifts a ban.
   *
   * @param subject The account.
   * @returns Whether it was banned.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async unban(subject: string): Promise<boolean> {
    await this.#gate();
    try {
      return await touched(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#table} WHERE user_id = ${subject}`,
      ) === 1;
    } catch (err) {
      throw storeError("Lifting a ban", err);
    }
  }

  /**
   * An account's ban, or `null`.
   *
   * @param subject The account.
   * @returns The ban.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async find(subject: string): Promise<SQLBanRecord | null> {
    await this.#gate();
    let rows;
    try {
      rows = await queryRows(
        this.#db,
        this.dialect,
        sql`SELECT user_id, reason, banned_by, banned_at FROM ${this.#table} WHERE user_id = ${subject}`,
      );
    } catch (err) {
      throw storeError("Reading a ban", err);
    }
    if (rows.length === 0) return null;
    const row = rows[0];
    return {
      subject: String(row.user_id),
      reason: String(row.reason),
      bannedBy: String(row.banned_by),
      bannedAt: Number(row.banned_at),
    };
  }
}
