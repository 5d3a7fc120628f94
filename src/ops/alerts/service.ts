import type { AppContext } from "../../context";
import { totalPage } from "../../http/pagination";
import type { AlertsModel, OpsAlertRunSummary } from "./model";
import { applyAlertTransitions, parseDetails } from "./state";
import { alertRunsPageTask, insertRuns, newestRun, rowsOfRuns, type RunRow } from "./store";

// The alert-run record (ops_alert_runs): every evaluation, one row per alert per run, written by the alerts-monitor
// job (monitor.ts) and the preflight detector (source `preflight`). State and notices come from state.ts.

export const ALERT_SOURCES = ["status", "transparency", "webhooks", "digest", "preflight"] as const;
export const ALERT_STATUSES = ["ok", "warn", "fail"] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

export interface AlertInput {
  name: string;
  status: AlertStatus;
  /** What was measured, as text ("12", "warn"); null when there is nothing to show. */
  value?: string | number | null;
  details?: Record<string, unknown> | null;
}

export type AlertRunRow = ReturnType<typeof toRow>;

export const newAlertRunId = (ctx: AppContext) => `ar_${Buffer.from(ctx.rng.bytes(8)).toString("hex")}`;

/** Records one run of one source (one run_id and `at`, in one transaction), then applies the state changes its rows make. */
export async function recordAlertRun(ctx: AppContext, input: { source: string; alerts: AlertInput[]; runId?: string; at?: string }) {
  const runId = input.runId ?? newAlertRunId(ctx);
  const at = input.at ?? ctx.clock.now().toISOString();
  const rows = input.alerts.map((a) => ({
    run_id: runId,
    at,
    source: input.source,
    name: a.name,
    status: a.status,
    value: a.value === undefined || a.value === null ? null : String(a.value),
    details: a.details ? JSON.stringify(a.details) : null,
  }));
  const ids = await ctx.store.tx((t) => insertRuns(t, rows));
  await applyAlertTransitions(ctx, ids);
  return { run_id: runId, at, source: input.source, count: input.alerts.length };
}

export type AlertRunFilter = Required<Omit<typeof AlertsModel.exportQuery.static, "include_meta">>;

const toRow = (r: RunRow) => ({ ...r, status: r.status as AlertStatus, details: parseDetails(r.details) });

export function windowOf(ctx: AppContext, days: number) {
  const now = ctx.clock.now();
  return { from: new Date(now.getTime() - days * 86_400_000).toISOString(), to: now.toISOString() };
}

export async function listAlertRuns(ctx: AppContext, f: AlertRunFilter) {
  const w = windowOf(ctx, f.days);
  const filter = { from: w.from, to: w.to, source: f.source, status: f.status };
  const { total, rows } = await ctx.store.apart(alertRunsPageTask, { filter, limit: f.limit, offset: f.offset });
  return { window: w, filter, total, rows: rows.map(toRow), pagination: totalPage(rows, total, f.limit, f.offset).pagination };
}

/**
 * The runs a page of alert rows belongs to, each summarized from ALL its rows under the page's filter: a run the page
 * cuts in two is still labelled by every source and counted whole, as runs/export labels it. A page that holds
 * every row of the filter (the ZIP's) is summarized as it is, without reading the rows again.
 */
export async function runsOfPage(ctx: AppContext, page: Awaited<ReturnType<typeof listAlertRuns>>): Promise<RunSummary[]> {
  if (page.rows.length === page.total) return summarizeRuns(page.rows);
  const ids = [...new Set(page.rows.map((r) => r.run_id))];
  return summarizeRuns((await rowsOfRuns(ctx.store, page.filter, ids)).map(toRow));
}

export type RunSummary = typeof OpsAlertRunSummary.static;

/** Known sources first, in ALERT_SOURCES order; any other (a hand-written row) after them, alphabetically. */
const sourceRank = (s: string) => {
  const i = (ALERT_SOURCES as readonly string[]).indexOf(s);
  return i === -1 ? ALERT_SOURCES.length : i;
};
const runLabel = (sources: Set<string>) => [...sources].sort((a, b) => sourceRank(a) - sourceRank(b) || (a < b ? -1 : a > b ? 1 : 0)).join("+");

/**
 * One line per run: its alert counts by status, its worst status and its label. One monitor run evaluates several
 * sources under one run_id, so the label names them all, never just the source of whichever row came first.
 */
export function summarizeRuns(rows: AlertRunRow[]): RunSummary[] {
  const runs = new Map<string, RunSummary & { sources: Set<string> }>();
  for (const r of rows) {
    const s = runs.get(r.run_id) ?? { run_id: r.run_id, at: r.at, source: r.source, alerts: 0, ok: 0, warn: 0, fail: 0, status: "ok", sources: new Set() };
    runs.set(r.run_id, s);
    s.sources.add(r.source);
    s.alerts++;
    s[r.status]++;
    if (r.at > s.at) s.at = r.at;
  }
  return [...runs.values()]
    .map(({ sources, ...s }): RunSummary => ({ ...s, source: runLabel(sources), status: s.fail > 0 ? "fail" : s.warn > 0 ? "warn" : "ok" }))
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.run_id < b.run_id ? 1 : -1));
}

/** The newest row of (source, name), its details parsed, for comparisons between runs; null before the first run. */
export async function lastAlertRun(ctx: AppContext, source: string, name: string) {
  const r = await newestRun(ctx.store, source, name);
  return r && { value: r.value, details: parseDetails(r.details) };
}
