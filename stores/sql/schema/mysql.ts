/**
 * The tables of `@portcullis/sql` on MySQL and MariaDB (`mysql2`),
 * as drizzle definitions: the one source the migrations in
 * `stores/sql/migrations/mysql/` are generated from, and what an
 * application references from its own drizzle schema (a foreign key to
 * `users.id`, a join on it).
 *
 * Times are Unix milliseconds in `BIGINT` columns (read as numbers);
 * `users.verified_at` is `0` until the address is proven. Every credential
 * table (`identities`, `passkeys`, `totp_credentials`, `recovery_codes`,
 * `api_keys`) and `account_bans` have a foreign key to `users.id` with
 * `ON DELETE CASCADE`. The tables are
 * InnoDB, `utf8mb4` with the binary collation `utf8mb4_bin`, so emails
 * compare exactly (the migrations add the table options, which drizzle
 * definitions do not carry): a column of yours that references `users.id`
 * must be `VARCHAR(255)` in `utf8mb4_bin` too.
 *
 * @example Reference the users table
 * ```ts
 * import { bigint, mysqlTable, varchar } from "drizzle-orm/mysql-core";
 * import { users } from "@portcullis/sql/schema/mysql";
 *
 * export const notes = mysqlTable("notes", {
 *   id: varchar("id", { length: 255 }).primaryKey(),
 *   ownerId: varchar("owner_id", { length: 255 }).notNull()
 *     .references(() => users.id, { onDelete: "cascade" }),
 *   createdAt: bigint("created_at", { mode: "number" }).notNull(),
 * });
 * ```
 *
 * @module
 */
import {
  bigint,
  customType,
  foreignKey,
  index,
  type MySqlBigInt53BuilderInitial,
  type MySqlCustomColumnBuilder,
  mysqlTable,
  type MySqlTableWithColumns,
  type MySqlTextBuilderInitial,
  type MySqlVarCharBuilderInitial,
  primaryKey,
  text,
  uniqueIndex,
  varchar,
} from "drizzle-orm/mysql-core";
import type {
  BuildColumns,
  ColumnBuilderBase,
  HasDefault,
  IsPrimaryKey,
  NotNull,
} from "drizzle-orm";
import { checkTablePrefix } from "../table_names.ts";

/**
 * A MySQL table of this package, whatever its prefixed name.
 *
 * @ignore drizzle's own table type, which these docs do not show
 */
export type MySqlAuthTable<C extends Record<string, ColumnBuilderBase>> =
  MySqlTableWithColumns<{
    name: string;
    schema: undefined;
    columns: BuildColumns<string, C, "mysql">;
    dialect: "mysql";
  }>;
type Text<N extends string> = NotNull<
  MySqlTextBuilderInitial<N, [string, ...string[]]>
>;
type VarChar<N extends string, L extends number> = NotNull<
  MySqlVarCharBuilderInitial<N, [string, ...string[]], L>
>;
type Int<N extends string> = NotNull<MySqlBigInt53BuilderInitial<N>>;
/** `VARCHAR(1400) CHARACTER SET ascii COLLATE ascii_bin`: a passkey's id. */
type AsciiId<N extends string> = NotNull<
  MySqlCustomColumnBuilder<{
    name: N;
    dataType: "custom";
    columnType: "MySqlCustomColumn";
    data: string;
    driverParam: string;
    enumValues: undefined;
  }>
>;

/** The passkey id column: base64url, up to 1400 ASCII characters. */
const asciiId = customType<{ data: string; driverData: string }>({
  dataType: () => "varchar(1400) CHARACTER SET ascii COLLATE ascii_bin",
});

/**
 * Every table of the package on MySQL and MariaDB, as drizzle's table types.
 *
 * @ignore drizzle's own types, which these docs do not show
 */
export interface MySqlAuthSchema {
  /** `users`: one row per account. */
  users: MySqlAuthTable<{
    id: IsPrimaryKey<VarChar<"id", 255>>;
    email: VarChar<"email", 320>;
    passwordHash: Text<"password_hash">;
    verifiedAt: HasDefault<Int<"verified_at">>;
    createdAt: Int<"created_at">;
  }>;
  /** `verification_tokens`: single-use tokens, stored hashed. */
  verificationTokens: MySqlAuthTable<{
    tokenHash: IsPrimaryKey<VarChar<"token_hash", 255>>;
    purpose: VarChar<"purpose", 255>;
    subject: VarChar<"subject", 255>;
    email: VarChar<"email", 320>;
    expiresAt: Int<"expires_at">;
    createdAt: Int<"created_at">;
  }>;
  /** `auth_events`: the security events behind a user's activity page. */
  authEvents: MySqlAuthTable<{
    id: IsPrimaryKey<VarChar<"id", 64>>;
    subject: VarChar<"subject", 255>;
    type: VarChar<"type", 32>;
    at: Int<"at">;
    userAgent: MySqlTextBuilderInitial<"user_agent", [string, ...string[]]>;
    actor: MySqlVarCharBuilderInitial<"actor", [string, ...string[]], 255>;
    detail: MySqlVarCharBuilderInitial<"detail", [string, ...string[]], 255>;
  }>;
  /** `identities`: OpenID Connect (provider, provider subject) → user. */
  identities: MySqlAuthTable<{
    provider: VarChar<"provider", 64>;
    providerSubject: VarChar<"provider_subject", 255>;
    userId: VarChar<"user_id", 255>;
    email: VarChar<"email", 320>;
    createdAt: Int<"created_at">;
  }>;
  /** `passkeys`: WebAuthn credentials. */
  passkeys: MySqlAuthTable<{
    credentialId: IsPrimaryKey<AsciiId<"credential_id">>;
    userId: VarChar<"user_id", 255>;
    publicKey: Text<"public_key">;
    counter: Int<"counter">;
    transports: VarChar<"transports", 255>;
    name: VarChar<"name", 255>;
    createdAt: Int<"created_at">;
    lastUsedAt: HasDefault<Int<"last_used_at">>;
    /** The authenticator said the credential may be backed up (BE), fixed at creation: 1 eligible, 2 not, 0 not known (stored before 0003). */
    backupEligible: HasDefault<Int<"backup_eligible">>;
    /** The credential was backed up (synced) at its last use (BS). */
    backedUp: HasDefault<Int<"backed_up">>;
  }>;
  /** `totp_credentials`: one TOTP enrolment per user. */
  totpCredentials: MySqlAuthTable<{
    userId: IsPrimaryKey<VarChar<"user_id", 255>>;
    secret: Text<"secret">;
    enabledAt: HasDefault<Int<"enabled_at">>;
    lastStep: HasDefault<Int<"last_step">>;
    createdAt: Int<"created_at">;
  }>;
  /** `recovery_codes`: a user's recovery codes, hashed. */
  recoveryCodes: MySqlAuthTable<{
    userId: VarChar<"user_id", 255>;
    codeHash: VarChar<"code_hash", 64>;
    createdAt: Int<"created_at">;
  }>;
  /** `api_keys`: personal access tokens, stored hashed. */
  apiKeys: MySqlAuthTable<{
    id: IsPrimaryKey<VarChar<"id", 32>>;
    userId: VarChar<"user_id", 255>;
    name: VarChar<"name", 255>;
    secretHash: VarChar<"secret_hash", 64>;
    scopes: Text<"scopes">;
    createdAt: Int<"created_at">;
    expiresAt: Int<"expires_at">;
    lastUsedAt: HasDefault<Int<"last_used_at">>;
  }>;
  /** `account_bans`: accounts an operator banned. */
  accountBans: MySqlAuthTable<{
    userId: IsPrimaryKey<VarChar<"user_id", 255>>;
    reason: Text<"reason">;
    bannedBy: VarChar<"banned_by", 255>;
    bannedAt: Int<"banned_at">;
  }>;
}

/**
 * The tables for a table prefix (the `tablePrefix` given to `migrate` and
 * the stores): `mysqlSchema("auth_").users` is `auth_users`.
 *
 * @param tablePrefix The prefix; `""` by default.
 * @returns The tables.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { getTableName } from "drizzle-orm";
 * import { mysqlSchema } from "@portcullis/sql/schema/mysql";
 * assert.equal(getTableName(mysqlSchema("auth_").users), "auth_users");
 * ```
 */
export function mysqlSchema(tablePrefix = ""): MySqlAuthSchema {
  const p = checkTablePrefix(tablePrefix);
  const users = mysqlTable(`${p}users`, {
    id: varchar("id", { length: 255 }).primaryKey(),
    email: varchar("email", { length: 320 }).notNull(),
    passwordHash: text("password_hash").notNull(),
    verifiedAt: bigint("verified_at", { mode: "number" }).notNull().default(0),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [uniqueIndex(`${p}users_email_unique`).on(t.email)]);
  const verificationTokens = mysqlTable(`${p}verification_tokens`, {
    tokenHash: varchar("token_hash", { length: 255 }).primaryKey(),
    purpose: varchar("purpose", { length: 255 }).notNull(),
    subject: varchar("subject", { length: 255 }).notNull(),
    email: varchar("email", { length: 320 }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [
    index(`${p}verification_tokens_subject_purpose_idx`).on(
      t.subject,
      t.purpose,
    ),
  ]);
  const authEvents = mysqlTable(`${p}auth_events`, {
    id: varchar("id", { length: 64 }).primaryKey(),
    subject: varchar("subject", { length: 255 }).notNull(),
    type: varchar("type", { length: 32 }).notNull(),
    at: bigint("at", { mode: "number" }).notNull(),
    userAgent: text("user_agent"),
    actor: varchar("actor", { length: 255 }),
    detail: varchar("detail", { length: 255 }),
  }, (t) => [index(`${p}auth_events_subject_at_idx`).on(t.subject, t.at)]);
  const identities = mysqlTable(`${p}identities`, {
    provider: varchar("provider", { length: 64 }).notNull(),
    providerSubject: varchar("provider_subject", { length: 255 }).notNull(),
    userId: varchar("user_id", { length: 255 }).notNull(),
    email: varchar("email", { length: 320 }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [
    primaryKey({ columns: [t.provider, t.providerSubject] }),
    index(`${p}identities_user_idx`).on(t.userId),
    foreignKey({
      name: `${p}identities_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const passkeys = mysqlTable(`${p}passkeys`, {
    credentialId: asciiId("credential_id").primaryKey(),
    userId: varchar("user_id", { length: 255 }).notNull(),
    publicKey: text("public_key").notNull(),
    counter: bigint("counter", { mode: "number" }).notNull(),
    transports: varchar("transports", { length: 255 }).notNull(),
    name: varchar("name", { length: 255 }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    lastUsedAt: bigint("last_used_at", { mode: "number" }).notNull().default(0),
    backupEligible: bigint("backup_eligible", { mode: "number" }).notNull()
      .default(0),
    backedUp: bigint("backed_up", { mode: "number" }).notNull().default(0),
  }, (t) => [
    index(`${p}passkeys_user_idx`).on(t.userId),
    foreignKey({
      name: `${p}passkeys_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const totpCredentials = mysqlTable(`${p}totp_credentials`, {
    userId: varchar("user_id", { length: 255 }).primaryKey(),
    secret: text("secret").notNull(),
    enabledAt: bigint("enabled_at", { mode: "number" }).notNull().default(0),
    lastStep: bigint("last_step", { mode: "number" }).notNull().default(0),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [
    foreignKey({
      name: `${p}totp_credentials_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const recoveryCodes = mysqlTable(`${p}recovery_codes`, {
    userId: varchar("user_id", { length: 255 }).notNull(),
    codeHash: varchar("code_hash", { length: 64 }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [
    primaryKey({ columns: [t.userId, t.codeHash] }),
    foreignKey({
      name: `${p}recovery_codes_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const apiKeys = mysqlTable(`${p}api_keys`, {
    id: varchar("id", { length: 32 }).primaryKey(),
    userId: varchar("user_id", { length: 255 }).notNull(),
    name: varchar("name", { length: 255 }).notNull(),
    secretHash: varchar("secret_hash", { length: 64 }).notNull(),
    scopes: text("scopes").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    lastUsedAt: bigint("last_used_at", { mode: "number" }).notNull().default(0),
  }, (t) => [
    index(`${p}api_keys_user_idx`).on(t.userId),
    foreignKey({
      name: `${p}api_keys_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const accountBans = mysqlTable(`${p}account_bans`, {
    userId: varchar("user_id", { length: 255 }).primaryKey(),
    reason: text("reason").notNull(),
    bannedBy: varchar("banned_by", { length: 255 }).notNull(),
    bannedAt: bigint("banned_at", { mode: "number" }).notNull(),
  }, (t) => [
    foreignKey({
      name: `${p}account_bans_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  return {
    users,
    verificationTokens,
    authEvents,
    identities,
    passkeys,
    totpCredentials,
    recoveryCodes,
    apiKeys,
    accountBans,
  };
}

const schema = mysqlSchema();
/** `users`, unprefixed. */
export const users: MySqlAuthSchema["users"] = schema.users;
/** `verification_tokens`, unprefixed. */
export const verificationTokens: MySqlAuthSchema["verificationTokens"] =
  schema.verificationTokens;
/** `auth_events`, unprefixed. */
export const authEvents: MySqlAuthSchema["authEvents"] = schema.authEvents;
/** `identities`, unprefixed. */
export const identities: MySqlAuthSchema["identities"] = schema.identities;
/** `passkeys`, unprefixed. */
export const passkeys: MySqlAuthSchema["passkeys"] = schema.passkeys;
/** `totp_credentials`, unprefixed. */
export const totpCredentials: MySqlAuthSchema["totpCredentials"] =
  schema.totpCredentials;
/** `recovery_codes`, unprefixed. */
export const recoveryCodes: MySqlAuthSchema["recoveryCodes"] =
  schema.recoveryCodes;
/** `api_keys`, unprefixed. */
export const apiKeys: MySqlAuthSchema["apiKeys"] = schema.apiKeys;
/** `account_bans`, unprefixed. */
export const accountBans: MySqlAuthSchema["accountBans"] = schema.accountBans;
