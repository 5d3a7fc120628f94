import { latestPage, listAnswer } from "../../http/pagination";
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { isWorse, type Level } from "../checks/types";
import { componentsOfChecks, type ComponentId } from "../components";
import { Incident, IncidentUpdate } from "../model";
import { schemaView } from "../../http/schema-view";
import {
  closeAutomaticIncident,
  incidentById,
  type IncidentRow,
  incidentsSince,
  openAutomatic,
  openAutomaticIncident,
  openIncidentRows,
  type UpdateRow,
  updateAutomatic,
  updatesOfIncidents,
} from "../store/incidents";

// Incidents of both sources, in one table and one id space (src/status/tables.ts).
//
// Automatic incidents follow the snapshots: a transition from ok into warn or bad opens one; further degraded
// snapshots update it (severity = the worst overall seen, never lowered; every check that was degraded is
// kept with its worst status); the first ok snapshot closes it. At most one automatic incident is open at a
// time. Maintenance does not suppress incidents — what happened is published either way; it only leaves
// uptime. Operator incidents (src/status/incidents/operator.ts) are written and resolved by people; they never
// touch the automatic one, and the automatic logic never touches them.

export type IncidentState = "investigating" | "identified" | "monitoring" | "resolved";
export const INCIDENT_STATES: readonly IncidentState[] = ["investigating", "identified", "monitoring", "resolved"];

export type { IncidentRow, UpdateRow } from "../store/incidents";

export interface TransitionInput {
  snapshotId: number;
  at: string;
  overall: Level;
  degraded: Record<string, Level>;
  reasons: Record<string, string>;
}

/** `changed`: whether what a reader sees moved (an "updated" that only touched updated_at is not news). */
export type Transition = { action: "none" | "opened" | "updated" | "closed"; incident_id: number | null; changed: boolean };

/** Must run inside the snapshot's transaction (after serializeSnapshots: one at a time, on every engine). */
export async function applyIncidentTransition(t: Queryable, s: TransitionInput): Promise<Transition> {
  const open = await openAutomaticIncident(t);
  if (s.overall === "ok") {
    if (!open) return { action: "none", incident_id: null, changed: false };
    await closeAutomaticIncident(t, open.id, s.at, s.snapshotId);
    return { action: "closed", incident_id: open.id, changed: true };
  }
  const severity = s.overall;
  if (!open) {
    const id = await openAutomatic(t, { at: s.at, severity, checks: JSON.stringify(s.degraded), summary: JSON.stringify(s.reasons), snapshotId: s.snapshotId });
    return { action: "opened", incident_id: id, changed: true };
  }
  const before = JSON.parse(open.checks) as Record<string, Level>;
  const checks = { ...before };
  for (const [name, level] of Object.entries(s.degraded)) if (!checks[name] || isWorse(level, checks[name]!)) checks[name] = level;
  // A check newly involved gets its first reason; a check already named keeps the one that explains its start.
  const summary = { ...s.reasons, ...(JSON.parse(open.summary) as Record<string, string>) };
  const peak = isWorse(severity, open.severity) ? severity : open.severity;
  const checksJson = JSON.stringify(checks);
  await updateAutomatic(t, open.id, { peak, current: severity, checks: checksJson, summary: JSON.stringify(summary), at: s.at });
  const changed = peak !== open.severity || severity !== open.current_severity || checksJson !== JSON.stringify(before);
  return { action: "updated", incident_id: open.id, changed };
}

export type IncidentView = typeof Incident.static;

/** "Outage: database" / "Degraded service: jobs, reliability": an automatic incident's headline. */
function automaticTitle(severity: "warn" | "bad", checks: Record<string, Level>): string {
  const names = Object.keys(checks);
  return `${severity === "bad" ? "Outage" : "Degraded service"}: ${names.length ? names.join(", ") : "overall"}`;
}

export function incidentView(r: IncidentRow, updates: readonly UpdateRow[], now: Date): IncidentView {
  const end = r.ended_at ? Date.parse(r.ended_at) : now.getTime();
  const checks = JSON.parse(r.checks) as Record<string, Level>;
  const operator = r.source === "operator";
  return schemaView(Incident, r, {
    title: operator ? (r.title ?? "") : automaticTitle(r.severity, checks),
    current_severity: r.ended_at ? null : r.current_severity,
    status: r.ended_at ? "resolved" : "open",
    state: operator ? r.state : null,
    duration_minutes: Math.round(((end - Date.parse(r.started_at)) / 60_000) * 100) / 100,
    checks,
    summary: JSON.parse(r.summary) as Record<string, string>,
    components: operator ? (JSON.parse(r.components ?? "[]") as ComponentId[]) : componentsOfChecks(Object.keys(checks)),
    updates: updates
      .filter((u) => u.incident_id === r.id)
      .sort((a, b) => b.id - a.id)
      .map((u) => schemaView(IncidentUpdate, u, {})),
  });
}

/** The rows' views, with the updates of all of them (operator incidents have any) read in one query. */
export const viewsOf = async (q: Queryable, rows: readonly IncidentRow[], now: Date): Promise<IncidentView[]> => {
  const updates = await updatesOfIncidents(
    q,
    rows.filter((r) => r.source === "operator").map((r) => r.id),
  );
  return rows.map((r) => incidentView(r, updates, now));
};

/** Incidents of both sources that overlap the last `hours` (open ones always do), newest first. */
export async function listIncidents(ctx: AppContext, hours: number, limit: number) {
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - hours * 3_600_000).toISOString();
  const page = latestPage(await incidentsSince(ctx.store, since, limit + 1), limit, { hours });
  const incidents = await viewsOf(ctx.store, page.items, now);
  return { hours, limit, window: { start_utc: since, end_utc: now.toISOString() }, ...listAnswer("incidents", { ...page, items: incidents }) };
}

/** Every open incident of both sources, newest first. */
export async function openIncidents(ctx: AppContext): Promise<IncidentView[]> {
  return viewsOf(ctx.store, await openIncidentRows(ctx.store), ctx.clock.now());
}

export async function findIncident(q: Queryable, id: number, now: Date): Promise<IncidentView | null> {
  const row = await incidentById(q, id);
  return row ? (await viewsOf(q, [row], now))[0]! : null;
}
