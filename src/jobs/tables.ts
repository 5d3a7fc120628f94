import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One row per job run: the status engine's reliability numbers (streaks, MTTR) are computed from these. */
export const jobRuns = sqliteTable(
  "job_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    ok: integer("ok", { mode: "boolean" }),
    error: text("error"),
    durationMs: integer("duration_ms"),
    trigger: text("trigger").notNull().default("schedule"),
    /** The instance that ran it (HERALD_INSTANCE_ID, or made at start); null for runs recorded before instances were named. */
    instanceId: text("instance_id"),
  },
  (t) => [
    // "latest runs of job X" (status checks, `herald jobs list`) and pruning by age. Both name lookups end in `id`,
    // the tie-breaker of their ORDER BY started_at DESC, id DESC: PostgreSQL's generic plan of a prepared lookup
    // (chosen after five runs, and priced without the job's name) otherwise walked job_runs_started_idx and
    // filtered by name, 3–4 ms a lookup at 43,200 runs, 60 ms a /metrics scrape (docs/storage-port.md "Generic plans on PostgreSQL").
    index("job_runs_name_started_idx").on(t.name, t.startedAt, t.id),
    // A job's latest success, its failures since then (the chain freshness proofs, /metrics, `herald jobs list`).
    index("job_runs_name_ok_started_idx").on(t.name, t.ok, t.startedAt, t.id),
    // Failed runs since a time, every job (the jobs-failing alert, /metrics): the few failures, not the window's runs.
    index("job_runs_failed_idx").on(t.startedAt).where(sql`ok = 0`),
    index("job_runs_started_idx").on(t.startedAt),
    // A job taken over closes the runs another instance left unfinished (closeAbandonedRuns: WHERE name = ? AND
    // finished_at IS NULL …): through job_runs_name_started_idx that walked every run of the job kept 90 days; only
    // unfinished runs have an entry here, a handful at most.
    index("job_runs_unfinished_idx").on(t.name).where(sql`finished_at IS NULL`),
  ],
);

/**
 * Job leadership: a singleton job (snapshots, proofs, retention) runs on the one instance that holds its
 * lease; the holder renews it each period, and another instance takes it over only once `until_ms` has passed
 * (compare-and-swap with expiry, as Grafana's server_lock). Works the same on SQLite, where there is one instance.
 */
export const jobLeases = sqliteTable("job_leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  untilMs: integer("until_ms").notNull(),
  acquiredAtMs: integer("acquired_at_ms").notNull(),
});
