CREATE TABLE `auth_events` (
	`id` varchar(64) NOT NULL,
	`subject` varchar(255) NOT NULL,
	`type` varchar(32) NOT NULL,
	`at` bigint NOT NULL,
	`user_agent` text,
	CONSTRAINT `auth_events_id` PRIMARY KEY(`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
CREATE TABLE `identities` (
	`provider` varchar(64) NOT NULL,
	`provider_subject` varchar(255) NOT NULL,
	`user_id` varchar(255) NOT NULL,
	`email` varchar(320) NOT NULL,
	`created_at` bigint NOT NULL,
	CONSTRAINT `identities_provider_provider_subject_pk` PRIMARY KEY(`provider`,`provider_subject`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
CREATE TABLE `passkeys` (
	`credential_id` varchar(1400) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	`user_id` varchar(255) NOT NULL,
	`public_key` text NOT NULL,
	`counter` bigint NOT NULL,
	`transports` varchar(255) NOT NULL,
	`name` varchar(255) NOT NULL,
	`created_at` bigint NOT NULL,
	`last_used_at` bigint NOT NULL DEFAULT 0,
	CONSTRAINT `passkeys_credential_id` PRIMARY KEY(`credential_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
CREATE TABLE `recovery_codes` (
	`user_id` varchar(255) NOT NULL,
	`code_hash` varchar(64) NOT NULL,
	`created_at` bigint NOT NULL,
	CONSTRAINT `recovery_codes_user_id_code_hash_pk` PRIMARY KEY(`user_id`,`code_hash`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
CREATE TABLE `totp_credentials` (
	`user_id` varchar(255) NOT NULL,
	`secret` text NOT NULL,
	`enabled_at` bigint NOT NULL DEFAULT 0,
	`last_step` bigint NOT NULL DEFAULT 0,
	`created_at` bigint NOT NULL,
	CONSTRAINT `totp_credentials_user_id` PRIMARY KEY(`user_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
CREATE TABLE `users` (
	`id` varchar(255) NOT NULL,
	`email` varchar(320) NOT NULL,
	`password_hash` text NOT NULL,
	`verified_at` bigint NOT NULL DEFAULT 0,
	`created_at` bigint NOT NULL,
	CONSTRAINT `users_id` PRIMARY KEY(`id`),
	CONSTRAINT `users_email_unique` UNIQUE(`email`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
CREATE TABLE `verification_tokens` (
	`token_hash` varchar(255) NOT NULL,
	`purpose` varchar(255) NOT NULL,
	`subject` varchar(255) NOT NULL,
	`email` varchar(320) NOT NULL,
	`expires_at` bigint NOT NULL,
	`created_at` bigint NOT NULL,
	CONSTRAINT `verification_tokens_token_hash` PRIMARY KEY(`token_hash`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
CREATE INDEX `auth_events_subject_at_idx` ON `auth_events` (`subject`,`at`);--> statement-breakpoint
CREATE INDEX `identities_user_idx` ON `identities` (`user_id`);--> statement-breakpoint
CREATE INDEX `passkeys_user_idx` ON `passkeys` (`user_id`);--> statement-breakpoint
CREATE INDEX `verification_tokens_subject_purpose_idx` ON `verification_tokens` (`subject`,`purpose`);