import type { AppContext } from "../context";
import { formatUnits } from "../chain/service";
import type { PageRequest } from "../http/pagination";
import { pageOf } from "../http/pagination";
import { hasRowFilters, rowConditions, filtersEcho, type RowFilters } from "./filters";
import { severityOfRank, type AnomalyType } from "./glossary";
import { completeRunsUpTo, countRuns, listRunsPage, runView, statusCountsBetween, type RunRow } from "./runs";
import { readState } from "./state";

// summary.json, runs.json and trend.json. Unfiltered, they read only the runs' precomputed aggregates; the top
// anomalies read at most top_limit rows through audit_rows_top_idx; a filtered trend counts rows run by run.

export const dataTime = (ctx: AppContext) => readState(ctx.db.sqlite).changedAt;

export interface TopAnomaly {
  severity: string;
  signature: string;
  kind: string;
  anomaly_types: AnomalyType[];
  max_abs_delta: string;
  delta: string;
  triage_status: string | null;
}

export function topAnomalies(ctx: AppContext, run: RunRow, limit: number): TopAnomaly[] {
  const rows = ctx.db.sqlite
    .query(
      `SELECT r.signature, r.kind, r.types, r.severity_rank, r.delta_raw, t.status AS triage FROM audit_rows r LEFT JOIN audit_triage t ON t.signature = r.signature
       WHERE r.run_id = ? AND r.severity_rank > 0 ORDER BY r.severity_rank DESC, r.abs_key DESC, r.id DESC LIMIT ?`,
    )
    .all(run.id, limit) as Array<{ signature: string; kind: string; types: string; severity_rank: number; delta_raw: string; triage: string | null }>;
  return rows.map((r) => {
    const delta = BigInt(r.delta_raw);
    return {
      severity: severityOfRank(r.severity_rank)!,
      signature: r.signature,
      kind: r.kind,
      anomaly_types: r.types.split(",") as AnomalyType[],
      max_abs_delta: formatUnits(delta < 0n ? -delta : delta, run.decimals),
      delta: formatUnits(delta, run.decimals),
      triage_status: r.triage,
    };
  });
}

const links = (run: RunRow | null) => ({
  runs: "/transparency/audit-anomalies/runs.json",
  export_json: run ? `/transparency/audit-anomalies/export.json?run=${run.id}` : "/transparency/audit-anomalies/export.json",
  export_csv: run ? `/transparency/audit-anomalies/export?run=${run.id}` : "/transparency/audit-anomalies/export",
  glossary: "/transparency/audit-anomalies/glossary.json",
  declared_movements: "/transparency/audit-anomalies/declared-movements.json",
  schema_registry: "/transparency/audit-anomalies/schema-registry.json",
});

export function summary(ctx: AppContext, sel: { selector: string; run: RunRow | null }, includeTop: boolean, topLimit: number) {
  const run = sel.run;
  const available = run !== null && run.is_complete === 1;
  return {
    generated_at_utc: dataTime(ctx),
    selector: sel.selector,
    selected_run: run?.id ?? null,
    selected_label: run?.label ?? null,
    summary_available: available,
    include_top_anomalies: includeTop,
    top_limit: topLimit,
    run: run ? runView(run, run.id) : null,
    top_anomalies: available && includeTop ? topAnomalies(ctx, run, topLimit) : [],
    links: links(run),
  };
}

export function runsList(ctx: AppContext, sel: { selector: string; run: RunRow | null }, page: PageRequest) {
  const rows = listRunsPage(ctx, page.limit + 1, page.offset, page.after);
  const p = pageOf(rows, page, (r) => r.id);
  return {
    generated_at_utc: dataTime(ctx),
    selector: sel.selector,
    selected_run: sel.run?.id ?? null,
    selected_label: sel.run?.label ?? null,
    total_runs: countRuns(ctx),
    count: p.count,
    runs: p.items.map((r) => runView(r, sel.run?.id ?? null)),
    query: p.query,
    pagination: p.pagination,
  };
}

/** metric_delta_pct: delta / previous × 100 to two decimals; null without a previous value or when it is 0. */
export function pctOf(delta: number, base: number | null): number | null {
  if (base === null || base === 0) return null;
  return Math.round((delta * 10_000) / base) / 100;
}

export interface TrendInput {
  metric: "rows" | "sigs";
  limit: number;
  includeStatusCounts: boolean;
  filters: RowFilters;
}

function filteredValue(ctx: AppContext, run: RunRow, metric: "rows" | "sigs", filters: RowFilters): number {
  const c = rowConditions(filters, run.decimals);
  const sql = `SELECT count(*) AS n FROM audit_rows r WHERE r.run_id = ?${metric === "sigs" ? " AND r.severity_rank > 0" : ""}${c.sql}`;
  return (ctx.db.sqlite.query(sql).get(run.id, ...c.params) as { n: number }).n;
}

export function trend(ctx: AppContext, sel: { selector: string; run: RunRow | null }, input: TrendInput) {
  const end = sel.run;
  // One run more than asked for: the base of the first point's delta.
  const runs = end ? completeRunsUpTo(ctx, end.is_complete ? end.id : end.id - 1, input.limit + 1).reverse() : [];
  const filtered = hasRowFilters(input.filters);
  const valueOf = (r: RunRow) =>
    filtered ? filteredValue(ctx, r, input.metric, input.filters) : input.metric === "rows" ? r.rows_total : r.signatures_with_anomalies;
  const values = runs.map(valueOf);
  const first = runs.length > input.limit ? 1 : 0;
  const points = runs.slice(first).map((r, i) => {
    const value = values[i + first]!;
    const previous = i + first > 0 ? values[i + first - 1]! : null;
    const delta = previous === null ? null : value - previous;
    return {
      run_id: r.id,
      label: r.label,
      overall: r.overall,
      rows_total: r.rows_total,
      metric: input.metric,
      metric_value: value,
      metric_delta: delta,
      metric_delta_pct: delta === null ? null : pctOf(delta, previous),
    };
  });
  const statusCounts =
    input.includeStatusCounts && points.length
      ? statusCountsBetween(ctx, points[0]!.run_id, end!.id)
      : input.includeStatusCounts
        ? { ok: 0, warn: 0, bad: 0, other: 0 }
        : null;
  return {
    generated_at_utc: dataTime(ctx),
    selector: sel.selector,
    selected_run: end?.id ?? null,
    selected_label: end?.label ?? null,
    selected_metric: input.metric,
    limit: input.limit,
    include_status_counts: input.includeStatusCounts,
    filters: filtersEcho(input.filters),
    count: points.length,
    status_counts: statusCounts,
    points,
  };
}
