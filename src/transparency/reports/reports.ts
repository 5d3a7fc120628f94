import type { Static } from "elysia";
import type { AppContext } from "../../context";
import { formatUnits } from "../../chain/service";
import { listAnswer, type PageRequest, pageOf } from "../../http/pagination";
import { hasRowFilters, rowConditions, filtersEcho, type RowFilters } from "./filters";
import { severityOfRank, type AnomalyType } from "../audit/glossary";
import { runView, type RunRow, type Selected } from "./runs";
import type { TopAnomalySchema } from "./audit-model";
import { dataTime } from "../state";
import { filteredCountsTask, topRows } from "../store/rows";
import { completeRunsUpTo, listRunsPage, runCounts, statusCountsBetween } from "../store/runs";

// summary.json, runs.json and trend.json. Unfiltered, they read only the runs' precomputed aggregates; the top
// anomalies read at most top_limit rows through audit_rows_top_idx; a filtered trend counts rows run by run, apart
// from the event loop (filteredCountsTask).

export type TopAnomaly = Static<typeof TopAnomalySchema>;

export async function topAnomalies(ctx: AppContext, run: RunRow, limit: number): Promise<TopAnomaly[]> {
  const rows = await topRows(ctx.store, run.id, limit);
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

/** The data's time, the selector and the run it names: how summary.json, runs.json and trend.json open. */
const opening = async (ctx: AppContext, sel: Selected) => ({
  generated_at_utc: await dataTime(ctx),
  selector: sel.selector,
  selected_run: sel.run?.id ?? null,
  selected_label: sel.run?.label ?? null,
});

export async function summary(ctx: AppContext, sel: Selected, includeTop: boolean, topLimit: number) {
  const run = sel.run;
  const available = run !== null && run.is_complete === 1;
  return {
    ...(await opening(ctx, sel)),
    summary_available: available,
    include_top_anomalies: includeTop,
    top_limit: topLimit,
    run: run ? runView(run, run.id) : null,
    top_anomalies: available && includeTop ? await topAnomalies(ctx, run, topLimit) : [],
    links: links(run),
  };
}

export async function runsList(ctx: AppContext, sel: Selected, page: PageRequest) {
  const rows = await listRunsPage(ctx.store, page.limit + 1, page.offset, page.after);
  const p = pageOf(rows, page, (r) => r.id);
  return {
    ...(await opening(ctx, sel)),
    total_runs: (await runCounts(ctx.store)).total,
    ...listAnswer("runs", { ...p, items: p.items.map((r) => runView(r, sel.run?.id ?? null)) }),
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

/** Each run's count of its rows passing the filters, in the read worker on SQLite (filteredCountsTask). */
const filteredValues = (ctx: AppContext, runs: RunRow[], metric: "rows" | "sigs", filters: RowFilters): Promise<number[]> =>
  ctx.store.apart(filteredCountsTask, { sigsOnly: metric === "sigs", runs: runs.map((r) => ({ id: r.id, conditions: rowConditions(filters, r.decimals) })) });

export async function trend(ctx: AppContext, sel: Selected, input: TrendInput) {
  const end = sel.run;
  // One run more than asked for: the base of the first point's delta.
  const runs = end ? (await completeRunsUpTo(ctx.store, end.is_complete ? end.id : end.id - 1, input.limit + 1)).reverse() : [];
  const values = hasRowFilters(input.filters)
    ? await filteredValues(ctx, runs, input.metric, input.filters)
    : runs.map((r) => (input.metric === "rows" ? r.rows_total : r.signatures_with_anomalies));
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
      ? await statusCountsBetween(ctx.store, points[0]!.run_id, end!.id)
      : input.includeStatusCounts
        ? { ok: 0, warn: 0, bad: 0, other: 0 }
        : null;
  return {
    ...(await opening(ctx, sel)),
    selected_metric: input.metric,
    limit: input.limit,
    include_status_counts: input.includeStatusCounts,
    filters: filtersEcho(input.filters),
    count: points.length,
    status_counts: statusCounts,
    points,
    // A latest-N view (docs/http-conventions.md, "Lists"): older complete runs exist when one more was found.
    query: { limit: input.limit, offset: 0 as const, cursor: null, metric: input.metric, include_status_counts: input.includeStatusCounts },
    pagination: { has_more: first === 1, next_offset: null, next_cursor: null },
  };
}
