-- portcullis @portcullis/auth, migration 0001: users and verification_tokens.
-- Dialect: MySQL, MariaDB. Every statement is idempotent; migrate(db) runs the same.
-- Generated from migrationStatements("mysql"); tests/stores/sql_migrations_test.ts keeps them equal.

CREATE TABLE IF NOT EXISTS `users` (
  `id` VARCHAR(255) NOT NULL,
  `email` VARCHAR(320) NOT NULL,
  `password_hash` TEXT NOT NULL,
  `verified_at` BIGINT NOT NULL DEFAULT 0,
  `created_at` BIGINT NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `users_email_unique` (`email`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `verification_tokens` (
  `token_hash` VARCHAR(255) NOT NULL,
  `purpose` VARCHAR(255) NOT NULL,
  `subject` VARCHAR(255) NOT NULL,
  `email` VARCHAR(320) NOT NULL,
  `expires_at` BIGINT NOT NULL,
  `created_at` BIGINT NOT NULL,
  PRIMARY KEY (`token_hash`),
  KEY `verification_tokens_subject_purpose_idx` (`subject`, `purpose`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
