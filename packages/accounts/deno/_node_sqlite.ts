/**
 * A drizzle database over a local SQLite file (or `:memory:`) through the
 * runtime's built-in `node:sqlite`, with each distinct statement prepared
 * once and reused: `serveAccounts` (`./mod.ts`) opens `file:` and
 * `:memory:` database URLs with it.
 *
 * Why not `@libsql/client` for local files: it prepares a new native
 * statement for every query, and on Deno 2.9 each of those native objects
 * leaves a few hundred bytes behind after it is collected, so a server that
 * looks a user up on every request grows without bound (measured in
 * `bench/RESULTS_soak.md`: +20 MB a minute at 2,700 requests a second).
 * Here a request prepares nothing: the statements the stores use are a
 * fixed set, kept in a small cache keyed by their SQL text. Remote URLs
 * (Turso, `libsql://`, `https://`) still go through `@libsql/client`, whose
 * HTTP path creates no native objects.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { drizzle, type SqliteRemoteDatabase } from "drizzle-orm/sqlite-proxy";

type Method = "run" | "all" | "values" | "get";
type Value = null | number | bigint | string | Uint8Array;

/** A database and the function that closes it. */
export interface LocalSQLite {
  /** The drizzle database (SQLite dialect) to give the SQL stores. */
  db: SqliteRemoteDatabase;
  /** Closes the file. */
  close(): void;
}

/** At most this many prepared statements are kept (least recently used out). */
const MAX_STATEMENTS = 128;

/**
 * A row as drizzle and the stores read it: the values by column position
 * (drizzle's query builders map rows by index) and by column name (the
 * stores' raw queries), like `@libsql/client`'s rows.
 */
function toRow(record: Record<string, unknown>): unknown[] {
  const names = Object.keys(record);
  const row: unknown[] = names.map((name) => record[name]);
  for (const name of names) {
    if (!Object.hasOwn(row, name)) {
      Object.defineProperty(row, name, {
        value: record[name],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return row;
}

/**
 * Opens (or creates) a SQLite file for the SQL stores.
 *
 * @param path A file path, or `:memory:`.
 * @returns The drizzle database and its `close`.
 *
 * @example Usage
 * ```ts ignore
 * import { migrate, SQLCredentialStore } from "@portcullis/sql";
 * import { openLocalSQLite } from "./_node_sqlite.ts";
 * const { db, close } = openLocalSQLite("./data/app.db");
 * await migrate(db);
 * const credentials = new SQLCredentialStore(db);
 * ```
 */
export function openLocalSQLite(path: string): LocalSQLite {
  const sqlite = new DatabaseSync(path);
  // Every credential row references its user (ON DELETE CASCADE): SQLite
  // enforces foreign keys only on connections that ask.
  sqlite.exec("PRAGMA foreign_keys = ON");
  if (path !== ":memory:") {
    sqlite.exec("PRAGMA journal_mode = WAL");
    sqlite.exec("PRAGMA busy_timeout = 5000");
  }
  const statements = new Map<string, StatementSync>();

  function prepared(sql: string): StatementSync {
    let statement = statements.get(sql);
    if (statement !== undefined) {
      // Most recently used last.
      statements.delete(sql);
    } else {
      statement = sqlite.prepare(sql);
      if (statements.size >= MAX_STATEMENTS) {
        statements.delete(statements.keys().next().value!);
      }
    }
    statements.set(sql, statement);
    return statement;
  }

  function run(sql: string, params: unknown[], method: Method) {
    const statement = prepared(sql);
    const args = params as Value[];
    switch (method) {
      case "run":
        statement.run(...args);
        return { rows: [] };
      case "get": {
        const record = statement.get(...args);
        return { rows: record === undefined ? undefined : toRow(record) };
      }
      case "values":
        return { rows: statement.all(...args).map((r) => Object.values(r)) };
      case "all":
        return { rows: statement.all(...args).map(toRow) };
    }
  }

  const db = drizzle(
    (
      sql: string,
      params: unknown[],
      method: "run" | "all" | "values" | "get",
    ) => {
      try {
        return Promise.resolve(run(sql, params, method) as { rows: unknown[] });
      } catch (error) {
        return Promise.reject(error);
      }
    },
    (
      queries: {
        sql: string;
        params: unknown[];
        method: "run" | "all" | "values" | "get";
      }[],
    ) => {
      // One transaction, as libSQL's batch is.
      try {
        sqlite.exec("BEGIN");
        const results = queries.map((q) =>
          run(q.sql, q.params, q.method) as { rows: unknown[] }
        );
        sqlite.exec("COMMIT");
        return Promise.resolve(results);
      } catch (error) {
        try {
          sqlite.exec("ROLLBACK");
        } catch {
          // BEGIN itself failed: nothing to roll back.
        }
        return Promise.reject(error);
      }
    },
  );
  return {
    db,
    close: () => {
      statements.clear();
      sqlite.close();
    },
  };
}
