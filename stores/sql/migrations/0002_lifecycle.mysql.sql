-- portcullis @portcullis/auth, migration 0002: auth_events (the account lifecycle).
-- Dialect: MySQL, MariaDB. Every statement is idempotent; migrate(db) runs the same.
-- Generated from lifecycleMigrationStatements("mysql"); tests/stores/sql_lifecycle_migrations_test.ts keeps them equal.

CREATE TABLE IF NOT EXISTS `auth_events` (
  `id` VARCHAR(64) NOT NULL,
  `subject` VARCHAR(255) NOT NULL,
  `type` VARCHAR(32) NOT NULL,
  `at` BIGINT NOT NULL,
  `user_agent` TEXT NULL,
  PRIMARY KEY (`id`),
  KEY `auth_events_subject_at_idx` (`subject`, `at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
