-- portcullis @portcullis/auth, migration 0002: auth_events (the account lifecycle).
-- Dialect: PostgreSQL, PGlite. Every statement is idempotent; migrate(db) runs the same.
-- Generated from lifecycleMigrationStatements("postgresql"); tests/stores/sql_lifecycle_migrations_test.ts keeps them equal.

CREATE TABLE IF NOT EXISTS "auth_events" (
  "id" TEXT PRIMARY KEY NOT NULL,
  "subject" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "at" BIGINT NOT NULL,
  "user_agent" TEXT
);

CREATE INDEX IF NOT EXISTS "auth_events_subject_at_idx" ON "auth_events" ("subject", "at");
