/**
 * `SQLPasskeyStore`: WebAuthn credentials in SQL through drizzle-orm.
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
import { queryRows, type Row } from "./_exec.ts";
import { schemaGate } from "./_schema_gate.ts";
import { isUniqueViolation, storeError } from "./_errors.ts";
import { signInTableNames, type SQLStoreOptions } from "./table_names.ts";
import { touched } from "./_signin_exec.ts";

/** One passkey (the shape of `@portcullis/passkeys`' `PasskeyRecord`). */
export interface SQLPasskeyRecord {
  /** The credential id, base64url. */
  credentialId: string;
  /** The user. */
  subject: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The signature counter last seen. */
  counter: number;
  /** The authenticator's transports. */
  transports: string[];
  /** The user's name for it. */
  name: string;
  /** Unix milliseconds of registration. */
  createdAt: number;
  /** Unix milliseconds of the last use; 0 before any. */
  lastUsedAt: number;
  /**
   * Whether the credential may be backed up (WebAuthn's BE flag), fixed for
   * its life; `undefined` when not known (a passkey stored before migration
   * 0003: its next use records it). Stored as 1 (eligible), 2 (not
   * eligible) or 0 (not known, the migration's default).
   */
  backupEligible?: boolean;
  /** Whether it was backed up (synced) at its last use (BS); default `false`. */
  backedUp?: boolean;
}

const COLUMNS = sql.raw(
  "credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at, backup_eligible, backed_up",
);

/**
 * The `PasskeyStore` of `@portcullis/passkeys` over a drizzle database.
 * The counter moves by compare-and-set (`UPDATE … WHERE counter = old`), so
 * of two concurrent sign-ins presenting one counter value only one
 * succeeds. Tables come from `migrate(db)` (the backup flags from
 * migration 0003).
 *
 * @example Usage
 * ```ts
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLPasskeyStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * await new SQLPasskeyStore(db).listFor("user_1"); // []
 * db.$client.close();
 * ```
 */
export class SQLPasskeyStore {
  #db: DrizzleDatabase;
  #table: SQL;
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
    this.#table = sql`${
      sql.identifier(signInTableNames(options.tablePrefix).passkeys)
    }`;
  }

  /** Adds a passkey; `false` when the credential id exists. */
  async add(r: SQLPasskeyRecord): Promise<boolean> {
    await this.#gate();
    try {
      await queryRows(
        this.#db,
        this.dialect,
        sql`INSERT INTO ${this.#table} (${COLUMNS}) VALUES (${r.credentialId}, ${r.subject}, ${r.publicKey}, ${r.counter}, ${
          r.transports.join(",")
        }, ${r.name}, ${r.createdAt}, ${r.lastUsedAt}, ${
          eligibleColumn(r.backupEligible)
        }, ${r.backedUp ? 1 : 0})`,
      );
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw storeError("Storing a passkey", err);
    }
  }

  /** A passkey by credential id, or `null`. */
  async find(credentialId: string): Promise<SQLPasskeyRecord | null> {
    await this.#gate();
    const rows = await this.#rows(
      sql`SELECT ${COLUMNS} FROM ${this.#table} WHERE credential_id = ${credentialId}`,
    );
    return rows.length === 0 ? null : toRecord(rows[0]);
  }

  /** A user's passkeys, oldest first. */
  async listFor(subject: string): Promise<SQLPasskeyRecord[]> {
    await this.#gate();
    const rows = await this.#rows(
      sql`SELECT ${COLUMNS} FROM ${this.#table} WHERE user_id = ${subject} ORDER BY created_at, credential_id`,
    );
    return rows.map(toRecord);
  }

  /**
   * Compare-and-set of the counter, stamping the use and, when given, the
   * backup state the authenticator reported with it; its backup
   * eligibility only when the row does not know it yet (0).
   */
  async updateCounter(
    credentialId: string,
    expected: number,
    next: number,
    usedAt: number,
    backedUp?: boolean,
    backupEligible?: boolean,
  ): Promise<boolean> {
    await this.#gate();
    const backup = backedUp === undefined
      ? sql``
      : sql`, backed_up = ${backedUp ? 1 : 0}`;
    const eligible = backupEligible === undefined
      ? sql``
      : sql`, backup_eligible = CASE WHEN backup_eligible = 0 THEN ${
        eligibleColumn(backupEligible)
      } ELSE backup_eligible END`;
    return await this.#touch(
      sql`UPDATE ${this.#table} SET counter = ${next}, last_used_at = ${usedAt}${backup}${eligible} WHERE credential_id = ${credentialId} AND counter = ${expected}`,
    ) === 1;
  }

  /** Renames a user's passkey. */
  async rename(
    subject: string,
    credentialId: string,
    name: string,
  ): Promise<boolean> {
    await this.#gate();
    return await this.#touch(
      sql`UPDATE ${this.#table} SET name = ${name} WHERE credential_id = ${credentialId} AND user_id = ${subject}`,
    ) === 1;
  }

  /** Removes a user's passkey. */
  async remove(subject: string, credentialId: string): Promise<boolean> {
    await this.#gate();
    return await this.#touch(
      sql`DELETE FROM ${this.#table} WHERE credential_id = ${credentialId} AND user_id = ${subject}`,
    ) === 1;
  }

  async #rows(query: SQL): Promise<Row[]> {
    try {
      return await queryRows(this.#db, this.dialect, query);
    } catch (err) {
      throw storeError("Reading passkeys", err);
    }
  }

  async #touch(query: SQL): Promise<number> {
    try {
      return await touched(this.#db, this.dialect, query);
    } catch (err) {
      throw storeError("Updating a passkey", err);
    }
  }
}

function toRecord(row: Row): SQLPasskeyRecord {
  const transports = String(row.transports);
  return {
    credentialId: String(row.credential_id),
    subject: String(row.user_id),
    publicKey: String(row.public_key),
    counter: Number(row.counter),
    transports: transports === "" ? [] : transports.split(","),
    name: String(row.name),
    createdAt: Number(row.created_at),
    lastUsedAt: Number(row.last_used_at),
    backupEligible: eligibleOf(row.backup_eligible),
    backedUp: Number(row.backed_up) === 1,
  };
}

/** BE as the column holds it: 1 eligible, 2 not, 0 not known. */
function eligibleColumn(eligible: boolean | undefined): number {
  return eligible === undefined ? 0 : eligible ? 1 : 2;
}

function eligibleOf(value: unknown): boolean | undefined {
  const n = Number(value);
  return n === 1 ? true : n === 2 ? false : undefined;
}
