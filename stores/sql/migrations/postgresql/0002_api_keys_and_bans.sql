CREATE TABLE "account_bans" (
	"user_id" text PRIMARY KEY NOT NULL,
	"reason" text NOT NULL,
	"banned_by" text NOT NULL,
	"banned_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"secret_hash" text NOT NULL,
	"scopes" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"last_used_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "auth_events" ADD COLUMN "actor" text;--> statement-breakpoint
ALTER TABLE "auth_events" ADD COLUMN "detail" text;--> statement-breakpoint
ALTER TABLE "account_bans" ADD CONSTRAINT "account_bans_user_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_user_idx" ON "api_keys" USING btree ("user_id");