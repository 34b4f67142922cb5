DELETE FROM `identities` WHERE NOT EXISTS (SELECT 1 FROM `users` WHERE `users`.`id` = `identities`.`user_id`);--> statement-breakpoint
DELETE FROM `passkeys` WHERE NOT EXISTS (SELECT 1 FROM `users` WHERE `users`.`id` = `passkeys`.`user_id`);--> statement-breakpoint
DELETE FROM `totp_credentials` WHERE NOT EXISTS (SELECT 1 FROM `users` WHERE `users`.`id` = `totp_credentials`.`user_id`);--> statement-breakpoint
DELETE FROM `recovery_codes` WHERE NOT EXISTS (SELECT 1 FROM `users` WHERE `users`.`id` = `recovery_codes`.`user_id`);--> statement-breakpoint
ALTER TABLE `identities` ADD CONSTRAINT `identities_user_fk` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE `passkeys` ADD CONSTRAINT `passkeys_user_fk` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE `recovery_codes` ADD CONSTRAINT `recovery_codes_user_fk` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE `totp_credentials` ADD CONSTRAINT `totp_credentials_user_fk` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE cascade ON UPDATE no action;