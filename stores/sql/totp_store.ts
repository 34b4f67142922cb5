/**
 * `SQLTotpStore`: TOTP enrolments and recovery codes in SQL through
 * drizzle-orm, with the atomic updates `@portcullis/totp` needs.
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
import { queryRows, type Row, runAtomically } from "./_exec.ts";
import { schemaGate } from "./_schema_gate.ts";
import { storeError } from "./_errors.ts";
import { signInTableNames, type SQLStoreOptions } from "./table_names.ts";
import { touched } from "./_signin_exec.ts";

/** One TOTP enrolment (the shape of `@portcullis/totp`'s `TotpRecord`). */
export interface SQLTotpRecord {
  /** The user's subject id. */
  subject: string;
  /** The sealed secret. */
  secret: string;
  /** Unix milliseconds of confirmation; `0` while pending. */
  enabledAt: number;
  /** The last accepted time step. */
  lastStep: number;
  /** Unix milliseconds of the enrolment's start. */
  createdAt: number;
}

/**
 * The `TotpStore` of `@portcullis/totp` over a drizzle database (SQLite,
 * libSQL, D1, PostgreSQL, PGlite, MySQL, MariaDB). Accepting a code is one
 * conditional `UPDATE … WHERE last_step < step`, so of two concurrent uses
 * of one time step exactly one wins; a recovery code is one `DELETE`, with
 * the same guarantee. Tables come from migration 0003 (`migrate(db)`).
 *
 * @example Usage
 * ```ts
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLTotpStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * await new SQLTotpStore(db).find("user_1"); // null
 * db.$client.close();
 * ```
 */
export class SQLTotpStore {
  #db: DrizzleDatabase;
  #totp: SQL;
  #codes: SQL;
  /** The dialect the store speaks, detected or given. */
  readonly dialect: SQLDialect;
  #gate: () => Promise<void> | undefined;

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
    const t = signInTableNames(options.tablePrefix);
    this.#totp = sql`${sql.identifier(t.totp)}`;
    this.#codes = sql`${sql.identifier(t.recoveryCodes)}`;
  }

  /** The user's record, or `null`. */
  async find(subject: string): Promise<SQLTotpRecord | null> {
    await this.#gate();
    const rows = await this.#rows(
      "Reading a TOTP enrolment",
      sql`SELECT user_id, secret, enabled_at, last_step, created_at FROM ${this.#totp} WHERE user_id = ${subject}`,
    );
    return rows.length === 0 ? null : toRecord(rows[0]);
  }

  /** Stores a pending enrolment unless an enabled one exists. */
  async savePending(record: SQLTotpRecord): Promise<boolean> {
    await this.#gate();
    try {
      await runAtomically(this.#db, this.dialect, [
        sql`DELETE FROM ${this.#totp} WHERE user_id = ${record.subject} AND enabled_at = 0`,
      ]);
      const insert = this.dialect === "mysql"
        ? sql`INSERT IGNORE INTO ${this.#totp} (user_id, secret, enabled_at, last_step, created_at) VALUES (${record.subject}, ${record.secret}, 0, 0, ${record.createdAt})`
        : sql`INSERT INTO ${this.#totp} (user_id, secret, enabled_at, last_step, created_at) VALUES (${record.subject}, ${record.secret}, 0, 0, ${record.createdAt}) ON CONFLICT (user_id) DO NOTHING`;
      return (await touched(this.#db, this.dialect, insert)) === 1;
    } catch (err) {
      throw storeError("Storing a TOTP enrolment", err);
    }
  }

  /** Turns a pending enrolment holding `secret` on, with `step` used. */
  async enable(
    subject: string,
    secret: string,
    step: number,
    at: number,
  ): Promise<boolean> {
    await this.#gate();
    return await this.#touch(
      "Enabling TOTP",
      sql`UPDATE ${this.#totp} SET enabled_at = ${at}, last_step = ${step} WHERE user_id = ${subject} AND enabled_at = 0 AND secret = ${secret}`,
    ) === 1;
  }

  /** Records a used time step, only if newer than the last one. */
  async useStep(subject: string, step: number): Promise<boolean> {
    await this.#gate();
    return await this.#touch(
      "Accepting a TOTP code",
      sql`UPDATE ${this.#totp} SET last_step = ${step} WHERE user_id = ${subject} AND enabled_at > 0 AND last_step < ${step}`,
    ) === 1;
  }

  /** Removes the enrolment and the recovery codes. */
  async remove(subject: string): Promise<void> {
    await this.#gate();
    try {
      await runAtomically(this.#db, this.dialect, [
        sql`DELETE FROM ${this.#codes} WHERE user_id = ${subject}`,
        sql`DELETE FROM ${this.#totp} WHERE user_id = ${subject}`,
      ]);
    } catch (err) {
      throw storeError("Removing a TOTP enrolment", err);
    }
  }

  /** Replaces the recovery codes by these hashes. */
  async replaceRecoveryCodes(
    subject: string,
    hashes: readonly string[],
    at: number,
  ): Promise<void> {
    await this.#gate();
    try {
      await runAtomically(this.#db, this.dialect, [
        sql`DELETE FROM ${this.#codes} WHERE user_id = ${subject}`,
        ...hashes.map((h) =>
          sql`INSERT INTO ${this.#codes} (user_id, code_hash, created_at) VALUES (${subject}, ${h}, ${at})`
        ),
      ]);
    } catch (err) {
      throw storeError("Storing recovery codes", err);
    }
  }

  /** Deletes one recovery code; answers whether it existed. */
  async consumeRecoveryCode(subject: string, hash: string): Promise<boolean> {
    await this.#gate();
    return await this.#touch(
      "Consuming a recovery code",
      sql`DELETE FROM ${this.#codes} WHERE user_id = ${subject} AND code_hash = ${hash}`,
    ) === 1;
  }

  /** How many recovery codes are left. */
  async countRecoveryCodes(subject: string): Promise<number> {
    await this.#gate();
    const rows = await this.#rows(
      "Counting recovery codes",
      sql`SELECT COUNT(*) AS n FROM ${this.#codes} WHERE user_id = ${subject}`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  async #rows(what: string, query: SQL): Promise<Row[]> {
    try {
      return await queryRows(this.#db, this.dialect, query);
    } catch (err) {
      throw storeError(what, err);
    }
  }

  async #touch(what: string, query: SQL): Promise<number> {
    try {
      return await touched(this.#db, this.dialect, query);
    } catch (err) {
      throw storeError(what, err);
    }
  }
}

function toRecord(row: Row): SQLTotpRecord {
  return {
    subject: String(row.user_id),
    secret: String(row.secret),
    enabledAt: Number(row.enabled_at),
    lastStep: Number(row.last_step),
    createdAt: Number(row.created_at),
  };
}
