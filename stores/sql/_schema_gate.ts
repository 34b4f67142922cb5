/**
 * The stores' start-up check: on a store's first call, one query on the
 * migrations journal, so that a database nobody migrated fails with a
 * `SQLMigrationError` naming the missing migrations instead of an SQL error
 * in the middle of a login. Once a database passed (or `migrate` ran on
 * it), no call pays anything. Internal to `stores/sql`.
 *
 * @module
 */
import type { SQLDatabase, SQLDialect } from "./dialect.ts";
import { isChecked } from "./_checked.ts";
import { checkMigrations } from "./migrate.ts";
import { SQLMigrationError } from "./migration_error.ts";

const inFlight = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * Makes the gate of one store: call it before each query; it answers
 * `undefined` once the database is known to be migrated, else a promise to
 * await that rejects with `SQLMigrationError` on drift. Other failures of
 * the check (the database is down) are left to the query itself.
 */
export function schemaGate(
  db: SQLDatabase,
  dialect: SQLDialect,
  prefix: string,
): () => Promise<void> | undefined {
  let passed = false;
  return () => {
    if (passed) return undefined;
    if (isChecked(db, prefix)) {
      passed = true;
      return undefined;
    }
    let byPrefix = inFlight.get(db);
    if (byPrefix === undefined) inFlight.set(db, byPrefix = new Map());
    let running = byPrefix.get(prefix);
    if (running === undefined) {
      running = checkMigrations(db, { dialect, tablePrefix: prefix }).then(
        () => {
          passed = true;
        },
        (err) => {
          // Checked again on the next call: the database may be migrated
          // by then (another instance), or reachable.
          byPrefix.delete(prefix);
          if (err instanceof SQLMigrationError) throw err;
          // Unreachable: the query itself will say so.
        },
      );
      byPrefix.set(prefix, running);
    }
    return running;
  };
}
