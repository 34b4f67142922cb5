/**
 * `migrate(db)`: applies the versioned migrations generated from the drizzle
 * schema (`stores/sql/migrations/<dialect>/`), keeping a journal table, and
 * `checkMigrations(db)`, which tells a database that lacks some of them.
 *
 * @module
 */
import { sql } from "drizzle-orm";
import {
  detectDialect,
  type DrizzleDatabase,
  type SQLDatabase,
  type SQLDialect,
} from "./dialect.ts";
import { execute, queryRows } from "./_exec.ts";
import { type EmbeddedMigration, MIGRATIONS } from "./_migrations.ts";
import { checkTablePrefix, type SQLStoreOptions } from "./table_names.ts";
import { markChecked } from "./_checked.ts";

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

/** One migration as `migrationSQL` gives it. */
export interface SQLMigrationStep {
  /** Its tag, `NNNN_name`: the journal's key. */
  tag: string;
  /** SHA-256 of the migration's unprefixed SQL file, hex. */
  hash: string;
  /** The statements, for the prefix asked, without trailing semicolons. */
  statements: string[];
}

/**
 * The migrations of one dialect, oldest first, with the table prefix
 * applied: what `migrate(db)` runs, for teams that apply SQL with their own
 * tool. (The files in `stores/sql/migrations/<dialect>/` are the same for
 * the empty prefix.) Record each applied tag in the journal table
 * `<prefix>portcullis_migrations` (`id`, `hash`, `applied_at`), or the
 * stores will report the migrations as pending.
 *
 * @param dialect The dialect.
 * @param options The table prefix.
 * @returns The migrations.
 * @throws {TypeError} When the dialect is unknown or the prefix invalid.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { migrationSQL } from "@portcullis/sql";
 * const [first] = migrationSQL("postgresql", { tablePrefix: "auth_" });
 * assert.equal(first.tag, "0000_v0_2_0");
 * assert.ok(first.statements.some((s) => s.includes('"auth_users"')));
 * ```
 */
export function migrationSQL(
  dialect: SQLDialect,
  options: Pick<SQLStoreOptions, "tablePrefix"> = {},
): SQLMigrationStep[] {
  const all = migrationsOf(dialect);
  const rename = renamer(
    dialect,
    all,
    checkTablePrefix(options.tablePrefix ?? ""),
  );
  return all.map((m) => ({
    tag: m.tag,
    hash: m.hash,
    statements: m.sql.split("--> statement-breakpoint")
      .map((s) => s.trim().replace(/;$/, ""))
      .filter((s) => s.length > 0)
      .map(rename),
  }));
}

function migrationsOf(dialect: SQLDialect): readonly EmbeddedMigration[] {
  if (dialect !== "sqlite" && dialect !== "postgresql" && dialect !== "mysql") {
    throw new TypeError(
      `Unknown SQL dialect: received "${dialect}" (expected "sqlite", "postgresql" or "mysql")`,
    );
  }
  return MIGRATIONS[dialect];
}

/**
 * Prefixes every table, index and constraint name the migrations create
 * (read from the SQL itself), wherever it appears quoted.
 */
function renamer(
  dialect: SQLDialect,
  all: readonly EmbeddedMigration[],
  prefix: string,
): (statement: string) => string {
  if (prefix === "") return (s) => s;
  const q = dialect === "postgresql" ? '"' : "`";
  const names = new Set<string>();
  const made =
    /(?:CREATE TABLE|CREATE (?:UNIQUE )?INDEX|CONSTRAINT|RENAME TO) [`"](\w+)[`"]/g;
  for (const m of all) {
    for (const match of m.sql.matchAll(made)) names.add(match[1]);
  }
  const quoted = /([`"])(\w+)\1/g;
  return (s) =>
    s.replace(
      quoted,
      (whole, _q, name: string) =>
        names.has(name) ? `${q}${prefix}${name}${q}` : whole,
    );
}

/** The journal table's name for a prefix. */
function journalName(prefix: string): string {
  return `${prefix}portcullis_migrations`;
}

/** How `migrate` talks to one dialect. */
interface Dialect {
  /** The tables of the current schema or database. */
  tables(): Promise<Set<string>>;
  /** The journal's tags, or `null` when there is no journal table. */
  journal(): Promise<string[] | null>;
  /**
   * Applies one step, all-or-nothing where the dialect allows, unless
   * another instance applied it first; answers whether this call did.
   */
  apply(step: SQLMigrationStep): Promise<boolean>;
}

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

function describe(err: unknown): string {
  let e: unknown = err;
  for (let i = 0; i < 8; i++) {
    const next = (e as { cause?: unknown } | null)?.cause;
    if (next === undefined || next === null) break;
    e = next;
  }
  const inner = e as { code?: unknown; message?: unknown } | null;
  const code = inner?.code !== undefined ? `${String(inner.code)} ` : "";
  const message = typeof inner?.message === "string"
    ? inner.message.slice(0, 300)
    : String(e);
  return `${code}${message}`.trim();
}

/** The names of the tables a CREATE TABLE / CREATE INDEX statement touches. */
function createdTable(statement: string): string | null {
  return /^CREATE TABLE [`"](\w+)[`"]/.exec(statement)?.[1] ?? null;
}
function indexedTable(statement: string): string | null {
  return /^CREATE (?:UNIQUE )?INDEX [`"]\w+[`"] ON [`"](\w+)[`"]/.exec(
    statement,
  )?.[1] ?? null;
}

/**
 * The statements of a step minus what already exists: a database made by
 * 0.2.0's `migrate()` has the first step's tables (and their indexes), so
 * only the missing ones are created and the step is then recorded.
 */
async function pendingStatements(
  io: Pick<Dialect, "tables">,
  step: SQLMigrationStep,
): Promise<string[]> {
  if (!step.tag.startsWith("0000_")) return step.statements;
  const existing = await io.tables();
  if (existing.size === 0) return step.statements;
  return step.statements.filter((s) => {
    const table = createdTable(s) ?? indexedTable(s);
    return table === null || !existing.has(table);
  });
}

const BUSY = /SQLITE_BUSY|database is locked/i;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function dialectOf(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  prefix: string,
): Dialect {
  const journal = journalName(prefix);
  if (dialect === "postgresql") return postgres(db, journal);
  if (dialect === "mysql") return mysql(db, journal);
  return sqlite(db, journal);
}

function sqlite(db: DrizzleDatabase, journal: string): Dialect {
  const q = (name: string) => `"${name}"`;
  const lite = db as unknown as {
    run(query: unknown): unknown;
    batch?(items: unknown[]): Promise<unknown>;
  };
  const self: Dialect = {
    async tables() {
      const rows = await queryRows(
        db,
        "sqlite",
        sql`SELECT name FROM sqlite_master WHERE type = 'table'`,
      );
      return new Set(rows.map((r) => String(r.name)));
    },
    async journal() {
      if (!(await self.tables()).has(journal)) return null;
      const rows = await queryRows(
        db,
        "sqlite",
        sql.raw(`SELECT id FROM ${q(journal)} ORDER BY id`),
      );
      return rows.map((r) => String(r.id));
    },
    async apply(step) {
      // The journal row goes first: its primary key turns a second
      // instance's attempt into a conflict that rolls its whole batch back.
      for (let attempt = 0;; attempt++) {
        try {
          await execute(
            db,
            "sqlite",
            sql.raw(
              `CREATE TABLE IF NOT EXISTS ${
                q(journal)
              } ("id" TEXT PRIMARY KEY NOT NULL, "hash" TEXT NOT NULL, "applied_at" INTEGER NOT NULL)`,
            ),
          );
          if ((await self.journal())?.includes(step.tag)) return false;
          const statements = [
            `INSERT INTO ${q(journal)} ("id", "hash", "applied_at") VALUES ('${
              literal(step.tag)
            }', '${literal(step.hash)}', ${Date.now()})`,
            ...await pendingStatements(self, step),
          ];
          if (typeof lite.batch === "function") {
            await lite.batch(statements.map((s) => lite.run(sql.raw(s))));
          } else {
            await inTransaction(lite, statements);
          }
          return true;
        } catch (err) {
          // Another instance holds the write lock, or won the race: wait,
          // then look at the journal again.
          if (attempt < 200 && BUSY.test(describe(err))) {
            await sleep(50 + Math.random() * 100);
            continue;
          }
          if ((await self.journal())?.includes(step.tag)) return false;
          throw err;
        }
      }
    },
  };
  return self;
}

/** BEGIN IMMEDIATE … COMMIT on a driver without batches (bun:sqlite, better-sqlite3). */
async function inTransaction(
  lite: { run(query: unknown): unknown },
  statements: string[],
): Promise<void> {
  await lite.run(sql.raw("BEGIN IMMEDIATE"));
  try {
    for (const s of statements) await lite.run(sql.raw(s));
    await lite.run(sql.raw("COMMIT"));
  } catch (err) {
    try {
      await lite.run(sql.raw("ROLLBACK"));
    } catch {
      // Already rolled back by the error.
    }
    throw err;
  }
}

/** Our tags and hashes are `[0-9a-z_]`; refuse anything else outright. */
function literal(value: string): string {
  if (!/^[0-9A-Za-z_]+$/.test(value)) {
    throw new TypeError(`Unexpected migration tag: received "${value}"`);
  }
  return value;
}

interface Transacting {
  execute(query: unknown): Promise<unknown>;
  transaction<T>(fn: (tx: Transacting) => Promise<T>): Promise<T>;
}

function postgres(db: DrizzleDatabase, journal: string): Dialect {
  const q = (name: string) => `"${name}"`;
  const tablesOf = async (on: DrizzleDatabase) => {
    const rows = await queryRows(
      on,
      "postgresql",
      sql`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`,
    );
    return new Set(rows.map((r) => String(r.table_name)));
  };
  const journalOf = async (on: DrizzleDatabase) => {
    if (!(await tablesOf(on)).has(journal)) return null;
    const rows = await queryRows(
      on,
      "postgresql",
      sql.raw(`SELECT id FROM ${q(journal)} ORDER BY id`),
    );
    return rows.map((r) => String(r.id));
  };
  return {
    tables: () => tablesOf(db),
    journal: () => journalOf(db),
    async apply(step) {
      return await (db as unknown as Transacting).transaction(async (tx) => {
        const on = tx as unknown as DrizzleDatabase;
        // One instance at a time, per schema and prefix; released at COMMIT.
        await tx.execute(
          sql`SELECT pg_advisory_xact_lock(hashtext(current_schema() || ${
            "." + journal
          }))`,
        );
        await tx.execute(
          sql.raw(
            `CREATE TABLE IF NOT EXISTS ${
              q(journal)
            } ("id" text PRIMARY KEY NOT NULL, "hash" text NOT NULL, "applied_at" bigint NOT NULL)`,
          ),
        );
        if ((await journalOf(on))?.includes(step.tag)) return false;
        for (
          const s of await pendingStatements(
            { tables: () => tablesOf(on) },
            step,
          )
        ) {
          await tx.execute(sql.raw(s));
        }
        await tx.execute(
          sql`INSERT INTO ${
            sql.identifier(journal)
          } ("id", "hash", "applied_at") VALUES (${step.tag}, ${step.hash}, ${Date.now()})`,
        );
        return true;
      });
    },
  };
}

/**
 * MySQL error numbers that mean a re-run statement's work is already done
 * (its DDL committed before a crash): table, index, column or constraint
 * exists. MariaDB reports a foreign key that exists as 1005 with InnoDB's
 * errno 121.
 */
const ALREADY_DONE = new Set([1050, 1060, 1061, 1826, 1022]);

function alreadyDone(err: unknown): boolean {
  const errno = chainErrno(err);
  if (errno === undefined) return false;
  return ALREADY_DONE.has(errno) ||
    (errno === 1005 && /errno: 121\b/.test(describe(err)));
}

function mysql(db: DrizzleDatabase, journal: string): Dialect {
  const q = (name: string) => `\`${name}\``;
  const tablesOf = async (on: DrizzleDatabase) => {
    const rows = await queryRows(
      on,
      "mysql",
      sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()`,
    );
    return new Set(rows.map((r) => String(r.name ?? r.NAME ?? r.TABLE_NAME)));
  };
  const journalOf = async (on: DrizzleDatabase) => {
    if (!(await tablesOf(on)).has(journal)) return null;
    const rows = await queryRows(
      on,
      "mysql",
      sql.raw(`SELECT id FROM ${q(journal)} ORDER BY id`),
    );
    return rows.map((r) => String(r.id));
  };
  return {
    tables: () => tablesOf(db),
    journal: () => journalOf(db),
    async apply(step) {
      // A transaction only to hold one connection of the pool for the lock:
      // MySQL commits each DDL statement on its own.
      return await (db as unknown as Transacting).transaction(async (tx) => {
        const on = tx as unknown as DrizzleDatabase;
        const lock = `portcullis:${journal}`;
        const got = await queryRows(
          on,
          "mysql",
          sql`SELECT GET_LOCK(CONCAT(DATABASE(), ${":" + lock}), 60) AS got`,
        );
        if (Number(got[0]?.got) !== 1) {
          throw new Error("Timed out waiting for another instance's migration");
        }
        try {
          await tx.execute(
            sql.raw(
              `CREATE TABLE IF NOT EXISTS ${
                q(journal)
              } (\`id\` VARCHAR(255) NOT NULL, \`hash\` VARCHAR(64) NOT NULL, \`applied_at\` BIGINT NOT NULL, PRIMARY KEY (\`id\`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
            ),
          );
          if ((await journalOf(on))?.includes(step.tag)) return false;
          const statements = await pendingStatements(
            { tables: () => tablesOf(on) },
            step,
          );
          for (const s of statements) {
            try {
              await tx.execute(sql.raw(s));
            } catch (err) {
              if (!alreadyDone(err)) throw err;
            }
          }
          await tx.execute(
            sql`INSERT INTO ${
              sql.identifier(journal)
            } (\`id\`, \`hash\`, \`applied_at\`) VALUES (${step.tag}, ${step.hash}, ${Date.now()})`,
          );
          return true;
        } finally {
          await tx.execute(
            sql`SELECT RELEASE_LOCK(CONCAT(DATABASE(), ${":" + lock}))`,
          );
        }
      });
    },
  };
}

function chainErrno(err: unknown): number | undefined {
  let e: unknown = err;
  for (let i = 0; i < 8 && typeof e === "object" && e !== null; i++) {
    const errno = (e as { errno?: unknown }).errno;
    if (typeof errno === "number") return errno;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
