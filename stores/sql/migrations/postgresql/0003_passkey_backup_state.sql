ALTER TABLE "passkeys" ADD COLUMN "backup_eligible" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "passkeys" ADD COLUMN "backed_up" bigint DEFAULT 0 NOT NULL;