import type { Database } from "bun:sqlite";
import type { AppContext } from "../context";
import { isWorse, type Level } from "./check-types";

// Incidents follow the snapshots: a transition from ok into warn or bad opens one; further degraded
// snapshots update it (severity = the worst overall seen, never lowered; every check that was degraded is
// kept with its worst status); the first ok snapshot closes it. At most one is open at a time. Maintenance
// does not suppress incidents — what happened is published either way; it only leaves uptime.

interface IncidentRow {
  id: number;
  started_at: string;
  ended_at: string | null;
  severity: "warn" | "bad";
  current_severity: "warn" | "bad";
  checks: string;
  summary: string;
  opened_snapshot_id: number;
  closed_snapshot_id: number | null;
  updated_at: string;
}

export interface TransitionInput {
  snapshotId: number;
  at: string;
  overall: Level;
  degraded: Record<string, Level>;
  reasons: Record<string, string>;
}

export type Transition = { action: "none" | "opened" | "updated" | "closed"; incident_id: number | null };

/** Must run inside the snapshot's transaction. */
export function applyIncidentTransition(sqlite: Database, s: TransitionInput): Transition {
  const open = sqlite.query("SELECT * FROM status_incidents WHERE ended_at IS NULL ORDER BY id DESC LIMIT 1").get() as IncidentRow | null;
  if (s.overall === "ok") {
    if (!open) return { action: "none", incident_id: null };
    sqlite.query("UPDATE status_incidents SET ended_at = ?, closed_snapshot_id = ?, updated_at = ? WHERE id = ?").run(s.at, s.snapshotId, s.at, open.id);
    return { action: "closed", incident_id: open.id };
  }
  const severity = s.overall;
  if (!open) {
    const { id } = sqlite
      .query("INSERT INTO status_incidents (started_at, severity, current_severity, checks, summary, opened_snapshot_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id")
      .get(s.at, severity, severity, JSON.stringify(s.degraded), JSON.stringify(s.reasons), s.snapshotId, s.at) as { id: number };
    return { action: "opened", incident_id: id };
  }
  const checks = JSON.parse(open.checks) as Record<string, Level>;
  for (const [name, level] of Object.entries(s.degraded)) if (!checks[name] || isWorse(level, checks[name]!)) checks[name] = level;
  // A check newly involved gets its first reason; a check already named keeps the one that explains its start.
  const summary = { ...s.reasons, ...(JSON.parse(open.summary) as Record<string, string>) };
  const peak = isWorse(severity, open.severity) ? severity : open.severity;
  sqlite
    .query("UPDATE status_incidents SET severity = ?, current_severity = ?, checks = ?, summary = ?, updated_at = ? WHERE id = ?")
    .run(peak, severity, JSON.stringify(checks), JSON.stringify(summary), s.at, open.id);
  return { action: "updated", incident_id: open.id };
}

export interface IncidentView {
  id: number;
  started_at: string;
  ended_at: string | null;
  severity: "warn" | "bad";
  current_severity: "warn" | "bad" | null;
  status: "open" | "resolved";
  duration_minutes: number;
  checks: Record<string, Level>;
  summary: Record<string, string>;
}

export function incidentView(r: IncidentRow, now: Date): IncidentView {
  const end = r.ended_at ? Date.parse(r.ended_at) : now.getTime();
  return {
    id: r.id,
    started_at: r.started_at,
    ended_at: r.ended_at,
    severity: r.severity,
    current_severity: r.ended_at ? null : r.current_severity,
    status: r.ended_at ? "resolved" : "open",
    duration_minutes: Math.round(((end - Date.parse(r.started_at)) / 60_000) * 100) / 100,
    checks: JSON.parse(r.checks) as Record<string, Level>,
    summary: JSON.parse(r.summary) as Record<string, string>,
  };
}

/** Incidents that overlap the last `hours` (open ones always do), newest first. */
export function listIncidents(ctx: AppContext, hours: number, limit: number) {
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - hours * 3_600_000).toISOString();
  const rows = ctx.db.sqlite
    .query("SELECT * FROM status_incidents WHERE ended_at IS NULL OR ended_at > ? ORDER BY started_at DESC, id DESC LIMIT ?")
    .all(since, limit) as IncidentRow[];
  return { hours, limit, window: { start_utc: since, end_utc: now.toISOString() }, count: rows.length, incidents: rows.map((r) => incidentView(r, now)) };
}

export function openIncident(ctx: AppContext): IncidentView | null {
  const row = ctx.db.sqlite.query("SELECT * FROM status_incidents WHERE ended_at IS NULL ORDER BY id DESC LIMIT 1").get() as IncidentRow | null;
  return row ? incidentView(row, ctx.clock.now()) : null;
}
