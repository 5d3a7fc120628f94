-- A job's latest run, its latest success and its failures since, looked up by name on an index that also holds the
-- outcome and the ORDER BY's tie-breaker, and the failed runs of every job on a partial index of their own (issue 72:
-- PostgreSQL's generic plans walked job_runs_started_idx for them, 60 ms a /metrics scrape at 43,200 runs). SQLite
-- keeps the rowid in every index already; the columns are the same on both engines.
-- (PostgreSQL: drizzle/postgres/0014_job_run_lookups.sql.)
DROP INDEX `job_runs_name_started_idx`;--> statement-breakpoint
CREATE INDEX `job_runs_name_ok_started_idx` ON `job_runs` (`name`,`ok`,`started_at`,`id`);--> statement-breakpoint
CREATE INDEX `job_runs_failed_idx` ON `job_runs` (`started_at`) WHERE ok = 0;--> statement-breakpoint
CREATE INDEX `job_runs_name_started_idx` ON `job_runs` (`name`,`started_at`,`id`);
