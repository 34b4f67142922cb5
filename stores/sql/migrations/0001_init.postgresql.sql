-- portcullis @portcullis/auth, migration 0001: users and verification_tokens.
-- Dialect: PostgreSQL, PGlite. Every statement is idempotent; migrate(db) runs the same.
-- Generated from migrationStatements("postgresql"); tests/stores/sql_migrations_test.ts keeps them equal.

CREATE TABLE IF NOT EXISTS "users" (
  "id" TEXT PRIMARY KEY NOT NULL,
  "email" TEXT NOT NULL,
  "password_hash" TEXT NOT NULL,
  "verified_at" BIGINT NOT NULL DEFAULT 0,
  "created_at" BIGINT NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS "users_email_unique" ON "users" ("email");

CREATE TABLE IF NOT EXISTS "verification_tokens" (
  "token_hash" TEXT PRIMARY KEY NOT NULL,
  "purpose" TEXT NOT NULL,
  "subject" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "expires_at" BIGINT NOT NULL,
  "created_at" BIGINT NOT NULL
);

CREATE INDEX IF NOT EXISTS "verification_tokens_subject_purpose_idx" ON "verification_tokens" ("subject", "purpose");
