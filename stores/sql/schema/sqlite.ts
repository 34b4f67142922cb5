/**
 * The tables of `@portcullis/sql` on SQLite, libSQL, Turso and Cloudflare
 * D1, as drizzle definitions: the one source the migrations in
 * `stores/sql/migrations/sqlite/` are generated from, and what an
 * application references from its own drizzle schema (a foreign key to
 * `users.id`, a join on it).
 *
 * Times are Unix milliseconds in `INTEGER` columns; `users.verified_at` is
 * `0` until the address is proven. Every credential table (`identities`,
 * `passkeys`, `totp_credentials`, `recovery_codes`, `api_keys`) and
 * `account_bans` has a foreign key to
 * `users.id` with `ON DELETE CASCADE`: SQLite enforces it only on a
 * connection that ran `PRAGMA foreign_keys = ON` (D1 always does).
 *
 * @example Reference the users table
 * ```ts
 * import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
 * import { users } from "@portcullis/sql/schema/sqlite";
 *
 * export const notes = sqliteTable("notes", {
 *   id: text("id").primaryKey(),
 *   ownerId: text("owner_id").notNull()
 *     .references(() => users.id, { onDelete: "cascade" }),
 *   createdAt: integer("created_at").notNull(),
 * });
 * ```
 *
 * @module
 */
import {
  foreignKey,
  index,
  integer,
  primaryKey,
  type SQLiteIntegerBuilderInitial,
  sqliteTable,
  type SQLiteTableWithColumns,
  type SQLiteTextBuilderInitial,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import type {
  BuildColumns,
  ColumnBuilderBase,
  HasDefault,
  IsPrimaryKey,
  NotNull,
} from "drizzle-orm";
import { checkTablePrefix } from "../table_names.ts";

/**
 * A SQLite table of this package, whatever its prefixed name.
 *
 * @ignore drizzle's own table type, which these docs do not show
 */
export type SQLiteAuthTable<C extends Record<string, ColumnBuilderBase>> =
  SQLiteTableWithColumns<{
    name: string;
    schema: undefined;
    columns: BuildColumns<string, C, "sqlite">;
    dialect: "sqlite";
  }>;
type Text<N extends string> = NotNull<
  SQLiteTextBuilderInitial<N, [string, ...string[]], number | undefined>
>;
type Int<N extends string> = NotNull<SQLiteIntegerBuilderInitial<N>>;

/**
 * Every table of the package on SQLite, as drizzle's table types.
 *
 * @ignore drizzle's own types, which these docs do not show
 */
export interface SQLiteAuthSchema {
  /** `users`: one row per account. */
  users: SQLiteAuthTable<{
    id: IsPrimaryKey<Text<"id">>;
    email: Text<"email">;
    passwordHash: Text<"password_hash">;
    verifiedAt: HasDefault<Int<"verified_at">>;
    createdAt: Int<"created_at">;
  }>;
  /** `verification_tokens`: single-use tokens, stored hashed. */
  verificationTokens: SQLiteAuthTable<{
    tokenHash: IsPrimaryKey<Text<"token_hash">>;
    purpose: Text<"purpose">;
    subject: Text<"subject">;
    email: Text<"email">;
    expiresAt: Int<"expires_at">;
    createdAt: Int<"created_at">;
  }>;
  /** `auth_events`: the security events behind a user's activity page. */
  authEvents: SQLiteAuthTable<{
    id: IsPrimaryKey<Text<"id">>;
    subject: Text<"subject">;
    type: Text<"type">;
    at: Int<"at">;
    userAgent: SQLiteTextBuilderInitial<
      "user_agent",
      [string, ...string[]],
      number | undefined
    >;
    actor: SQLiteTextBuilderInitial<
      "actor",
      [string, ...string[]],
      number | undefined
    >;
    detail: SQLiteTextBuilderInitial<
      "detail",
      [string, ...string[]],
      number | undefined
    >;
  }>;
  /** `identities`: OpenID Connect (provider, provider subject) → user. */
  identities: SQLiteAuthTable<{
    provider: Text<"provider">;
    providerSubject: Text<"provider_subject">;
    userId: Text<"user_id">;
    email: Text<"email">;
    createdAt: Int<"created_at">;
  }>;
  /** `passkeys`: WebAuthn credentials. */
  passkeys: SQLiteAuthTable<{
    credentialId: IsPrimaryKey<Text<"credential_id">>;
    userId: Text<"user_id">;
    publicKey: Text<"public_key">;
    counter: Int<"counter">;
    transports: Text<"transports">;
    name: Text<"name">;
    createdAt: Int<"created_at">;
    lastUsedAt: HasDefault<Int<"last_used_at">>;
    /** The authenticator said the credential may be backed up (BE), fixed at creation: 1 eligible, 2 not, 0 not known (stored before 0003). */
    backupEligible: HasDefault<Int<"backup_eligible">>;
    /** The credential was backed up (synced) at its last use (BS). */
    backedUp: HasDefault<Int<"backed_up">>;
  }>;
  /** `totp_credentials`: one TOTP enrolment per user. */
  totpCredentials: SQLiteAuthTable<{
    userId: IsPrimaryKey<Text<"user_id">>;
    secret: Text<"secret">;
    enabledAt: HasDefault<Int<"enabled_at">>;
    lastStep: HasDefault<Int<"last_step">>;
    createdAt: Int<"created_at">;
  }>;
  /** `recovery_codes`: a user's recovery codes, hashed. */
  recoveryCodes: SQLiteAuthTable<{
    userId: Text<"user_id">;
    codeHash: Text<"code_hash">;
    createdAt: Int<"created_at">;
  }>;
  /** `api_keys`: personal access tokens, stored hashed. */
  apiKeys: SQLiteAuthTable<{
    id: IsPrimaryKey<Text<"id">>;
    userId: Text<"user_id">;
    name: Text<"name">;
    secretHash: Text<"secret_hash">;
    scopes: Text<"scopes">;
    createdAt: Int<"created_at">;
    expiresAt: Int<"expires_at">;
    lastUsedAt: HasDefault<Int<"last_used_at">>;
  }>;
  /** `account_bans`: accounts an operator banned. */
  accountBans: SQLiteAuthTable<{
    userId: IsPrimaryKey<Text<"user_id">>;
    reason: Text<"reason">;
    bannedBy: Text<"banned_by">;
    bannedAt: Int<"banned_at">;
  }>;
}

/**
 * The tables for a table prefix (the `tablePrefix` given to `migrate` and
 * the stores): `sqliteSchema("auth_").users` is `auth_users`.
 *
 * @param tablePrefix The prefix; `""` by default.
 * @returns The tables.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { getTableName } from "drizzle-orm";
 * import { sqliteSchema } from "@portcullis/sql/schema/sqlite";
 * assert.equal(getTableName(sqliteSchema("auth_").users), "auth_users");
 * ```
 */
export function sqliteSchema(tablePrefix = ""): SQLiteAuthSchema {
  const p = checkTablePrefix(tablePrefix);
  const users = sqliteTable(`${p}users`, {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    verifiedAt: integer("verified_at").notNull().default(0),
    createdAt: integer("created_at").notNull(),
  }, (t) => [uniqueIndex(`${p}users_email_unique`).on(t.email)]);
  const verificationTokens = sqliteTable(`${p}verification_tokens`, {
    tokenHash: text("token_hash").primaryKey(),
    purpose: text("purpose").notNull(),
    subject: text("subject").notNull(),
    email: text("email").notNull(),
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
  }, (t) => [
    index(`${p}verification_tokens_subject_purpose_idx`).on(
      t.subject,
      t.purpose,
    ),
  ]);
  const authEvents = sqliteTable(`${p}auth_events`, {
    id: text("id").primaryKey(),
    subject: text("subject").notNull(),
    type: text("type").notNull(),
    at: integer("at").notNull(),
    userAgent: text("user_agent"),
    actor: text("actor"),
    detail: text("detail"),
  }, (t) => [index(`${p}auth_events_subject_at_idx`).on(t.subject, t.at)]);
  const identities = sqliteTable(`${p}identities`, {
    provider: text("provider").notNull(),
    providerSubject: text("provider_subject").notNull(),
    userId: text("user_id").notNull(),
    email: text("email").notNull(),
    createdAt: integer("created_at").notNull(),
  }, (t) => [
    primaryKey({ columns: [t.provider, t.providerSubject] }),
    index(`${p}identities_user_idx`).on(t.userId),
    foreignKey({
      name: `${p}identities_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const passkeys = sqliteTable(`${p}passkeys`, {
    credentialId: text("credential_id").primaryKey(),
    userId: text("user_id").notNull(),
    publicKey: text("public_key").notNull(),
    counter: integer("counter").notNull(),
    transports: text("transports").notNull(),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at").notNull().default(0),
    backupEligible: integer("backup_eligible").notNull().default(0),
    backedUp: integer("backed_up").notNull().default(0),
  }, (t) => [
    index(`${p}passkeys_user_idx`).on(t.userId),
    foreignKey({
      name: `${p}passkeys_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const totpCredentials = sqliteTable(`${p}totp_credentials`, {
    userId: text("user_id").primaryKey(),
    secret: text("secret").notNull(),
    enabledAt: integer("enabled_at").notNull().default(0),
    lastStep: integer("last_step").notNull().default(0),
    createdAt: integer("created_at").notNull(),
  }, (t) => [
    foreignKey({
      name: `${p}totp_credentials_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const recoveryCodes = sqliteTable(`${p}recovery_codes`, {
    userId: text("user_id").notNull(),
    codeHash: text("code_hash").notNull(),
    createdAt: integer("created_at").notNull(),
  }, (t) => [
    primaryKey({ columns: [t.userId, t.codeHash] }),
    foreignKey({
      name: `${p}recovery_codes_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const apiKeys = sqliteTable(`${p}api_keys`, {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    name: text("name").notNull(),
    secretHash: text("secret_hash").notNull(),
    scopes: text("scopes").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    lastUsedAt: integer("last_used_at").notNull().default(0),
  }, (t) => [
    index(`${p}api_keys_user_idx`).on(t.userId),
    foreignKey({
      name: `${p}api_keys_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const accountBans = sqliteTable(`${p}account_bans`, {
    userId: text("user_id").primaryKey(),
    reason: text("reason").notNull(),
    bannedBy: text("banned_by").notNull(),
    bannedAt: integer("banned_at").notNull(),
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

const schema = sqliteSchema();
/** `users`, unprefixed. */
export const users: SQLiteAuthSchema["users"] = schema.users;
/** `verification_tokens`, unprefixed. */
export const verificationTokens: SQLiteAuthSchema["verificationTokens"] =
  schema.verificationTokens;
/** `auth_events`, unprefixed. */
export const authEvents: SQLiteAuthSchema["authEvents"] = schema.authEvents;
/** `identities`, unprefixed. */
export const identities: SQLiteAuthSchema["identities"] = schema.identities;
/** `passkeys`, unprefixed. */
export const passkeys: SQLiteAuthSchema["passkeys"] = schema.passkeys;
/** `totp_credentials`, unprefixed. */
export const totpCredentials: SQLiteAuthSchema["totpCredentials"] =
  schema.totpCredentials;
/** `recovery_codes`, unprefixed. */
export const recoveryCodes: SQLiteAuthSchema["recoveryCodes"] =
  schema.recoveryCodes;
/** `api_keys`, unprefixed. */
export const apiKeys: SQLiteAuthSchema["apiKeys"] = schema.apiKeys;
/** `account_bans`, unprefixed. */
export const accountBans: SQLiteAuthSchema["accountBans"] = schema.accountBans;
