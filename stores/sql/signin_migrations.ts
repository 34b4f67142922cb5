/**
 * Migration 0003: the tables of the sign-in methods (OpenID Connect
 * identities, passkeys, TOTP and recovery codes), as idempotent SQL per
 * dialect. `migrate(db)` runs them after 0001; the files in
 * `stores/sql/migrations/0003_signin.*.sql` hold the same statements.
 *
 * @module
 */
import type { SQLDialect } from "./dialect.ts";

/** The names of the sign-in tables and indexes for one prefix. */
export interface SignInTableNames {
  /** OpenID Connect identities: (provider, provider subject) → user. */
  identities: string;
  /** The index on the identities' user id. */
  identitiesUserIndex: string;
  /** WebAuthn credentials. */
  passkeys: string;
  /** The index on the passkeys' user id. */
  passkeysUserIndex: string;
  /** One TOTP enrolment per user. */
  totp: string;
  /** Recovery codes, hashed. */
  recoveryCodes: string;
}

/**
 * The sign-in table names for a prefix (already checked by `tableNames`).
 *
 * @param prefix The table prefix.
 * @returns The names.
 */
export function signInTableNames(prefix = ""): SignInTableNames {
  if (!/^(?:[A-Za-z_][A-Za-z0-9_]{0,23})?$/.test(prefix)) {
    throw new TypeError(
      `Table prefix must be letters, digits and "_", at most 24 characters, not starting with a digit: received "${prefix}"`,
    );
  }
  return {
    identities: `${prefix}identities`,
    identitiesUserIndex: `${prefix}identities_user_idx`,
    passkeys: `${prefix}passkeys`,
    passkeysUserIndex: `${prefix}passkeys_user_idx`,
    totp: `${prefix}totp_credentials`,
    recoveryCodes: `${prefix}recovery_codes`,
  };
}

/**
 * The statements of migration 0003 on one dialect, each idempotent.
 *
 * @param dialect The dialect.
 * @param options The table prefix.
 * @returns The statements, without trailing semicolons.
 */
export function signInMigrationStatements(
  dialect: SQLDialect,
  options: { tablePrefix?: string } = {},
): string[] {
  const t = signInTableNames(options.tablePrefix);
  if (dialect === "mysql") {
    const q = (name: string): string => `\`${name}\``;
    const tail = ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
    return [
      `CREATE TABLE IF NOT EXISTS ${q(t.identities)} (
  \`provider\` VARCHAR(64) NOT NULL,
  \`provider_subject\` VARCHAR(255) NOT NULL,
  \`user_id\` VARCHAR(255) NOT NULL,
  \`email\` VARCHAR(320) NOT NULL,
  \`created_at\` BIGINT NOT NULL,
  PRIMARY KEY (\`provider\`, \`provider_subject\`),
  KEY ${q(t.identitiesUserIndex)} (\`user_id\`)
${tail}`,
      `CREATE TABLE IF NOT EXISTS ${q(t.passkeys)} (
  \`credential_id\` VARCHAR(1400) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`user_id\` VARCHAR(255) NOT NULL,
  \`public_key\` TEXT NOT NULL,
  \`counter\` BIGINT NOT NULL,
  \`transports\` VARCHAR(255) NOT NULL,
  \`name\` VARCHAR(255) NOT NULL,
  \`created_at\` BIGINT NOT NULL,
  \`last_used_at\` BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (\`credential_id\`),
  KEY ${q(t.passkeysUserIndex)} (\`user_id\`)
${tail}`,
      `CREATE TABLE IF NOT EXISTS ${q(t.totp)} (
  \`user_id\` VARCHAR(255) NOT NULL,
  \`secret\` TEXT NOT NULL,
  \`enabled_at\` BIGINT NOT NULL DEFAULT 0,
  \`last_step\` BIGINT NOT NULL DEFAULT 0,
  \`created_at\` BIGINT NOT NULL,
  PRIMARY KEY (\`user_id\`)
${tail}`,
      `CREATE TABLE IF NOT EXISTS ${q(t.recoveryCodes)} (
  \`user_id\` VARCHAR(255) NOT NULL,
  \`code_hash\` VARCHAR(64) NOT NULL,
  \`created_at\` BIGINT NOT NULL,
  PRIMARY KEY (\`user_id\`, \`code_hash\`)
${tail}`,
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
    `CREATE TABLE IF NOT EXISTS ${q(t.identities)} (
  "provider" TEXT NOT NULL,
  "provider_subject" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "created_at" ${int} NOT NULL,
  PRIMARY KEY ("provider", "provider_subject")
)`,
    `CREATE INDEX IF NOT EXISTS ${q(t.identitiesUserIndex)} ON ${
      q(t.identities)
    } ("user_id")`,
    `CREATE TABLE IF NOT EXISTS ${q(t.passkeys)} (
  "credential_id" TEXT PRIMARY KEY NOT NULL,
  "user_id" TEXT NOT NULL,
  "public_key" TEXT NOT NULL,
  "counter" ${int} NOT NULL,
  "transports" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "created_at" ${int} NOT NULL,
  "last_used_at" ${int} NOT NULL DEFAULT 0
)`,
    `CREATE INDEX IF NOT EXISTS ${q(t.passkeysUserIndex)} ON ${
      q(t.passkeys)
    } ("user_id")`,
    `CREATE TABLE IF NOT EXISTS ${q(t.totp)} (
  "user_id" TEXT PRIMARY KEY NOT NULL,
  "secret" TEXT NOT NULL,
  "enabled_at" ${int} NOT NULL DEFAULT 0,
  "last_step" ${int} NOT NULL DEFAULT 0,
  "created_at" ${int} NOT NULL
)`,
    `CREATE TABLE IF NOT EXISTS ${q(t.recoveryCodes)} (
  "user_id" TEXT NOT NULL,
  "code_hash" TEXT NOT NULL,
  "created_at" ${int} NOT NULL,
  PRIMARY KEY ("user_id", "code_hash")
)`,
  ];
}
