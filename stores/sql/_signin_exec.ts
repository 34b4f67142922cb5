/**
 * Row-count helpers for the sign-in stores. Internal to `stores/sql`.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import type { DrizzleDatabase, SQLDialect } from "./dialect.ts";
import { execute, mysqlMatched, queryRows } from "./_exec.ts";

/**
 * Runs an UPDATE, DELETE or INSERT and answers how many rows it touched:
 * `RETURNING 1` on SQLite and PostgreSQL, the matched (or affected) count on
 * MySQL, which has no `RETURNING`.
 */
export async function touched(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  query: SQL,
): Promise<number> {
  if (dialect === "mysql") return await mysqlMatched(db, query);
  return (await queryRows(db, dialect, sql`${query} RETURNING 1 AS one`))
    .length;
}

/** Runs statements one after another (no rows wanted). */
export async function runAll(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  queries: SQL[],
): Promise<void> {
  for (const q of queries) await execute(db, dialect, q);
}
