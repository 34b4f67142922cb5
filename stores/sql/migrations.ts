/**
 * The tables of the SQL stores, as idempotent SQL per dialect, and a
 * `migrate(db)` that applies them.
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
import { execute } from "./_exec.ts";
import { lifecycleMigrationStatements } from "./lifecycle_migrations.ts";
import { signInMigrationStatements } from "./signin_migrations.ts";

/** Options shared by the SQL stores and {@linkcode migrate}. */
export interface SQLStoreOptions {
  /**
   * Prepended to every table and index name, for a database that already
   * has a `users` table: `"auth_"` gives `auth_users` and
   * `auth_verification_tokens`. Letters, digits and `_`, at most 24
   * characters, not starting with a digit. Default `""`.
   */
  tablePrefix?: string;
  /**
   * The dialect, when detection from the drizzle object is not wanted or
   * fails (a wrapped or proxied database). Default: detected.
   */
  dialect?: SQLDialect;
}

/** The names of the tables and indexes for one prefix. */
export interface SQLTableNames {
  /** The users table, `<prefix>users`. */
  users: string;
  /** The unique index on the users' email, `<prefix>users_email_unique`. */
  usersEmailIndex: string;
  /** The single-use token table, `<prefix>verification_tokens`. */
  verificationTokens: string;
  /** The index on (subject, purpose) of the token table. */
  verificationTokensSubjectIndex: string;
}

/**
 * Checks a table prefix and answers the table and index names it gives.
 *
 * @param tablePrefix The prefix; `""` by default.
 * @returns The names.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableNames } from "@portcullis/sql";
 * assert.equal(tableNames("auth_").users, "auth_users");
 * ```
 */
export function tableNames(tablePrefix = ""): SQLTableNames {
  if (!/^(?:[A-Za-z_][A-Za-z0-9_]{0,23})?$/.test(tablePrefix)) {
    throw new TypeError(
      `Table prefix must be letters, digits and "_", at most 24 characters, not starting with a digit: received "${tablePrefix}"`,
    );
  }
  return {
    users: `${tablePrefix}users`,
    usersEmailIndex: `${tablePrefix}users_email_unique`,
    verificationTokens: `${tablePrefix}verification_tokens`,
    verificationTokensSubjectIndex:
      `${tablePrefix}verification_tokens_subject_purpose_idx`,
  };
}

/**
 * The statements that create the stores' tables on one dialect, each
 * idempotent (`CREATE … IF NOT EXISTS`), so they are safe to run at every
 * start-up. The files in `stores/sql/migrations/` hold the same statements
 * for the default (empty) prefix, for teams that run SQL migrations with
 * their own tool (drizzle-kit, Atlas, Flyway, `psql -f`).
 *
 * Times are Unix milliseconds: `INTEGER` on SQLite (64-bit), `BIGINT` on
 * PostgreSQL and MySQL. MySQL tables use `utf8mb4_bin`, so emails compare
 * exactly: the default collation would treat `josé@…` and `jose@…` as one
 * address.
 *
 * @param dialect The dialect.
 * @param options The table prefix.
 * @returns The statements, without trailing semicolons.
 *
 * @example Usage
 * ```ts
 * import { migrationStatements } from "@portcullis/sql";
 * for (const statement of migrationStatements("postgresql")) {
 *   console.log(statement + ";");
 * }
 * ```
 */
export function migrationStatements(
  dialect: SQLDialect,
  options: Pick<SQLStoreOptions, "tablePrefix"> = {},
): string[] {
  const t = tableNames(options.tablePrefix);
  if (dialect === "mysql") {
    const q = (name: string): string => `\`${name}\``;
    return [
      `CREATE TABLE IF NOT EXISTS ${q(t.users)} (
  \`id\` VARCHAR(255) NOT NULL,
  \`email\` VARCHAR(320) NOT NULL,
  \`password_hash\` TEXT NOT NULL,
  \`verified_at\` BIGINT NOT NULL DEFAULT 0,
  \`created_at\` BIGINT NOT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY ${q(t.usersEmailIndex)} (\`email\`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      `CREATE TABLE IF NOT EXISTS ${q(t.verificationTokens)} (
  \`token_hash\` VARCHAR(255) NOT NULL,
  \`purpose\` VARCHAR(255) NOT NULL,
  \`subject\` VARCHAR(255) NOT NULL,
  \`email\` VARCHAR(320) NOT NULL,
  \`expires_at\` BIGINT NOT NULL,
  \`created_at\` BIGINT NOT NULL,
  PRIMARY KEY (\`token_hash\`),
  KEY ${q(t.verificationTokensSubjectIndex)} (\`subject\`, \`purpose\`)
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
    `CREATE TABLE IF NOT EXISTS ${q(t.users)} (
  "id" TEXT PRIMARY KEY NOT NULL,
  "email" TEXT NOT NULL,
  "password_hash" TEXT NOT NULL,
  "verified_at" ${int} NOT NULL DEFAULT 0,
  "created_at" ${int} NOT NULL
)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${q(t.usersEmailIndex)} ON ${
      q(t.users)
    } ("email")`,
    `CREATE TABLE IF NOT EXISTS ${q(t.verificationTokens)} (
  "token_hash" TEXT PRIMARY KEY NOT NULL,
  "purpose" TEXT NOT NULL,
  "subject" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "expires_at" ${int} NOT NULL,
  "created_at" ${int} NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${q(t.verificationTokensSubjectIndex)} ON ${
      q(t.verificationTokens)
    } ("subject", "purpose")`,
  ];
}

/**
 * Creates the stores' tables and indexes if they do not exist yet
 * (migrations 0001 and 0002, the account-lifecycle tables). Safe to
 * call at every start-up and from several processes; it never drops or
 * alters anything.
 *
 * @param db A drizzle database of any supported dialect.
 * @param options The table prefix, and the dialect if detection is not wanted.
 *
 * @example Usage
 * ```ts
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLCredentialStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * const credentials = new SQLCredentialStore(db);
 * db.$client.close();
 * ```
 */
export async function migrate(
  db: SQLDatabase,
  options: SQLStoreOptions = {},
): Promise<void> {
  const dialect = options.dialect ?? detectDialect(db);
  const statements = [
    ...migrationStatements(dialect, options),
    ...lifecycleMigrationStatements(dialect, options),
    // Migration 0003: the sign-in methods' tables.
    ...signInMigrationStatements(dialect, options),
  ];
  for (const statement of statements) {
    await execute(db as DrizzleDatabase, dialect, sql.raw(statement));
  }
}
