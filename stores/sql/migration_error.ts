/**
 * `SQLMigrationError`: the database's schema does not match this version of
 * `@portcullis/sql`.
 *
 * @module
 */
/** What went wrong with the database's migrations. */
export type SQLMigrationErrorCode =
  /** The journal names migrations this code does not know: the database was migrated by a newer version. */
  | "DATABASE_NEWER"
  /** Migrations this code needs have not been applied: run `migrate(db)`. */
  | "MIGRATIONS_PENDING"
  /** A migration failed; nothing of that step was kept (except on MySQL, whose DDL is not transactional: see the docs). */
  | "MIGRATION_FAILED";

/**
 * The database's schema does not match this version of `@portcullis/sql`:
 * the journal is ahead of the code, behind it, or a step failed. `code`
 * says which and `migrations` names the steps concerned.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { drizzle } from "drizzle-orm/libsql";
 * import { checkMigrations, SQLMigrationError } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await assert.rejects(checkMigrations(db), (err) =>
 *   err instanceof SQLMigrationError && err.code === "MIGRATIONS_PENDING");
 * db.$client.close();
 * ```
 */
export class SQLMigrationError extends Error {
  /** What went wrong. */
  readonly code: SQLMigrationErrorCode;
  /** The migrations concerned: pending ones, unknown ones, or the one that failed. */
  readonly migrations: readonly string[];

  /**
   * Makes the error.
   *
   * @param code What went wrong.
   * @param message The message, naming the migrations and what to do.
   * @param migrations The migrations concerned.
   * @param options The cause.
   */
  constructor(
    code: SQLMigrationErrorCode,
    message: string,
    migrations: readonly string[],
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "SQLMigrationError";
    this.code = code;
    this.migrations = migrations;
  }
}
