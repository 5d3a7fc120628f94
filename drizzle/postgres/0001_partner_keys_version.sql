-- A counter that every change to partner_keys bumps (from any connection, instance or process, raw SQL
-- included), so the signature check can keep key rows in memory and re-read them only after a change: the
-- PostgreSQL form of SQLite migration 0008 (a statement-level trigger instead of three row triggers).
CREATE TABLE "partner_keys_version" (
	"id" bigint PRIMARY KEY CHECK ("id" = 1),
	"version" bigint NOT NULL
);
--> statement-breakpoint
INSERT INTO "partner_keys_version" ("id", "version") VALUES (1, 0);
--> statement-breakpoint
CREATE FUNCTION "partner_keys_version_bump"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE "partner_keys_version" SET "version" = "version" + 1 WHERE "id" = 1;
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "partner_keys_version_change" AFTER INSERT OR UPDATE OR DELETE ON "partner_keys" FOR EACH STATEMENT EXECUTE FUNCTION "partner_keys_version_bump"();
