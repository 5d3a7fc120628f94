-- Each owner's dead letters counted as they change, not per read (issue 72): a partner's delivery health and /metrics
-- read one row per owner where they counted every dead letter. Kept by row triggers that fire only when a row enters
-- or leaves the dead-letter state, so every writer keeps it right (the dispatcher, a replay, the prune, a sandbox
-- reset, raw SQL); counted once here from the deliveries so far. (SQLite: drizzle/0037_dead_letter_counts.sql.)
CREATE TABLE "webhook_dead_letter_counts" (
	"partner" text NOT NULL,
	"mode" text NOT NULL,
	"n" bigint NOT NULL DEFAULT 0,
	CONSTRAINT "webhook_dead_letter_counts_partner_mode_pk" PRIMARY KEY ("partner", "mode")
);
--> statement-breakpoint
INSERT INTO "webhook_dead_letter_counts" ("partner", "mode", "n")
SELECT "partner", "mode", count(*) FROM "webhook_deliveries" WHERE "status" = 'dead_letter' GROUP BY "partner", "mode";
--> statement-breakpoint
CREATE FUNCTION "webhook_dead_letters_count"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD."status" = 'dead_letter') THEN
		UPDATE "webhook_dead_letter_counts" SET "n" = "n" - 1 WHERE "partner" = OLD."partner" AND "mode" = OLD."mode";
	END IF;
	IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW."status" = 'dead_letter') THEN
		INSERT INTO "webhook_dead_letter_counts" ("partner", "mode", "n") VALUES (NEW."partner", NEW."mode", 1)
		ON CONFLICT ("partner", "mode") DO UPDATE SET "n" = "webhook_dead_letter_counts"."n" + 1;
	END IF;
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "webhook_dead_letters_insert" AFTER INSERT ON "webhook_deliveries"
FOR EACH ROW WHEN (NEW."status" = 'dead_letter') EXECUTE FUNCTION "webhook_dead_letters_count"();
--> statement-breakpoint
CREATE TRIGGER "webhook_dead_letters_update" AFTER UPDATE OF "status" ON "webhook_deliveries"
FOR EACH ROW WHEN ((OLD."status" = 'dead_letter') IS DISTINCT FROM (NEW."status" = 'dead_letter')) EXECUTE FUNCTION "webhook_dead_letters_count"();
--> statement-breakpoint
CREATE TRIGGER "webhook_dead_letters_delete" AFTER DELETE ON "webhook_deliveries"
FOR EACH ROW WHEN (OLD."status" = 'dead_letter') EXECUTE FUNCTION "webhook_dead_letters_count"();
