/**
 * The tables of `@portcullis/sql` on PostgreSQL (`postgres`, PGlite,
 * `pg`, Neon), as drizzle definitions: the one source the migrations in
 * `stores/sql/migrations/postgresql/` are generated from, and what an
 * application references from its own drizzle schema (a foreign key to
 * `users.id`, a join on it).
 *
 * Times are Unix milliseconds in `BIGINT` columns (read as numbers);
 * `users.verified_at` is `0` until the address is proven. Every credential
 * table (`identities`, `passkeys`, `totp_credentials`, `recovery_codes`,
 * `api_keys`) and `account_bans` have a foreign key to `users.id` with
 * `ON DELETE CASCADE`.
 *
 * @example Reference the users table
 * ```ts
 * import { bigint, pgTable, text } from "drizzle-orm/pg-core";
 * import { users } from "@portcullis/sql/schema/postgresql";
 *
 * export const notes = pgTable("notes", {
 *   id: text("id").primaryKey(),
 *   ownerId: text("owner_id").notNull()
 *     .references(() => users.id, { onDelete: "cascade" }),
 *   createdAt: bigint("created_at", { mode: "number" }).notNull(),
 * });
 * ```
 *
 * @module
 */
import {
  bigint,
  foreignKey,
  index,
  type PgBigInt53BuilderInitial,
  pgTable,
  type PgTableWithColumns,
  type PgTextBuilderInitial,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type {
  BuildColumns,
  ColumnBuilderBase,
  HasDefault,
  IsPrimaryKey,
  NotNull,
} from "drizzle-orm";
import { checkTablePrefix } from "../table_names.ts";

/**
 * A PostgreSQL table of this package, whatever its prefixed name.
 *
 * @ignore drizzle's own table type, which these docs do not show
 */
export type PgAuthTable<C extends Record<string, ColumnBuilderBase>> =
  PgTableWithColumns<{
    name: string;
    schema: undefined;
    columns: BuildColumns<string, C, "pg">;
    dialect: "pg";
  }>;
type Text<N extends string> = NotNull<
  PgTextBuilderInitial<N, [string, ...string[]]>
>;
type Int<N extends string> = NotNull<PgBigInt53BuilderInitial<N>>;

/**
 * Every table of the package on PostgreSQL, as drizzle's table types.
 *
 * @ignore drizzle's own types, which these docs do not show
 */
export interface PgAuthSchema {
  /** `users`: one row per account. */
  users: PgAuthTable<{
    id: IsPrimaryKey<Text<"id">>;
    email: Text<"email">;
    passwordHash: Text<"password_hash">;
    verifiedAt: HasDefault<Int<"verified_at">>;
    createdAt: Int<"created_at">;
  }>;
  /** `verification_tokens`: single-use tokens, stored hashed. */
  verificationTokens: PgAuthTable<{
    tokenHash: IsPrimaryKey<Text<"token_hash">>;
    purpose: Text<"purpose">;
    subject: Text<"subject">;
    email: Text<"email">;
    expiresAt: Int<"expires_at">;
    createdAt: Int<"created_at">;
  }>;
  /** `auth_events`: the security events behind a user's activity page. */
  authEvents: PgAuthTable<{
    id: IsPrimaryKey<Text<"id">>;
    subject: Text<"subject">;
    type: Text<"type">;
    at: Int<"at">;
    userAgent: PgTextBuilderInitial<"user_agent", [string, ...string[]]>;
    actor: PgTextBuilderInitial<"actor", [string, ...string[]]>;
    detail: PgTextBuilderInitial<"detail", [string, ...string[]]>;
  }>;
  /** `identities`: OpenID Connect (provider, provider subject) → user. */
  identities: PgAuthTable<{
    provider: Text<"provider">;
    providerSubject: Text<"provider_subject">;
    userId: Text<"user_id">;
    email: Text<"email">;
    createdAt: Int<"created_at">;
  }>;
  /** `passkeys`: WebAuthn credentials. */
  passkeys: PgAuthTable<{
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
  totpCredentials: PgAuthTable<{
    userId: IsPrimaryKey<Text<"user_id">>;
    secret: Text<"secret">;
    enabledAt: HasDefault<Int<"enabled_at">>;
    lastStep: HasDefault<Int<"last_step">>;
    createdAt: Int<"created_at">;
  }>;
  /** `recovery_codes`: a user's recovery codes, hashed. */
  recoveryCodes: PgAuthTable<{
    userId: Text<"user_id">;
    codeHash: Text<"code_hash">;
    createdAt: Int<"created_at">;
  }>;
  /** `api_keys`: personal access tokens, stored hashed. */
  apiKeys: PgAuthTable<{
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
  accountBans: PgAuthTable<{
    userId: IsPrimaryKey<Text<"user_id">>;
    reason: Text<"reason">;
    bannedBy: Text<"banned_by">;
    bannedAt: Int<"banned_at">;
  }>;
}

/**
 * The tables for a table prefix (the `tablePrefix` given to `migrate` and
 * the stores): `pgSchema("auth_").users` is `auth_users`.
 *
 * @param tablePrefix The prefix; `""` by default.
 * @returns The tables.
 * @throws {TypeError} When the prefix is not a plain SQL identifier start.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { getTableName } from "drizzle-orm";
 * import { pgSchema } from "@portcullis/sql/schema/postgresql";
 * assert.equal(getTableName(pgSchema("auth_").users), "auth_users");
 * ```
 */
export function pgSchema(tablePrefix = ""): PgAuthSchema {
  const p = checkTablePrefix(tablePrefix);
  const users = pgTable(`${p}users`, {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    verifiedAt: bigint("verified_at", { mode: "number" }).notNull().default(0),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [uniqueIndex(`${p}users_email_unique`).on(t.email)]);
  const verificationTokens = pgTable(`${p}verification_tokens`, {
    tokenHash: text("token_hash").primaryKey(),
    purpose: text("purpose").notNull(),
    subject: text("subject").notNull(),
    email: text("email").notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [
    index(`${p}verification_tokens_subject_purpose_idx`).on(
      t.subject,
      t.purpose,
    ),
  ]);
  const authEvents = pgTable(`${p}auth_events`, {
    id: text("id").primaryKey(),
    subject: text("subject").notNull(),
    type: text("type").notNull(),
    at: bigint("at", { mode: "number" }).notNull(),
    userAgent: text("user_agent"),
    actor: text("actor"),
    detail: text("detail"),
  }, (t) => [index(`${p}auth_events_subject_at_idx`).on(t.subject, t.at)]);
  const identities = pgTable(`${p}identities`, {
    provider: text("provider").notNull(),
    providerSubject: text("provider_subject").notNull(),
    userId: text("user_id").notNull(),
    email: text("email").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [
    primaryKey({
      name: `${p}identities_pkey`,
      columns: [t.provider, t.providerSubject],
    }),
    index(`${p}identities_user_idx`).on(t.userId),
    foreignKey({
      name: `${p}identities_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const passkeys = pgTable(`${p}passkeys`, {
    credentialId: text("credential_id").primaryKey(),
    userId: text("user_id").notNull(),
    publicKey: text("public_key").notNull(),
    counter: bigint("counter", { mode: "number" }).notNull(),
    transports: text("transports").notNull(),
    name: text("name").notNull(),
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
  const totpCredentials = pgTable(`${p}totp_credentials`, {
    userId: text("user_id").primaryKey(),
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
  const recoveryCodes = pgTable(`${p}recovery_codes`, {
    userId: text("user_id").notNull(),
    codeHash: text("code_hash").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  }, (t) => [
    primaryKey({
      name: `${p}recovery_codes_pkey`,
      columns: [t.userId, t.codeHash],
    }),
    foreignKey({
      name: `${p}recovery_codes_user_fk`,
      columns: [t.userId],
      foreignColumns: [users.id],
    }).onDelete("cascade"),
  ]);
  const apiKeys = pgTable(`${p}api_keys`, {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    name: text("name").notNull(),
    secretHash: text("secret_hash").notNull(),
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
  const accountBans = pgTable(`${p}account_bans`, {
    userId: text("user_id").primaryKey(),
    reason: text("reason").notNull(),
    bannedBy: text("banned_by").notNull(),
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

const schema = pgSchema();
/** `users`, unprefixed. */
export const users: PgAuthSchema["users"] = schema.users;
/** `verification_tokens`, unprefixed. */
export const verificationTokens: PgAuthSchema["verificationTokens"] =
  schema.verificationTokens;
/** `auth_events`, unprefixed. */
export const authEvents: PgAuthSchema["authEvents"] = schema.authEvents;
/** `identities`, unprefixed. */
export const identities: PgAuthSchema["identities"] = schema.identities;
/** `passkeys`, unprefixed. */
export const passkeys: PgAuthSchema["passkeys"] = schema.passkeys;
/** `totp_credentials`, unprefixed. */
export const totpCredentials: PgAuthSchema["totpCredentials"] =
  schema.totpCredentials;
/** `recovery_codes`, unprefixed. */
export const recoveryCodes: PgAuthSchema["recoveryCodes"] =
  schema.recoveryCodes;
/** `api_keys`, unprefixed. */
export const apiKeys: PgAuthSchema["apiKeys"] = schema.apiKeys;
/** `account_bans`, unprefixed. */
export const accountBans: PgAuthSchema["accountBans"] = schema.accountBans;
