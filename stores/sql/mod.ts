/**
 * SQL stores over drizzle-orm: `SQLCredentialStore` (users) and
 * `SQLVerificationTokenStore` (single-use tokens), on SQLite/libSQL/Turso/D1,
 * PostgreSQL (`postgres`, PGlite) and MySQL/MariaDB (`mysql2`), plus
 * `migrate(db)`, which applies the versioned migrations generated from the
 * drizzle schema (`@portcullis/sql/schema/sqlite`, `…/postgresql`,
 * `…/mysql`) and keeps a journal.
 *
 * This subpath imports drizzle-orm (never a driver): the application makes
 * the drizzle database with the driver it chose and passes it in. The
 * dialect is detected from it.
 *
 * @example Usage
 * ```ts
 * import { drizzle } from "drizzle-orm/libsql";
 * import {
 *   migrate,
 *   SQLCredentialStore,
 *   SQLVerificationTokenStore,
 * } from "@portcullis/sql";
 *
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * const credentials = new SQLCredentialStore(db);
 * const tokens = new SQLVerificationTokenStore(db);
 * db.$client.close();
 * ```
 *
 * @module
 */
export { SQLCredentialStore } from "./credential_store.ts";
export { SQLVerificationTokenStore } from "./verification_token_store.ts";
export { SQLAuthEventStore } from "./auth_event_store.ts";
// Sign-in methods.
export { type SQLTotpRecord, SQLTotpStore } from "./totp_store.ts";
export { type SQLIdentityRecord, SQLIdentityStore } from "./identity_store.ts";
export { type SQLPasskeyRecord, SQLPasskeyStore } from "./passkey_store.ts";
// API keys and the operator's console.
export {
  type SQLApiKeyRecord,
  SQLApiKeyStore,
  type SQLNewApiKey,
} from "./api_key_store.ts";
export { type SQLBanRecord, SQLBanStore } from "./ban_store.ts";
export {
  type SQLDirectoryPage,
  type SQLDirectoryQuery,
  type SQLDirectoryUser,
  SQLUserDirectory,
} from "./user_directory.ts";
export {
  type AccessTableNames,
  accessTableNames,
  lifecycleTableNames,
  type SignInTableNames,
  signInTableNames,
  type SQLLifecycleTableNames,
  type SQLStoreOptions,
  type SQLTableNames,
  tableNames,
} from "./table_names.ts";
export { checkMigrations, migrate } from "./migrate.ts";
export {
  SQLMigrationError,
  type SQLMigrationErrorCode,
} from "./migration_error.ts";
export { migrationSQL, type SQLMigrationStep } from "./migration_sql.ts";
export { detectDialect, type SQLDatabase, type SQLDialect } from "./dialect.ts";

// The protocols the stores implement, re-exported as types so that this
// entry's documentation is whole. (`SQLDatabase` names drizzle's database
// classes, which stay drizzle's: re-exporting them would pull all of
// drizzle's API into these docs.)
export type { CredentialStore } from "@portcullis/auth";
export type {
  CreateUserResult,
  NewUserRecord,
  UpdateEmailOptions,
  UpdateEmailResult,
  UserRecord,
} from "@portcullis/auth/passwords";
export type { SecurityEvent, SecurityEventType } from "@portcullis/auth/events";
export { SECURITY_EVENT_TYPES } from "@portcullis/auth/events";
export type { SecurityEventStore } from "@portcullis/auth/events";
export type {
  VerificationTokenRecord,
  VerificationTokenStore,
} from "@portcullis/auth/verification";
export type { ApiKeyStore, StoredApiKey } from "@portcullis/auth/sessions";
