ALTER TABLE `passkeys` ADD `backup_eligible` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `passkeys` ADD `backed_up` integer DEFAULT 0 NOT NULL;