/**
 * How the SQL stores run a statement on each dialect's drivers. Internal to
 * `stores/sql`.
 *
 * The stores keep drizzle's `sql` template rather than its query builder:
 * they take a database of any of the three dialects, whose builders are
 * three unrelated types (each query would be written three times or through
 * `any`), and what this file normalises would stay anyway: rows matched by a
 * MySQL UPDATE (its "Rows matched", not "Changed"), MySQL's missing
 * `DELETE … RETURNING`, and transactions that synchronous SQLite drivers
 * cannot await. The row shapes below are the only normalisation left.
 *
 * @module
 */
import type { SQL } from "drizzle-orm";
import type { DrizzleDatabase as SQLDatabase, SQLDialect } from "./dialect.ts";

/** A row as the driver returned it, column name to value. */
export type Row = Record<string, unknown>;

interface SQLiteLike {
  all(query: SQL): unknown;
  run(query: SQL): unknown;
}
interface ExecuteLike {
  execute(query: SQL): Promise<unknown>;
  transaction<T>(fn: (tx: ExecuteLike) => Promise<T>): Promise<T>;
}

/**
 * Runs a statement and answers its rows (for SELECT or `… RETURNING`).
 * Normalises the shapes drivers return: an array (libSQL through drizzle,
 * `postgres`), `{ rows }` (PGlite, `pg`, Neon), `[rows, fields]` (`mysql2`).
 */
export async function queryRows(
  db: SQLDatabase,
  dialect: SQLDialect,
  query: SQL,
): Promise<Row[]> {
  if (dialect === "sqlite") {
    return (await (db as unknown as SQLiteLike).all(query)) as Row[];
  }
  const result = await (db as unknown as ExecuteLike).execute(query);
  if (dialect === "mysql") return (result as [Row[]])[0];
  return Array.isArray(result) ? result : (result as { rows: Row[] }).rows;
}

/**
 * Runs a statement whose rows are not wanted.
 */
export async function execute(
  db: SQLDatabase,
  dialect: SQLDialect,
  query: SQL,
): Promise<unknown> {
  if (dialect === "sqlite") {
    return await (db as unknown as SQLiteLike).run(query);
  }
  return await (db as unknown as ExecuteLike).execute(query);
}

/**
 * Runs a MySQL UPDATE or DELETE and answers how many rows it matched. MySQL
 * reports rows *changed* unless the connection asked for found rows, so the
 * "Rows matched" figure of the result's `info` is preferred.
 */
export async function mysqlMatched(
  db: SQLDatabase,
  query: SQL,
): Promise<number> {
  const result = await (db as unknown as ExecuteLike).execute(query);
  const header = (Array.isArray(result) ? result[0] : result) as {
    affectedRows?: number;
    info?: string;
  };
  const matched = /Rows matched:\s*(\d+)/.exec(header?.info ?? "");
  return matched ? Number(matched[1]) : Number(header?.affectedRows ?? 0);
}

/**
 * Runs statements all-or-nothing where the dialect allows: in one
 * transaction on PostgreSQL and MySQL. On SQLite they run one after another
 * (synchronous drivers cannot await inside a transaction, and a libSQL
 * `:memory:` transaction would need a second connection); callers that have
 * a drizzle batch (libSQL, D1) use it instead, with query builders, since
 * drizzle's D1 batch cannot take raw SQL with parameters.
 */
export async function runAtomically(
  db: SQLDatabase,
  dialect: SQLDialect,
  queries: SQL[],
): Promise<void> {
  if (dialect === "sqlite") {
    for (const q of queries) await (db as unknown as SQLiteLike).run(q);
    return;
  }
  await (db as unknown as ExecuteLike).transaction(async (tx) => {
    for (const q of queries) await tx.execute(q);
  });
}
