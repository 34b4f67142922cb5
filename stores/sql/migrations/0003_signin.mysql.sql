-- portcullis @portcullis/sql, migration 0003: identities, passkeys, totp_credentials and recovery_codes (sign-in methods).
-- Dialect: MySQL, MariaDB. Every statement is idempotent; migrate(db) runs the same.
-- Generated from signInMigrationStatements("mysql"); tests/stores/sql_signin_migrations_test.ts keeps them equal.

CREATE TABLE IF NOT EXISTS `identities` (
  `provider` VARCHAR(64) NOT NULL,
  `provider_subject` VARCHAR(255) NOT NULL,
  `user_id` VARCHAR(255) NOT NULL,
  `email` VARCHAR(320) NOT NULL,
  `created_at` BIGINT NOT NULL,
  PRIMARY KEY (`provider`, `provider_subject`),
  KEY `identities_user_idx` (`user_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `passkeys` (
  `credential_id` VARCHAR(1400) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  `user_id` VARCHAR(255) NOT NULL,
  `public_key` TEXT NOT NULL,
  `counter` BIGINT NOT NULL,
  `transports` VARCHAR(255) NOT NULL,
  `name` VARCHAR(255) NOT NULL,
  `created_at` BIGINT NOT NULL,
  `last_used_at` BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (`credential_id`),
  KEY `passkeys_user_idx` (`user_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `totp_credentials` (
  `user_id` VARCHAR(255) NOT NULL,
  `secret` TEXT NOT NULL,
  `enabled_at` BIGINT NOT NULL DEFAULT 0,
  `last_step` BIGINT NOT NULL DEFAULT 0,
  `created_at` BIGINT NOT NULL,
  PRIMARY KEY (`user_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `recovery_codes` (
  `user_id` VARCHAR(255) NOT NULL,
  `code_hash` VARCHAR(64) NOT NULL,
  `created_at` BIGINT NOT NULL,
  PRIMARY KEY (`user_id`, `code_hash`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
