/**
 * How `migrate` applies a step on SQLite, libSQL and D1: the journal row and
 * the step's statements in one batch (or BEGIN IMMEDIATE … COMMIT), retried
 * while another instance holds the write lock. Internal to `stores/sql`.
 *
 * @module
 */
import { sql } from "drizzle-orm";
import type { DrizzleDatabase } from "./dialect.ts";
import { execute, queryRows } from "./_exec.ts";
import {
  describe,
  type DialectSteps,
  pendingStatements,
} from "./_migrate_steps.ts";

const BUSY = /SQLITE_BUSY|database is locked/i;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs a read again while another instance holds the write lock (SQLite
 * answers SQLITE_BUSY even to a read of the schema during another's batch).
 */
async function whenFree<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (attempt >= 200 || !BUSY.test(describe(err))) throw err;
      await sleep(50 + Math.random() * 100);
    }
  }
}

/** The SQLite steps. */
export function sqliteSteps(
  db: DrizzleDatabase,
  journal: string,
): DialectSteps {
  const q = (name: string) => `"${name}"`;
  const lite = db as unknown as {
    run(query: unknown): unknown;
    batch?(items: unknown[]): Promise<unknown>;
  };
  const self: DialectSteps = {
    async tables() {
      const rows = await whenFree(() =>
        queryRows(
          db,
          "sqlite",
          sql`SELECT name FROM sqlite_master WHERE type = 'table'`,
        )
      );
      return new Set(rows.map((r) => String(r.name)));
    },
    async journal() {
      if (!(await self.tables()).has(journal)) return null;
      const rows = await whenFree(() =>
        queryRows(
          db,
          "sqlite",
          sql.raw(`SELECT id FROM ${q(journal)} ORDER BY id`),
        )
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
