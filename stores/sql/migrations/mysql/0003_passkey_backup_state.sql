ALTER TABLE `passkeys` ADD `backup_eligible` bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `passkeys` ADD `backed_up` bigint DEFAULT 0 NOT NULL;