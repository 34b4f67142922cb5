/**
 * `SQLVerificationTokenStore`: single-use tokens (email verification, magic
 * links) in a SQL table through drizzle-orm, with an atomic consume.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import type {
  VerificationTokenRecord,
  VerificationTokenStore,
} from "@portcullis/auth/verification";
import {
  detectDialect,
  type DrizzleDatabase,
  type SQLDatabase,
  type SQLDialect,
} from "./dialect.ts";
import {
  execute,
  mysqlMatched,
  queryRows,
  type Row,
  runAtomically,
} from "./_exec.ts";
import { schemaGate } from "./_schema_gate.ts";
import { storeError } from "./_errors.ts";
import { batchPut, canBatch } from "./_sqlite_batch.ts";
import { type SQLStoreOptions, tableNames } from "./table_names.ts";

const TOKEN_COLUMNS = sql.raw(
  "token_hash, purpose, subject, email, expires_at, created_at",
);

function toRecord(row: Row): VerificationTokenRecord {
  return {
    tokenHash: String(row.token_hash),
    purpose: String(row.purpose),
    subject: String(row.subject),
    email: String(row.email),
    expiresAt: Number(row.expires_at),
    createdAt: Number(row.created_at),
  };
}

/**
 * A {@linkcode VerificationTokenStore} over a drizzle database, for every
 * dialect `SQLCredentialStore` speaks. Only token hashes are stored, never
 * tokens.
 *
 * `consume` is one atomic statement where the dialect has one
 * (`DELETE … RETURNING` on SQLite ≥ 3.35 and PostgreSQL); on MySQL and
 * MariaDB it reads the row and then deletes it, and only the caller whose
 * `DELETE` removed the row gets the record. Either way, of two concurrent
 * redemptions of one token exactly one succeeds. Expired tokens are
 * returned like others, with their `expiresAt`: the caller compares it with
 * its clock (and the token is gone either way).
 *
 * `put` deletes the subject's earlier tokens of the purpose and inserts the
 * new one in one batch (libSQL, D1) or transaction (PostgreSQL, MySQL); on
 * synchronous SQLite drivers the two statements run one after the other.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLVerificationTokenStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * const tokens = new SQLVerificationTokenStore(db);
 * await tokens.put({ tokenHash: "ab", purpose: "verify-email", subject: "u1", email: "a@example.com", expiresAt: Date.now() + 86_400_000, createdAt: Date.now() });
 * await tokens.consume("ab", "verify-email"); // the record, once
 * assert.equal(await tokens.consume("ab", "verify-email"), null);
 * db.$client.close();
 * ```
 */
export class SQLVerificationTokenStore implements VerificationTokenStore {
  #db: DrizzleDatabase;
  #table: SQL;
  #batchPut?: (
    db: DrizzleDatabase,
    record: VerificationTokenRecord,
  ) => Promise<void>;

  /** The dialect the store speaks, detected or given. */
  readonly dialect: SQLDialect;
  #gate: () => Promise<void> | undefined;

  /**
   * Makes the store over a drizzle database; the dialect is detected unless
   * `options.dialect` names it. The table must exist (see `migrate`).
   *
   * @param db A drizzle database of any supported dialect.
   * @param options The table prefix, and the dialect if detection is not wanted.
   * @throws {TypeError} When `db` is not a drizzle database or the prefix is invalid.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { SQLVerificationTokenStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * const store = new SQLVerificationTokenStore(db, { tablePrefix: "auth_" });
   * assert.equal(store.dialect, "sqlite");
   * db.$client.close();
   * ```
   */
  constructor(db: SQLDatabase, options: SQLStoreOptions = {}) {
    this.#db = db as DrizzleDatabase;
    this.dialect = options.dialect ?? detectDialect(db);
    this.#gate = schemaGate(db, this.dialect, options.tablePrefix ?? "");
    const name = tableNames(options.tablePrefix).verificationTokens;
    this.#table = sql`${sql.identifier(name)}`;
    if (this.dialect === "sqlite" && canBatch(this.#db)) {
      this.#batchPut = batchPut(name);
    }
  }

  /**
   * Stores a token and removes every earlier token of the same subject and
   * purpose, so that only the newest link works.
   *
   * @param record The token's record.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the write fails.
   *
   * @example Usage
   * ```ts
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLVerificationTokenStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * await new SQLVerificationTokenStore(db).put({ tokenHash: "ab", purpose: "verify-email", subject: "u1", email: "a@example.com", expiresAt: 1, createdAt: 0 });
   * db.$client.close();
   * ```
   */
  async put(record: VerificationTokenRecord): Promise<void> {
    await this.#gate();
    try {
      if (this.#batchPut) return await this.#batchPut(this.#db, record);
      await runAtomically(this.#db, this.dialect, [
        this.#deleteFor(record.subject, record.purpose),
        sql`INSERT INTO ${this.#table} (${TOKEN_COLUMNS}) VALUES (${record.tokenHash}, ${record.purpose}, ${record.subject}, ${record.email}, ${record.expiresAt}, ${record.createdAt})`,
      ]);
    } catch (err) {
      throw storeError("Storing a single-use token", err);
    }
  }

  /**
   * Removes and returns the record of a token of the given purpose,
   * atomically. A token of another purpose is left alone.
   *
   * @param tokenHash The hex SHA-256 of the presented token.
   * @param purpose The purpose the caller expects.
   * @returns The record, or `null` when unknown, used or of another purpose.
   * Expiry is checked by the caller.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLVerificationTokenStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * assert.equal(await new SQLVerificationTokenStore(db).consume("ab", "verify-email"), null);
   * db.$client.close();
   * ```
   */
  async consume(
    tokenHash: string,
    purpose: string,
  ): Promise<VerificationTokenRecord | null> {
    await this.#gate();
    const where = sql`token_hash = ${tokenHash} AND purpose = ${purpose}`;
    try {
      if (this.dialect === "mysql") {
        // MySQL has no DELETE … RETURNING. Token rows are never updated, so
        // the row read here is the row deleted below, and only the caller
        // whose DELETE removed it wins.
        const rows = await queryRows(
          this.#db,
          this.dialect,
          sql`SELECT ${TOKEN_COLUMNS} FROM ${this.#table} WHERE ${where}`,
        );
        if (rows.length === 0) return null;
        const removed = await mysqlMatched(
          this.#db,
          sql`DELETE FROM ${this.#table} WHERE ${where}`,
        );
        return removed === 1 ? toRecord(rows[0]) : null;
      }
      const rows = await queryRows(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#table} WHERE ${where} RETURNING ${TOKEN_COLUMNS}`,
      );
      return rows.length > 0 ? toRecord(rows[0]) : null;
    } catch (err) {
      throw storeError("Consuming a single-use token", err);
    }
  }

  /**
   * Reads the record of a token of the given purpose without consuming it
   * (for a page that only shows a form).
   *
   * @param tokenHash The hex SHA-256 of the presented token.
   * @param purpose The purpose the caller expects.
   * @returns The record, or `null` when unknown, used or of another purpose.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLVerificationTokenStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * assert.equal(await new SQLVerificationTokenStore(db).find("ab", "verify-email"), null);
   * db.$client.close();
   * ```
   */
  async find(
    tokenHash: string,
    purpose: string,
  ): Promise<VerificationTokenRecord | null> {
    await this.#gate();
    try {
      const rows = await queryRows(
        this.#db,
        this.dialect,
        sql`SELECT ${TOKEN_COLUMNS} FROM ${this.#table} WHERE token_hash = ${tokenHash} AND purpose = ${purpose}`,
      );
      return rows.length > 0 ? toRecord(rows[0]) : null;
    } catch (err) {
      throw storeError("Reading a single-use token", err);
    }
  }

  /**
   * Removes every token of a subject and purpose.
   *
   * @param subject The subject.
   * @param purpose The purpose.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLVerificationTokenStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * await new SQLVerificationTokenStore(db).deleteFor("u1", "verify-email");
   * db.$client.close();
   * ```
   */
  async deleteFor(subject: string, purpose: string): Promise<void> {
    await this.#gate();
    try {
      await execute(this.#db, this.dialect, this.#deleteFor(subject, purpose));
    } catch (err) {
      throw storeError("Deleting single-use tokens", err);
    }
  }

  /**
   * Removes tokens that expired before `before`; a housekeeping call for a
   * scheduled job. Optional: expired tokens are refused by their callers
   * anyway.
   *
   * @param before Unix milliseconds; tokens with `expiresAt < before` go.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLVerificationTokenStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * await new SQLVerificationTokenStore(db).deleteExpired(Date.now());
   * db.$client.close();
   * ```
   */
  async deleteExpired(before: number): Promise<void> {
    await this.#gate();
    try {
      await execute(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#table} WHERE expires_at < ${before}`,
      );
    } catch (err) {
      throw storeError("Deleting expired single-use tokens", err);
    }
  }

  #deleteFor(subject: string, purpose: string): SQL {
    return sql`DELETE FROM ${this.#table} WHERE subject = ${subject} AND purpose = ${purpose}`;
  }
}
