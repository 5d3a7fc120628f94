import type { AppContext } from "../../context";
import { ANOMALY_TYPES, SEVERITIES } from "../audit/glossary";
import { parseCounts, type RunRow, type Selected } from "./runs";
import { dataTime } from "../state";
import { completeRunBefore } from "../store/runs";

// diff/compare.json (two selected runs) and diff/export.json (a run against the complete run before it), from
// the runs' aggregates. One row per anomaly type, per severity (`severity:<level>`), then rows_total and
// signatures_with_anomalies; `selected` is the earlier run's count, `latest` the later one's, delta = latest −
// selected. pct_delta = delta / selected × 100 to two decimals; when selected is 0 it is 0 if latest is 0 too,
// else null (growth from nothing has no percentage).

export const COMPARE_ROW_TYPES = [...ANOMALY_TYPES, ...SEVERITIES.map((s) => `severity:${s}` as const), "rows_total", "signatures_with_anomalies"] as const;

function countsOf(run: RunRow | null): Record<string, number> {
  if (run?.is_complete !== 1) return Object.fromEntries(COMPARE_ROW_TYPES.map((t) => [t, 0]));
  const types = parseCounts<string>(run.type_counts);
  const sev = parseCounts<string>(run.severity_counts);
  return {
    ...Object.fromEntries(ANOMALY_TYPES.map((t) => [t, types[t] ?? 0])),
    ...Object.fromEntries(SEVERITIES.map((s) => [`severity:${s}`, sev[s] ?? 0])),
    rows_total: run.rows_total,
    signatures_with_anomalies: run.signatures_with_anomalies,
  };
}

export function pctDelta(selected: number, latest: number): number | null {
  if (selected === 0) return latest === 0 ? 0 : null;
  return Math.round(((latest - selected) * 10_000) / selected) / 100;
}

function rowsOf(a: RunRow | null, b: RunRow | null, includeRows: boolean, limit: number, withPct: boolean) {
  const ca = countsOf(a);
  const cb = countsOf(b);
  const all = COMPARE_ROW_TYPES.map((type) => {
    const row = { type, selected: ca[type]!, latest: cb[type]!, delta: cb[type]! - ca[type]! };
    return withPct ? { ...row, pct_delta: pctDelta(row.selected, row.latest) } : row;
  });
  return {
    totalDelta: cb.signatures_with_anomalies! - ca.signatures_with_anomalies!,
    listed: { include_rows: includeRows, row_limit: limit, rows_available: all.length, rows: includeRows ? all.slice(0, limit) : [] },
  };
}

const side = (selector: string, run: RunRow | null) => ({
  selector,
  resolved_run: run?.id ?? null,
  label: run?.label ?? null,
  is_complete: run ? run.is_complete === 1 : null,
});

export async function compare(ctx: AppContext, a: Selected, b: Selected, includeRows: boolean, rowLimit: number) {
  const r = rowsOf(a.run, b.run, includeRows, rowLimit, false);
  return {
    generated_at_utc: await dataTime(ctx),
    run_a: side(a.selector, a.run),
    run_b: side(b.selector, b.run),
    total_delta: r.totalDelta,
    ...r.listed,
  };
}

export async function diffExport(ctx: AppContext, sel: Selected, includeRows: boolean, rowLimit: number) {
  const run = sel.run;
  const baseline = run ? await completeRunBefore(ctx.store, run.id) : null;
  const r = rowsOf(baseline, run, includeRows, rowLimit, true);
  const base = baseline?.signatures_with_anomalies ?? 0;
  return {
    generated_at_utc: await dataTime(ctx),
    selector: sel.selector,
    run: side(sel.selector, run),
    baseline_run: side("previous complete run", baseline),
    // The same two runs under compare.json's names: this export is compare.json of (baseline, run) plus pct_delta.
    run_a: side("previous complete run", baseline),
    run_b: side(sel.selector, run),
    total_delta: r.totalDelta,
    total_pct_delta: pctDelta(base, run && run.is_complete === 1 ? run.signatures_with_anomalies : 0),
    ...r.listed,
  };
}
