import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { formatUnits } from "../chain/service";
import type { AnomalyType, Severity } from "./glossary";
import { storedThresholds, thresholdsView } from "./thresholds";

// Audit runs as the reports read them: one row each with its precomputed aggregates, and the run selectors
// (a run id, latest, previous, a UTC date) every route with run, run_a or run_b accepts.

export interface RunRow {
  id: number;
  label: string;
  day: string;
  started_at: string;
  finished_at: string | null;
  job_run_id: number | null;
  mint: string;
  decimals: number;
  is_complete: number;
  error: string | null;
  rows_total: number;
  signatures_with_anomalies: number;
  overall: "ok" | "warn" | "bad" | null;
  severity_counts: string;
  type_counts: string;
  max_abs_delta_raw: string;
  thresholds: string;
  transactions_examined: number;
}

const COLUMNS =
  "id, label, day, started_at, finished_at, job_run_id, mint, decimals, is_complete, error, rows_total, signatures_with_anomalies, overall, severity_counts, type_counts, max_abs_delta_raw, thresholds, transactions_examined";

export function getRun(ctx: AppContext, id: number): RunRow | null {
  return ctx.db.sqlite.query(`SELECT ${COLUMNS} FROM audit_runs WHERE id = ?`).get(id) as RunRow | null;
}

/** The newest complete run with an id below `beforeId` (all when null): audit_runs_complete_idx. */
export function completeRunBefore(ctx: AppContext, beforeId: number | null): RunRow | null {
  return ctx.db.sqlite
    .query(`SELECT ${COLUMNS} FROM audit_runs WHERE is_complete = 1 AND id < ? ORDER BY id DESC LIMIT 1`)
    .get(beforeId ?? Number.MAX_SAFE_INTEGER) as RunRow | null;
}

/** Up to `limit` complete runs with id ≤ upTo, newest first. */
export function completeRunsUpTo(ctx: AppContext, upTo: number, limit: number): RunRow[] {
  return ctx.db.sqlite.query(`SELECT ${COLUMNS} FROM audit_runs WHERE is_complete = 1 AND id <= ? ORDER BY id DESC LIMIT ?`).all(upTo, limit) as RunRow[];
}

export function countCompleteUpTo(ctx: AppContext, upTo: number): number {
  return (ctx.db.sqlite.query("SELECT count(*) AS n FROM audit_runs WHERE is_complete = 1 AND id <= ?").get(upTo) as { n: number }).n;
}

/** Overall of the runs with from ≤ id ≤ to; incomplete runs count as other. */
export function statusCountsBetween(ctx: AppContext, from: number, to: number) {
  const rows = ctx.db.sqlite
    .query("SELECT CASE WHEN is_complete = 1 THEN overall ELSE 'other' END AS k, count(*) AS n FROM audit_runs WHERE id >= ? AND id <= ? GROUP BY k")
    .all(from, to) as Array<{ k: string; n: number }>;
  const out = { ok: 0, warn: 0, bad: 0, other: 0 };
  for (const r of rows) out[(r.k in out ? r.k : "other") as keyof typeof out] += r.n;
  return out;
}

export function listRunsPage(ctx: AppContext, limit: number, offset: number, beforeId: number | null): RunRow[] {
  return ctx.db.sqlite
    .query(`SELECT ${COLUMNS} FROM audit_runs WHERE id < ? ORDER BY id DESC LIMIT ? OFFSET ?`)
    .all(beforeId ?? Number.MAX_SAFE_INTEGER, limit, offset) as RunRow[];
}

export function countRuns(ctx: AppContext): number {
  return (ctx.db.sqlite.query("SELECT count(*) AS n FROM audit_runs").get() as { n: number }).n;
}

/** Complete runs whose label falls in [from, to] (ISO text), oldest first. */
export function completeRunsBetween(ctx: AppContext, from: string, to: string): RunRow[] {
  return ctx.db.sqlite.query(`SELECT ${COLUMNS} FROM audit_runs WHERE is_complete = 1 AND label >= ? AND label <= ? ORDER BY id`).all(from, to) as RunRow[];
}

export type Selector = { kind: "id"; id: number } | { kind: "latest" } | { kind: "previous" } | { kind: "date"; day: string };

const badSelector = (field: string, raw: string) => {
  const problem = `must be a run id, latest, previous or a UTC date (YYYY-MM-DD); got ${JSON.stringify(raw.slice(0, 40))}`;
  return new AppError("invalid_query", `${field} ${problem}`, { details: [{ field, problem }] });
};

/** Parses a selector; a malformed one is a 400 naming the parameter. */
export function parseSelector(raw: string, field: string): Selector {
  const v = raw.trim();
  if (v === "latest" || v === "previous") return { kind: v };
  if (/^[1-9]\d{0,15}$/.test(v) && Number(v) <= Number.MAX_SAFE_INTEGER) return { kind: "id", id: Number(v) };
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (m) {
    const d = new Date(`${v}T00:00:00Z`);
    if (!Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v) return { kind: "date", day: v };
  }
  throw badSelector(field, raw);
}

/** The run a selector names, or null when none does. */
export function runOf(ctx: AppContext, s: Selector): RunRow | null {
  switch (s.kind) {
    case "id":
      return getRun(ctx, s.id);
    case "latest":
      return completeRunBefore(ctx, null);
    case "previous": {
      const latest = completeRunBefore(ctx, null);
      return latest ? completeRunBefore(ctx, latest.id) : null;
    }
    case "date":
      return ctx.db.sqlite.query(`SELECT ${COLUMNS} FROM audit_runs WHERE day = ? AND is_complete = 1 ORDER BY id DESC LIMIT 1`).get(s.day) as RunRow | null;
  }
}

/**
 * The run for a query parameter. Absent: the fallback selector, and null when it names nothing yet (a new
 * deployment). Given: the run it names, or 404 run_not_found.
 */
export function selectRun(
  ctx: AppContext,
  raw: string | undefined,
  field: string,
  fallback: "latest" | "previous" = "latest",
): { selector: string; run: RunRow | null } {
  if (raw === undefined || raw === "") return { selector: fallback, run: runOf(ctx, { kind: fallback }) };
  const run = runOf(ctx, parseSelector(raw, field));
  if (!run)
    throw new AppError(
      "run_not_found",
      `${field}=${JSON.stringify(raw.slice(0, 40))} names no ${raw === "latest" || raw === "previous" || /-/.test(raw) ? "complete " : ""}audit run`,
      { details: [{ field, problem: "names no audit run" }] },
    );
  return { selector: raw.trim(), run };
}

export const parseCounts = <K extends string>(text: string) => JSON.parse(text) as Record<K, number>;

/** A run as runs.json and summary.json show it. */
export function runView(r: RunRow, selectedId: number | null) {
  return {
    run: r.id,
    label: r.label,
    is_complete: r.is_complete === 1,
    is_selected: r.id === selectedId,
    overall: r.is_complete === 1 ? r.overall : null,
    rows_total: r.rows_total,
    signatures_with_anomalies: r.signatures_with_anomalies,
    max_abs_delta: formatUnits(BigInt(r.max_abs_delta_raw), r.decimals),
    severity_counts: parseCounts<Severity>(r.severity_counts) as Record<Severity, number>,
    type_counts: parseCounts<AnomalyType>(r.type_counts) as Record<AnomalyType, number>,
    thresholds: thresholdsView(storedThresholds(r.thresholds)),
    job_run_id: r.job_run_id,
    started_at: r.started_at,
    finished_at: r.finished_at,
    error: r.error,
  };
}
