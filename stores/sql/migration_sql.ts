/**
 * `migrationSQL(dialect, { tablePrefix })`: the migrations generated from the
 * drizzle schema, as statements, with a table prefix applied.
 *
 * @module
 */
import type { SQLDialect } from "./dialect.ts";
import { type EmbeddedMigration, MIGRATIONS } from "./_migrations.ts";
import { checkTablePrefix, type SQLStoreOptions } from "./table_names.ts";

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
