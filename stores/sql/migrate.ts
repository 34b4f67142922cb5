/**
 * `migrate(db)`: applies the versioned migrations generated from the drizzle
 * schema (`stores/sql/migrations/<dialect>/`), keeping a journal table, and
 * `checkMigrations(db)`, which tells a database that lacks some of them.
 *
 * @module
 */
import {
  detectDialect,
  type DrizzleDatabase,
  type SQLDatabase,
  type SQLDialect,
} from "./dialect.ts";
import { checkTablePrefix, type SQLStoreOptions } from "./table_names.ts";
import { markChecked } from "./_checked.ts";
import { SQLMigrationError } from "./migration_error.ts";
import { migrationSQL, type SQLMigrationStep } from "./migration_sql.ts";
import { describe, type DialectSteps, journalName } from "./_migrate_steps.ts";
import { sqliteSteps } from "./_migrate_sqlite.ts";
import { mysqlSteps, postgresSteps } from "./_migrate_server.ts";

/**
 * Brings the database's tables up to this version, applying only the
 * migrations its journal (`<prefix>portcullis_migrations`) lacks, oldest
 * first, each in its own transaction (SQLite, libSQL, D1: one batch;
 * PostgreSQL: one transaction; MySQL/MariaDB: DDL commits on its own, so
 * each statement is safe to run again after a crash). Safe when several
 * instances start at once: they take turns (an advisory lock on PostgreSQL,
 * `GET_LOCK` on MySQL, SQLite's write lock plus the journal's primary key),
 * and the later ones find the work done. A database made by 0.2.0's
 * `migrate()` (no journal) is recognised: its tables are kept as they are
 * and recorded as the first migration, then the later ones run.
 *
 * On SQLite, foreign keys (every credential row belongs to a `users` row,
 * `ON DELETE CASCADE`) are enforced only on connections that ran
 * `PRAGMA foreign_keys = ON`; D1 always enforces them.
 *
 * @param db A drizzle database of any supported dialect.
 * @param options The table prefix, and the dialect if detection is not wanted.
 * @throws {SQLMigrationError} `DATABASE_NEWER` when the journal names a
 * migration this version does not know (it refuses to touch the database);
 * `MIGRATION_FAILED` when a step fails (its cause is the driver's error).
 *
 * @example Usage
 * ```ts
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLCredentialStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * await migrate(db); // nothing left to do
 * const credentials = new SQLCredentialStore(db);
 * db.$client.close();
 * ```
 */
export async function migrate(
  db: SQLDatabase,
  options: SQLStoreOptions = {},
): Promise<void> {
  const dialect = options.dialect ?? detectDialect(db);
  const prefix = checkTablePrefix(options.tablePrefix ?? "");
  const steps = migrationSQL(dialect, { tablePrefix: prefix });
  const io = dialectOf(db as DrizzleDatabase, dialect, prefix);
  const applied = await io.journal();
  refuseNewer(applied ?? [], steps, prefix);
  for (const step of steps) {
    if (applied?.includes(step.tag)) continue;
    try {
      await io.apply(step);
    } catch (err) {
      if (err instanceof SQLMigrationError) throw err;
      throw new SQLMigrationError(
        "MIGRATION_FAILED",
        `Migration ${step.tag} failed: ${describe(err)}`,
        [step.tag],
        { cause: err },
      );
    }
  }
  markChecked(db, prefix);
}

/**
 * Checks that the database has every migration this version needs, and
 * none it does not know: one query on the journal. The stores run it once,
 * on their first call, so that a database nobody migrated fails with this
 * error rather than an SQL error in the middle of a login.
 *
 * @param db A drizzle database of any supported dialect.
 * @param options The table prefix, and the dialect if detection is not wanted.
 * @throws {SQLMigrationError} `MIGRATIONS_PENDING` (naming them) or
 * `DATABASE_NEWER`.
 *
 * @example Usage
 * ```ts
 * import { drizzle } from "drizzle-orm/libsql";
 * import { checkMigrations, migrate } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * await checkMigrations(db); // passes
 * db.$client.close();
 * ```
 */
export async function checkMigrations(
  db: SQLDatabase,
  options: SQLStoreOptions = {},
): Promise<void> {
  const dialect = options.dialect ?? detectDialect(db);
  const prefix = checkTablePrefix(options.tablePrefix ?? "");
  const steps = migrationSQL(dialect, { tablePrefix: prefix });
  const applied =
    await dialectOf(db as DrizzleDatabase, dialect, prefix).journal() ?? [];
  refuseNewer(applied, steps, prefix);
  const pending = steps.map((s) => s.tag).filter((t) => !applied.includes(t));
  if (pending.length > 0) {
    throw new SQLMigrationError(
      "MIGRATIONS_PENDING",
      `Database lacks migrations ${pending.join(", ")} of @portcullis/sql${
        prefix ? ` (table prefix "${prefix}")` : ""
      }: run migrate(db) at start-up, or apply stores/sql/migrations/${dialect}/ and record them in ${
        journalName(prefix)
      }`,
      pending,
    );
  }
  markChecked(db, prefix);
}

function refuseNewer(
  applied: string[],
  steps: SQLMigrationStep[],
  prefix: string,
): void {
  const known = new Set(steps.map((s) => s.tag));
  const unknown = applied.filter((t) => !known.has(t));
  if (unknown.length > 0) {
    throw new SQLMigrationError(
      "DATABASE_NEWER",
      `Database was migrated by a newer @portcullis/sql: ${
        journalName(prefix)
      } holds ${
        unknown.join(", ")
      }, which this version does not know; upgrade the package (nothing was changed)`,
      unknown,
    );
  }
}

function dialectOf(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  prefix: string,
): DialectSteps {
  const journal = journalName(prefix);
  if (dialect === "postgresql") return postgresSteps(db, journal);
  if (dialect === "mysql") return mysqlSteps(db, journal);
  return sqliteSteps(db, journal);
}
