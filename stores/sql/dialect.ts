/**
 * Which SQL dialect a drizzle database speaks, and the few ways the SQL
 * stores run a statement on each. Internal to `stores/sql`.
 *
 * @module
 */
import { entityKind } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type { PgDatabase } from "drizzle-orm/pg-core";
import type { MySqlDatabase } from "drizzle-orm/mysql-core";

/**
 * The SQL dialects the stores speak: SQLite (libSQL, Turso, D1, Bun's and
 * better-sqlite3's drivers), PostgreSQL (`postgres`, PGlite, `pg`, Neon) and
 * MySQL/MariaDB (`mysql2`).
 */
export type SQLDialect = "sqlite" | "postgresql" | "mysql";

/**
 * Any drizzle database (or transaction) of the three dialects, whatever its
 * driver and schema: pass the object that `drizzle(...)` returned. The
 * stores need no drizzle schema. The type is structural (every drizzle
 * database has `_`), so this package's documentation does not pull in
 * drizzle's; the dialect is recognised at run time from drizzle's own class
 * markers, and anything else is refused with a `TypeError`.
 */
export interface SQLDatabase {
  /** drizzle's description of the database (schema, session). */
  readonly _: unknown;
}

/** The drizzle classes behind {@linkcode SQLDatabase}, for internal calls. */
export type DrizzleDatabase =
  // deno-lint-ignore no-explicit-any
  | BaseSQLiteDatabase<"async", any, any>
  // deno-lint-ignore no-explicit-any
  | BaseSQLiteDatabase<"sync", any, any>
  // deno-lint-ignore no-explicit-any
  | PgDatabase<any, any>
  // deno-lint-ignore no-explicit-any
  | MySqlDatabase<any, any, any>;

const KINDS: Record<string, SQLDialect> = {
  BaseSQLiteDatabase: "sqlite",
  SQLiteDialect: "sqlite",
  PgDatabase: "postgresql",
  PgDialect: "postgresql",
  MySqlDatabase: "mysql",
  MySqlDialect: "mysql",
};

/** Walks an object's class chain for a drizzle entity kind we know. */
function kindOf(value: unknown): SQLDialect | null {
  if (typeof value !== "object" || value === null) return null;
  let proto: unknown = Object.getPrototypeOf(value);
  while (proto && typeof proto === "object") {
    const ctor = (proto as { constructor?: Record<symbol, unknown> })
      .constructor;
    const kind = ctor && Object.hasOwn(ctor, entityKind)
      ? ctor[entityKind]
      : undefined;
    if (typeof kind === "string" && kind in KINDS) return KINDS[kind];
    proto = Object.getPrototypeOf(proto);
  }
  return null;
}

/**
 * Tells which dialect a drizzle database speaks, from drizzle's own class
 * markers (the database's class, or its `dialect` object, which also covers
 * `withReplicas(...)`).
 *
 * @param db A drizzle database or transaction.
 * @returns The dialect.
 * @throws {TypeError} When `db` is not a drizzle database of a known dialect.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { drizzle } from "drizzle-orm/libsql";
 * import { detectDialect } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * assert.equal(detectDialect(db), "sqlite");
 * db.$client.close();
 * ```
 */
export function detectDialect(db: SQLDatabase): SQLDialect {
  const found = kindOf(db) ??
    kindOf((db as { dialect?: unknown } | null)?.dialect);
  if (found) return found;
  throw new TypeError(
    "Expected a drizzle database (SQLite, PostgreSQL or MySQL): pass the object drizzle() returned, or give { dialect }",
  );
}
