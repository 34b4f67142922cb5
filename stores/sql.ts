/**
 * SQL stores over drizzle-orm: `SQLCredentialStore` (users) and
 * `SQLVerificationTokenStore` (single-use tokens), on SQLite/libSQL/Turso/D1,
 * PostgreSQL (`postgres`, PGlite) and MySQL/MariaDB (`mysql2`), plus
 * `migrate(db)` and the migration SQL per dialect.
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
 * } from "@portcullis/auth/stores/sql";
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
export { SQLCredentialStore } from "./sql/credential_store.ts";
export { SQLVerificationTokenStore } from "./sql/verification_token_store.ts";
// Sign-in methods (migration 0003).
export { type SQLTotpRecord, SQLTotpStore } from "./sql/totp_store.ts";
export {
  type SQLIdentityRecord,
  SQLIdentityStore,
} from "./sql/identity_store.ts";
export { type SQLPasskeyRecord, SQLPasskeyStore } from "./sql/passkey_store.ts";
export {
  signInMigrationStatements,
  type SignInTableNames,
  signInTableNames,
} from "./sql/signin_migrations.ts";
export {
  migrate,
  migrationStatements,
  type SQLStoreOptions,
  type SQLTableNames,
  tableNames,
} from "./sql/migrations.ts";
export {
  detectDialect,
  type SQLDatabase,
  type SQLDialect,
} from "./sql/dialect.ts";

// The protocols the stores implement, re-exported as types so that this
// entry's documentation is whole. (`SQLDatabase` names drizzle's database
// classes, which stay drizzle's: re-exporting them would pull all of
// drizzle's API into these docs.)
export type {
  CreateUserResult,
  CredentialStore,
  NewUserRecord,
  UserRecord,
} from "../lib/authn/credential_store.ts";
export type {
  VerificationTokenRecord,
  VerificationTokenStore,
} from "../lib/verification/verification_token_store.ts";
