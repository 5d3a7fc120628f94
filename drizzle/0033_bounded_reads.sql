-- Indexes that bound three reads (issue 72): a partner's delivery health counts its webhooks' deliveries in the states that
-- stay small, and those settled in the last hour, webhook by webhook (deliveries_webhook_idx gains updated_at, which
-- changes with status, so no write is added); a job taken over closes the runs left unfinished through a partial index
-- holding only those (closeAbandonedRuns walked every run of the job kept 90 days); an operator lowering a mission's
-- target reads the highest unfinished progress as one index entry (highestUnfinishedProgress).
-- (PostgreSQL: drizzle/postgres/0009_bounded_reads.sql.)
DROP INDEX `deliveries_webhook_idx`;--> statement-breakpoint
CREATE INDEX `deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`status`,`updated_at`);--> statement-breakpoint
CREATE INDEX `job_runs_unfinished_idx` ON `job_runs` (`name`) WHERE finished_at IS NULL;--> statement-breakpoint
CREATE INDEX `messenger_mission_enrollments_progress_idx` ON `messenger_mission_enrollments` (`mission_key`,`completed_at`,`progress`);