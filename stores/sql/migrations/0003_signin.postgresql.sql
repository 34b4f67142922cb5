-- portcullis @portcullis/sql, migration 0003: identities, passkeys, totp_credentials and recovery_codes (sign-in methods).
-- Dialect: PostgreSQL, PGlite, Neon. Every statement is idempotent; migrate(db) runs the same.
-- Generated from signInMigrationStatements("postgresql"); tests/stores/sql_signin_migrations_test.ts keeps them equal.

CREATE TABLE IF NOT EXISTS "identities" (
  "provider" TEXT NOT NULL,
  "provider_subject" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL,
  PRIMARY KEY ("provider", "provider_subject")
);

CREATE INDEX IF NOT EXISTS "identities_user_idx" ON "identities" ("user_id");

CREATE TABLE IF NOT EXISTS "passkeys" (
  "credential_id" TEXT PRIMARY KEY NOT NULL,
  "user_id" TEXT NOT NULL,
  "public_key" TEXT NOT NULL,
  "counter" BIGINT NOT NULL,
  "transports" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL,
  "last_used_at" BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX IF NOT EXISTS "passkeys_user_idx" ON "passkeys" ("user_id");

CREATE TABLE IF NOT EXISTS "totp_credentials" (
  "user_id" TEXT PRIMARY KEY NOT NULL,
  "secret" TEXT NOT NULL,
  "enabled_at" BIGINT NOT NULL DEFAULT 0,
  "last_step" BIGINT NOT NULL DEFAULT 0,
  "created_at" BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS "recovery_codes" (
  "user_id" TEXT NOT NULL,
  "code_hash" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL,
  PRIMARY KEY ("user_id", "code_hash")
);
