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
  },
  (t) => [
    // "latest runs of job X" (status checks, `herald jobs list`) and pruning by age.
    index("job_runs_name_started_idx").on(t.name, t.startedAt),
    index("job_runs_started_idx").on(t.startedAt),
  ],
);
