import type { AppContext } from "../../context";
import { applyAlertTransitions } from "./state";

// The alert-run record (ops_alert_runs): every evaluation Herald makes, one row per alert per run. The
// alerts-monitor job writes status, transparency, webhook and 403-digest rows (src/ops/alerts/monitor.ts); the
// preflight detector writes its own rows with source `preflight`. Everything reads them from here; the state
// each alert is in, and the notices of its changes, come from src/ops/alerts/state.ts.

export const ALERT_SOURCES = ["status", "transparency", "webhooks", "digest", "preflight"] as const;
export type AlertSource = (typeof ALERT_SOURCES)[number];
export const ALERT_STATUSES = ["ok", "warn", "fail"] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

export interface AlertInput {
  name: string;
  status: AlertStatus;
  /** What was measured, as text ("12", "warn"); null when there is nothing to show. */
  value?: string | number | null;
  details?: Record<string, unknown> | null;
}

export interface AlertRunRow {
  id: number;
  run_id: string;
  at: string;
  source: string;
  name: string;
  status: AlertStatus;
  value: string | null;
  details: Record<string, unknown> | null;
}

export const newAlertRunId = (ctx: AppContext) => `ar_${Buffer.from(ctx.rng.bytes(8)).toString("hex")}`;

/**
 * Records one run of one source: every alert of it under one run_id and one `at` (the clock's now unless given),
 * in one transaction, then applies the alert state changes it makes (src/ops/alerts/state.ts: notices queued for
 * an alert that fired, escalated or resolved). Callable by any part of ops.
 */
export function recordAlertRun(ctx: AppContext, input: { source: string; alerts: AlertInput[]; runId?: string; at?: string }) {
  const runId = input.runId ?? newAlertRunId(ctx);
  const at = input.at ?? ctx.clock.now().toISOString();
  const insert = ctx.db.sqlite.prepare("INSERT INTO ops_alert_runs (run_id, at, source, name, status, value, details) VALUES (?, ?, ?, ?, ?, ?, ?)");
  ctx.db.sqlite.transaction(() => {
    for (const a of input.alerts) {
      const value = a.value === undefined || a.value === null ? null : String(a.value);
      insert.run(runId, at, input.source, a.name, a.status, value, a.details ? JSON.stringify(a.details) : null);
    }
  })();
  applyAlertTransitions(ctx);
  return { run_id: runId, at, source: input.source, count: input.alerts.length };
}

export interface AlertRunFilter {
  days: number;
  source: "all" | AlertSource;
  status: "all" | AlertStatus;
  limit: number;
  offset: number;
}

interface RawRow {
  id: number;
  run_id: string;
  at: string;
  source: string;
  name: string;
  status: string;
  value: string | null;
  details: string | null;
}

function parseDetails(raw: string | null): Record<string, unknown> | null {
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    // A row written by hand (or by an older writer) with text that is not JSON: shown as it is, never a 500.
    return { text: raw };
  }
}

const toRow = (r: RawRow): AlertRunRow => ({ ...r, status: r.status as AlertStatus, details: parseDetails(r.details) });

/** The window [now − days, now] as ISO bounds. */
export function windowOf(ctx: AppContext, days: number) {
  const now = ctx.clock.now();
  return { from: new Date(now.getTime() - days * 86_400_000).toISOString(), to: now.toISOString() };
}

/** Alert rows in the window, newest first (then by id, so ties keep insertion order reversed), filtered and paged. */
export function listAlertRuns(ctx: AppContext, f: AlertRunFilter) {
  const w = windowOf(ctx, f.days);
  // "all" matches every value, so the statement (and its parameter count) is the same for every filter.
  const cond = "at >= ?1 AND at <= ?2 AND (?3 = 'all' OR source = ?3) AND (?4 = 'all' OR status = ?4)";
  const args = [w.from, w.to, f.source, f.status] as const;
  const total = (ctx.db.sqlite.prepare(`SELECT count(*) AS n FROM ops_alert_runs WHERE ${cond}`).get(...args) as { n: number }).n;
  const rows = ctx.db.sqlite
    .prepare(`SELECT id, run_id, at, source, name, status, value, details FROM ops_alert_runs WHERE ${cond} ORDER BY at DESC, id DESC LIMIT ?5 OFFSET ?6`)
    .all(...args, f.limit, f.offset) as RawRow[];
  const hasMore = f.offset + rows.length < total;
  return {
    window: w,
    total,
    rows: rows.map(toRow),
    pagination: { has_more: hasMore, next_offset: hasMore ? f.offset + rows.length : null, next_cursor: null },
  };
}

export interface RunSummary {
  run_id: string;
  at: string;
  /** Every source of the run's rows, joined by "+" in ALERT_SOURCES order ("status+transparency+webhooks"). */
  source: string;
  alerts: number;
  ok: number;
  warn: number;
  fail: number;
  status: AlertStatus;
}

/** Known sources first, in ALERT_SOURCES order; any other (a hand-written row) after them, alphabetically. */
const sourceRank = (s: string) => {
  const i = (ALERT_SOURCES as readonly string[]).indexOf(s);
  return i === -1 ? ALERT_SOURCES.length : i;
};
const runLabel = (sources: Set<string>) => [...sources].sort((a, b) => sourceRank(a) - sourceRank(b) || (a < b ? -1 : a > b ? 1 : 0)).join("+");

/**
 * One line per run: its alert counts by status, its worst status (fail > warn > ok) and its label. One monitor
 * run evaluates several sources under one run_id, so the label names them all ("status+transparency+webhooks"),
 * never just the source of whichever row came first.
 */
export function summarizeRuns(rows: AlertRunRow[]): RunSummary[] {
  const runs = new Map<string, RunSummary>();
  const sources = new Map<string, Set<string>>();
  for (const r of rows) {
    let s = runs.get(r.run_id);
    if (!s) {
      s = { run_id: r.run_id, at: r.at, source: r.source, alerts: 0, ok: 0, warn: 0, fail: 0, status: "ok" };
      runs.set(r.run_id, s);
      sources.set(r.run_id, new Set());
    }
    sources.get(r.run_id)!.add(r.source);
    s.alerts++;
    s[r.status]++;
    if (r.at > s.at) s.at = r.at;
  }
  const out = [...runs.values()];
  for (const s of out) {
    s.status = s.fail > 0 ? "fail" : s.warn > 0 ? "warn" : "ok";
    s.source = runLabel(sources.get(s.run_id)!);
  }
  return out.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.run_id < b.run_id ? 1 : -1));
}

/** The value of the newest row of (source, name), for growth checks between runs; null before the first run. */
export function lastAlertValue(ctx: AppContext, source: string, name: string): string | null {
  const r = ctx.db.sqlite.prepare("SELECT value FROM ops_alert_runs WHERE source = ? AND name = ? ORDER BY at DESC, id DESC LIMIT 1").get(source, name) as {
    value: string | null;
  } | null;
  return r?.value ?? null;
}

/** The details of the newest row of (source, name), parsed; null before the first run. */
export function lastAlertDetails(ctx: AppContext, source: string, name: string): Record<string, unknown> | null {
  const r = ctx.db.sqlite.prepare("SELECT details FROM ops_alert_runs WHERE source = ? AND name = ? ORDER BY at DESC, id DESC LIMIT 1").get(source, name) as {
    details: string | null;
  } | null;
  return r ? parseDetails(r.details) : null;
}
