DELETE FROM `identities` WHERE NOT EXISTS (SELECT 1 FROM `users` WHERE `users`.`id` = `identities`.`user_id`);--> statement-breakpoint
DELETE FROM `passkeys` WHERE NOT EXISTS (SELECT 1 FROM `users` WHERE `users`.`id` = `passkeys`.`user_id`);--> statement-breakpoint
DELETE FROM `totp_credentials` WHERE NOT EXISTS (SELECT 1 FROM `users` WHERE `users`.`id` = `totp_credentials`.`user_id`);--> statement-breakpoint
DELETE FROM `recovery_codes` WHERE NOT EXISTS (SELECT 1 FROM `users` WHERE `users`.`id` = `recovery_codes`.`user_id`);--> statement-breakpoint
CREATE TABLE `__new_identities` (
	`provider` text NOT NULL,
	`provider_subject` text NOT NULL,
	`user_id` text NOT NULL,
	`email` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`provider`, `provider_subject`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_identities`("provider", "provider_subject", "user_id", "email", "created_at") SELECT "provider", "provider_subject", "user_id", "email", "created_at" FROM `identities`;--> statement-breakpoint
DROP TABLE `identities`;--> statement-breakpoint
ALTER TABLE `__new_identities` RENAME TO `identities`;--> statement-breakpoint
CREATE INDEX `identities_user_idx` ON `identities` (`user_id`);--> statement-breakpoint
CREATE TABLE `__new_passkeys` (
	`credential_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`public_key` text NOT NULL,
	`counter` integer NOT NULL,
	`transports` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_passkeys`("credential_id", "user_id", "public_key", "counter", "transports", "name", "created_at", "last_used_at") SELECT "credential_id", "user_id", "public_key", "counter", "transports", "name", "created_at", "last_used_at" FROM `passkeys`;--> statement-breakpoint
DROP TABLE `passkeys`;--> statement-breakpoint
ALTER TABLE `__new_passkeys` RENAME TO `passkeys`;--> statement-breakpoint
CREATE INDEX `passkeys_user_idx` ON `passkeys` (`user_id`);--> statement-breakpoint
CREATE TABLE `__new_recovery_codes` (
	`user_id` text NOT NULL,
	`code_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `code_hash`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_recovery_codes`("user_id", "code_hash", "created_at") SELECT "user_id", "code_hash", "created_at" FROM `recovery_codes`;--> statement-breakpoint
DROP TABLE `recovery_codes`;--> statement-breakpoint
ALTER TABLE `__new_recovery_codes` RENAME TO `recovery_codes`;--> statement-breakpoint
CREATE TABLE `__new_totp_credentials` (
	`user_id` text PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`enabled_at` integer DEFAULT 0 NOT NULL,
	`last_step` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_totp_credentials`("user_id", "secret", "enabled_at", "last_step", "created_at") SELECT "user_id", "secret", "enabled_at", "last_step", "created_at" FROM `totp_credentials`;--> statement-breakpoint
DROP TABLE `totp_credentials`;--> statement-breakpoint
ALTER TABLE `__new_totp_credentials` RENAME TO `totp_credentials`;