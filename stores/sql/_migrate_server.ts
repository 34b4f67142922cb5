/**
 * How `migrate` applies a step on PostgreSQL (one transaction under an
 * advisory lock) and MySQL/MariaDB (under `GET_LOCK`; DDL commits on its
 * own, so statements whose work is done are skipped on a re-run). Internal
 * to `stores/sql`.
 *
 * @module
 */
import { sql } from "drizzle-orm";
import type { DrizzleDatabase } from "./dialect.ts";
import { queryRows } from "./_exec.ts";
import {
  describe,
  type DialectSteps,
  pendingStatements,
} from "./_migrate_steps.ts";

interface Transacting {
  execute(query: unknown): Promise<unknown>;
  transaction<T>(fn: (tx: Transacting) => Promise<T>): Promise<T>;
}

/** The PostgreSQL steps. */
export function postgresSteps(
  db: DrizzleDatabase,
  journal: string,
): DialectSteps {
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

/** The MySQL and MariaDB steps. */
export function mysqlSteps(
  db: DrizzleDatabase,
  journal: string,
): DialectSteps {
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
        // Per database and prefix; hashed, as MySQL caps lock names at 64.
        const lock = `:portcullis:${journal}`;
        const got = await queryRows(
          on,
          "mysql",
          sql`SELECT GET_LOCK(SHA1(CONCAT(DATABASE(), ${lock})), 60) AS got`,
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
            sql`SELECT RELEASE_LOCK(SHA1(CONCAT(DATABASE(), ${lock})))`,
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
