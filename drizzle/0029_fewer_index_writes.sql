-- Fewer index entries written on the two busiest append paths (PostgreSQL: drizzle/postgres/0005_fewer_index_writes.sql).
-- attempts_delivery_idx (delivery_id) repeated the first column of attempts_delivery_no_idx (delivery_id, attempt_no),
-- which serves every read by delivery and the foreign key's checks. request_log_key_at_idx keeps only the rows of
-- partner keys: its readers ask for one key (key_ref = …, key_ref IN …), and a request without a key wrote an entry
-- of NULLs there for nothing.
DROP INDEX `attempts_delivery_idx`;--> statement-breakpoint
DROP INDEX `request_log_key_at_idx`;--> statement-breakpoint
CREATE INDEX `request_log_key_at_idx` ON `request_log` (`key_ref`,`at`) WHERE key_ref IS NOT NULL;
