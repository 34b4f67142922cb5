/**
 * The account-lifecycle tables (migration 0002): `auth_events`, the
 * security events behind a user's activity page.
 *
 * @module
 */
import type { SQLDialect } from "./dialect.ts";
import { type SQLStoreOptions, tableNames } from "./migrations.ts";

/** The names of the lifecycle tables and indexes for one prefix. */
export interface SQLLifecycleTableNames {
  /** The security events table, `<prefix>auth_events`. */
  authEvents: string;
  /** The index on (subject, at) of the events table. */
  authEventsSubjectIndex: string;
}

/**
 * The lifecycle table names for a prefix (checked like `tableNames`).
 *
 * @param tablePrefix The prefix; `""` by default.
 * @returns The names.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { lifecycleTableNames } from "@portcullis/sql";
 * assert.equal(lifecycleTableNames("auth_").authEvents, "auth_auth_events");
 * ```
 */
export function lifecycleTableNames(tablePrefix = ""): SQLLifecycleTableNames {
  tableNames(tablePrefix); // the same prefix rule
  return {
    authEvents: `${tablePrefix}auth_events`,
    authEventsSubjectIndex: `${tablePrefix}auth_events_subject_at_idx`,
  };
}

/**
 * The statements of migration 0002 on one dialect, each idempotent. The
 * files `stores/sql/migrations/0002_lifecycle.<dialect>.sql` hold the same
 * for the default prefix; `migrate(db)` runs them after 0001.
 *
 * @param dialect The dialect.
 * @param options The table prefix.
 * @returns The statements, without trailing semicolons.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { lifecycleMigrationStatements } from "@portcullis/sql";
 * assert.equal(lifecycleMigrationStatements("sqlite").length, 2);
 * ```
 */
export function lifecycleMigrationStatements(
  dialect: SQLDialect,
  options: Pick<SQLStoreOptions, "tablePrefix"> = {},
): string[] {
  const t = lifecycleTableNames(options.tablePrefix);
  if (dialect === "mysql") {
    const q = (name: string): string => `\`${name}\``;
    return [
      `CREATE TABLE IF NOT EXISTS ${q(t.authEvents)} (
  \`id\` VARCHAR(64) NOT NULL,
  \`subject\` VARCHAR(255) NOT NULL,
  \`type\` VARCHAR(32) NOT NULL,
  \`at\` BIGINT NOT NULL,
  \`user_agent\` TEXT NULL,
  PRIMARY KEY (\`id\`),
  KEY ${q(t.authEventsSubjectIndex)} (\`subject\`, \`at\`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    ];
  }
  if (dialect !== "sqlite" && dialect !== "postgresql") {
    throw new TypeError(
      `Unknown SQL dialect: received "${dialect}" (expected "sqlite", "postgresql" or "mysql")`,
    );
  }
  const int = dialect === "sqlite" ? "INTEGER" : "BIGINT";
  const q = (name: string): string => `"${name}"`;
  return [
    `CREATE TABLE IF NOT EXISTS ${q(t.authEvents)} (
  "id" TEXT PRIMARY KEY NOT NULL,
  "subject" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "at" ${int} NOT NULL,
  "user_agent" TEXT
)`,
    `CREATE INDEX IF NOT EXISTS ${q(t.authEventsSubjectIndex)} ON ${
      q(t.authEvents)
    } ("subject", "at")`,
  ];
}
