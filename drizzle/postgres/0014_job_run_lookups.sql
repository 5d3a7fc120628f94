-- A job's latest run, its latest success and its failures since, looked up by name on an index that also holds the
-- outcome and the ORDER BY's tie-breaker, and the failed runs of every job on a partial index of their own. A prepared
-- lookup runs on a generic plan after five runs, priced without the job's name: with job_runs_name_started_idx
-- (name, started_at) alone it walked job_runs_started_idx backwards and filtered by name and outcome, 3–4 ms a lookup
-- at 43,200 runs and 60 ms a /metrics scrape (issue 72). (SQLite: drizzle/0038_job_run_lookups.sql.)
DROP INDEX "job_runs_name_started_idx";
--> statement-breakpoint
CREATE INDEX "job_runs_name_ok_started_idx" ON "job_runs" ("name", "ok", "started_at", "id");
--> statement-breakpoint
CREATE INDEX "job_runs_failed_idx" ON "job_runs" ("started_at") WHERE ok = 0;
--> statement-breakpoint
CREATE INDEX "job_runs_name_started_idx" ON "job_runs" ("name", "started_at", "id");
