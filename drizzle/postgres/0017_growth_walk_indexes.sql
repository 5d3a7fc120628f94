-- Reads that walked an index testing a column it does not hold, so a rare value read every row (SQLite:
-- drizzle/0041_growth_walk_indexes.sql):
-- the public system status's "last success" of an RPC host failing for days (hostLatest);
CREATE INDEX "chain_rpc_calls_host_ok_idx" ON "chain_rpc_calls" ("host", "at") WHERE outcome = 'ok';
--> statement-breakpoint
-- the link-inbox export's last_digest_warn window: a source's latest warn and the edges of its streak (warnStreakOf);
CREATE INDEX "ops_alert_runs_status_idx" ON "ops_alert_runs" ("source", "status", "at");
--> statement-breakpoint
CREATE INDEX "ops_alert_runs_name_idx" ON "ops_alert_runs" ("source", "name", "status", "at");
--> statement-breakpoint
-- the transparency triage's "did a complete run flag this signature" (flaggedByCompleteRun).
CREATE INDEX "audit_rows_flagged_idx" ON "audit_rows" ("signature") WHERE severity_rank > 0;
