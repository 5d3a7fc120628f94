-- The messenger on the storage port (issue 28): the PostgreSQL form of SQLite migration 0026. Version counters of
-- what instances cache (the games configuration, closed days of the players window), and the stats fold's flag
-- per ledger row in place of its watermark (ids commit out of order here, so "ids up to N" could skip a row).
CREATE TABLE "messenger_versions" (
	"name" text PRIMARY KEY,
	"version" bigint NOT NULL DEFAULT 0,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messenger_ledger" ADD COLUMN "folded" bigint NOT NULL DEFAULT 0;
--> statement-breakpoint
UPDATE "messenger_ledger" SET "folded" = 1 WHERE "id" <= coalesce((SELECT "ledger_id" FROM "messenger_stats_fold" WHERE "id" = 1), 0);
--> statement-breakpoint
DROP TABLE "messenger_stats_fold";
--> statement-breakpoint
CREATE INDEX "messenger_ledger_unfolded_idx" ON "messenger_ledger" ("id") WHERE folded = 0;
