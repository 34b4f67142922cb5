CREATE TABLE `account_bans` (
	`user_id` varchar(255) NOT NULL,
	`reason` text NOT NULL,
	`banned_by` varchar(255) NOT NULL,
	`banned_at` bigint NOT NULL,
	CONSTRAINT `account_bans_user_id` PRIMARY KEY(`user_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` varchar(32) NOT NULL,
	`user_id` varchar(255) NOT NULL,
	`name` varchar(255) NOT NULL,
	`secret_hash` varchar(64) NOT NULL,
	`scopes` text NOT NULL,
	`created_at` bigint NOT NULL,
	`expires_at` bigint NOT NULL,
	`last_used_at` bigint NOT NULL DEFAULT 0,
	CONSTRAINT `api_keys_id` PRIMARY KEY(`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
--> statement-breakpoint
ALTER TABLE `auth_events` ADD `actor` varchar(255);--> statement-breakpoint
ALTER TABLE `auth_events` ADD `detail` varchar(255);--> statement-breakpoint
ALTER TABLE `account_bans` ADD CONSTRAINT `account_bans_user_fk` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE `api_keys` ADD CONSTRAINT `api_keys_user_fk` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX `api_keys_user_idx` ON `api_keys` (`user_id`);