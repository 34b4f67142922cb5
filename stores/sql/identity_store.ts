/**
 * `SQLIdentityStore`: OpenID Connect identities (provider, provider
 * subject → user) in SQL through drizzle-orm.
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

/** One link (the shape of `@portcullis/oidc`'s `IdentityRecord`). */
export interface SQLIdentityRecord {
  /** The provider's id. */
  provider: string;
  /** The `sub` at that provider. */
  providerSubject: string;
  /** The application's user. */
  subject: string;
  /** The email the provider gave when the link was made. */
  email: string;
  /** Unix milliseconds of the link. */
  createdAt: number;
}

const COLUMNS = sql.raw(
  "provider, provider_subject, user_id, email, created_at",
);

/**
 * The `IdentityStore` of `@portcullis/oidc` over a drizzle database. The
 * primary key (provider, provider_subject) makes `link` atomic: of two
 * concurrent links of one provider user, exactly one succeeds. Tables come
 * from migration 0003 (`migrate(db)`).
 *
 * @example Usage
 * ```ts
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLIdentityStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * await new SQLIdentityStore(db).find("google", "123"); // null
 * db.$client.close();
 * ```
 */
export class SQLIdentityStore {
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
      sql.identifier(signInTableNames(options.tablePrefix).identities)
    }`;
  }

  /** The link of a provider's user, or `null`. */
  async find(
    provider: string,
    providerSubject: string,
  ): Promise<SQLIdentityRecord | null> {
    await this.#gate();
    const rows = await this.#rows(
      sql`SELECT ${COLUMNS} FROM ${this.#table} WHERE provider = ${provider} AND provider_subject = ${providerSubject}`,
    );
    return rows.length === 0 ? null : toRecord(rows[0]);
  }

  /** Adds a link; `false` when that provider user is already linked. */
  async link(record: SQLIdentityRecord): Promise<boolean> {
    await this.#gate();
    try {
      await queryRows(
        this.#db,
        this.dialect,
        sql`INSERT INTO ${this.#table} (${COLUMNS}) VALUES (${record.provider}, ${record.providerSubject}, ${record.subject}, ${record.email}, ${record.createdAt})`,
      );
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw storeError("Linking an identity", err);
    }
  }

  /** Every link of a user, oldest first. */
  async listFor(subject: string): Promise<SQLIdentityRecord[]> {
    await this.#gate();
    const rows = await this.#rows(
      sql`SELECT ${COLUMNS} FROM ${this.#table} WHERE user_id = ${subject} ORDER BY created_at`,
    );
    return rows.map(toRecord);
  }

  /** Removes one link of a user; answers whether it existed. */
  async unlink(
    subject: string,
    provider: string,
    providerSubject: string,
  ): Promise<boolean> {
    await this.#gate();
    try {
      return await touched(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#table} WHERE user_id = ${subject} AND provider = ${provider} AND provider_subject = ${providerSubject}`,
      ) === 1;
    } catch (err) {
      throw storeError("Unlinking an identity", err);
    }
  }

  async #rows(query: SQL): Promise<Row[]> {
    try {
      return await queryRows(this.#db, this.dialect, query);
    } catch (err) {
      throw storeError("Reading identities", err);
    }
  }
}

function toRecord(row: Row): SQLIdentityRecord {
  return {
    provider: String(row.provider),
    providerSubject: String(row.provider_subject),
    subject: String(row.user_id),
    email: String(row.email),
    createdAt: Number(row.created_at),
  };
}
