import type { Database } from "bun:sqlite";
import type { AppContext } from "../context";
import type { CheckBase, Level } from "./checks/types";
import { evaluateChecks, type StatusEvaluation } from "./checks/engine";
import { applyIncidentTransition, findIncident, type Transition } from "./incidents/incidents";
import { enqueueIncidentEvent, type StatusEventType } from "./incidents/notify";
import { windowsOverlapping } from "./incidents/maintenance";
import { loadPolicy, type StatusPolicy } from "./checks/policy";
import type { Point } from "./uptime-math";

// The status-snapshot job's work and the readers of its history. A snapshot and the incident change it
// causes commit in one transaction, so an incident never points at a snapshot that is not there.

const SAME_SET = "=";

/** generated_at, overall, degraded, checks, id */
type Row = [string, Level, string, string, number];

/**
 * The set in force as last stored, remembered by the job between runs (a per-process cache): without it,
 * finding the latest full list means scanning back over every "=" row.
 */
export interface CheckSetMemo {
  names: string | null;
}

/** The check set a new snapshot should store: the names, or "=" when unchanged since the previous one. */
function checksColumn(sqlite: Database, names: string, memo: CheckSetMemo): string {
  if (memo.names === null) {
    const prev = sqlite.query("SELECT checks FROM status_snapshots WHERE checks <> ? ORDER BY id DESC LIMIT 1").get(SAME_SET) as { checks: string } | null;
    memo.names = prev?.checks ?? "";
  }
  return memo.names === names ? SAME_SET : names;
}

export interface StoredSnapshot {
  snapshot_id: number;
  evaluation: StatusEvaluation;
  incident: Transition;
  /** Subscriber deliveries queued with it (the caller nudges the notifier after the commit). */
  notifications: number;
}

const EVENT_OF: Record<Transition["action"], StatusEventType | null> = {
  none: null,
  opened: "status.incident.created",
  updated: "status.incident.updated",
  closed: "status.incident.resolved",
};

/** Stores an evaluation (normally the job's own) and opens, updates or closes the incident it implies. */
export function storeSnapshot(ctx: AppContext, evaluation: StatusEvaluation, jobRunId: number | null, memo: CheckSetMemo = { names: null }): StoredSnapshot {
  const sqlite = ctx.db.sqlite;
  const degraded: Record<string, Level> = {};
  const reasons: Record<string, string> = {};
  for (const [name, c] of Object.entries(evaluation.checks)) {
    if (c.status !== "ok") {
      degraded[name] = c.status;
      reasons[name] = (c as CheckBase).summary.slice(0, 300);
    }
  }
  const at = evaluation.generated_at;
  const inMaintenance = windowsOverlapping(ctx, at, new Date(Date.parse(at) + 1).toISOString()).length > 0;
  const names = Object.keys(evaluation.checks).join(",");
  const stored = sqlite.transaction(() => {
    const { id } = sqlite
      .query(
        "INSERT INTO status_snapshots (generated_at, overall, degraded, checks, policy_version, in_maintenance, job_run_id) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
      )
      .get(at, evaluation.overall, JSON.stringify(degraded), checksColumn(sqlite, names, memo), evaluation.policy_version, inMaintenance ? 1 : 0, jobRunId) as {
      id: number;
    };
    const incident = applyIncidentTransition(sqlite, { snapshotId: id, at, overall: evaluation.overall, degraded, reasons });
    // Subscribers hear of openings, closings and real changes — not of every minute an incident stays the same.
    const type = incident.changed ? EVENT_OF[incident.action] : null;
    const view = type && incident.incident_id !== null ? findIncident(sqlite, incident.incident_id, new Date(at)) : null;
    const notifications = type && view ? enqueueIncidentEvent(ctx, type, view) : 0;
    return { snapshot_id: id, evaluation, incident, notifications };
  })();
  memo.names = names; // only after the commit: a rolled-back insert must not be remembered
  return stored;
}

/** One run of the status-snapshot job: evaluate under the policy in force, store, transition incidents. */
export async function takeStatusSnapshot(
  ctx: AppContext,
  jobRunId: number | null,
  memo?: CheckSetMemo,
  policy: StatusPolicy = loadPolicy(ctx).policy,
): Promise<StoredSnapshot> {
  return storeSnapshot(ctx, await evaluateChecks(ctx, policy), jobRunId, memo);
}

/**
 * Snapshots from the last one before `startIso` up to `endIso`, as uptime points, each with its check set
 * resolved ("=" → the set in force; the set before the first row is looked up once). Consecutive snapshots
 * that say the same thing (same overall, same degraded checks, same set) and follow each other within
 * maxGapMs become one point spanning them (`last`): 90 days of minutely snapshots are mostly a handful of
 * runs, so the maths stays cheap. The result is exactly what the individual snapshots would give.
 */
export function loadPoints(sqlite: Database, startIso: string, endIso: string, maxGapMs: number): Point[] {
  const cols = "generated_at, overall, degraded, checks, id";
  const before = sqlite
    .query(`SELECT ${cols} FROM status_snapshots WHERE generated_at < ? ORDER BY generated_at DESC, id DESC LIMIT 1`)
    .values(startIso) as Row[];
  const rows = sqlite
    .query(`SELECT ${cols} FROM status_snapshots WHERE generated_at >= ? AND generated_at <= ? ORDER BY generated_at, id`)
    .values(startIso, endIso) as Row[];
  const all = before.length ? before.concat(rows) : rows;
  if (all.length === 0) return [];
  let set: string[] = [];
  if (all[0]![3] === SAME_SET) {
    const inForce = sqlite.query("SELECT checks FROM status_snapshots WHERE id < ? AND checks <> ? ORDER BY id DESC LIMIT 1").get(all[0]![4], SAME_SET) as {
      checks: string;
    } | null;
    set = inForce ? inForce.checks.split(",") : [];
  }
  const points: Point[] = [];
  let prev: (Point & { key: string }) | null = null;
  for (const [generatedAt, overall, degraded, checks] of all) {
    const at = Date.parse(generatedAt);
    const changed = checks !== SAME_SET;
    if (changed) set = checks.split(",");
    const key = overall + degraded;
    if (prev && !changed && prev.key === key && at - prev.last! <= maxGapMs) {
      prev.last = at;
      continue;
    }
    prev = { at, last: at, overall, degraded: degraded === "{}" ? {} : (JSON.parse(degraded) as Record<string, Level>), checks: set, key };
    points.push(prev);
  }
  return points;
}

/** The latest `limit` snapshots, oldest first (the order a chart draws them). */
export function trend(ctx: AppContext, limit: number) {
  const rows = ctx.db.sqlite.query("SELECT generated_at, overall FROM status_snapshots ORDER BY generated_at DESC, id DESC LIMIT ?").all(limit) as Array<{
    generated_at: string;
    overall: Level;
  }>;
  const points = rows.reverse();
  const counts = { ok: 0, warn: 0, bad: 0 };
  for (const p of points) counts[p.overall]++;
  return { limit, count: points.length, counts, points };
}

export function latestSnapshotAt(ctx: AppContext): string | null {
  return (
    (ctx.db.sqlite.query("SELECT generated_at FROM status_snapshots ORDER BY generated_at DESC, id DESC LIMIT 1").get() as { generated_at: string } | null)
      ?.generated_at ?? null
  );
}

/**
 * Deletes snapshots and closed incidents older than the retention. The oldest kept snapshot is first given
 * the check set in force, so "=" never points at a deleted row.
 */
export function pruneStatusHistory(ctx: AppContext): { snapshots: number; incidents: number; notifications: number } {
  const sqlite = ctx.db.sqlite;
  const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.status.snapshotRetentionDays * 86_400_000).toISOString();
  return sqlite.transaction(() => {
    const firstKept = sqlite.query("SELECT id, checks FROM status_snapshots WHERE generated_at >= ? ORDER BY generated_at, id LIMIT 1").get(cutoff) as {
      id: number;
      checks: string;
    } | null;
    if (firstKept?.checks === SAME_SET) {
      const inForce = sqlite.query("SELECT checks FROM status_snapshots WHERE id < ? AND checks <> ? ORDER BY id DESC LIMIT 1").get(firstKept.id, SAME_SET) as {
        checks: string;
      } | null;
      if (inForce) sqlite.query("UPDATE status_snapshots SET checks = ? WHERE id = ?").run(inForce.checks, firstKept.id);
    }
    const snapshots = sqlite.query("DELETE FROM status_snapshots WHERE generated_at < ?").run(cutoff).changes;
    // Updates go with their incident (deleted first: the foreign key would refuse otherwise).
    sqlite
      .query("DELETE FROM status_incident_updates WHERE incident_id IN (SELECT id FROM status_incidents WHERE ended_at IS NOT NULL AND ended_at < ?)")
      .run(cutoff);
    const incidents = sqlite.query("DELETE FROM status_incidents WHERE ended_at IS NOT NULL AND ended_at < ?").run(cutoff).changes;
    // Delivered notifications after the webhook retention, dead letters after 90 days (as partner deliveries).
    const now = ctx.clock.now().getTime();
    const deliveredBefore = new Date(now - ctx.config.webhooks.retentionDays * 86_400_000).toISOString();
    const deadBefore = new Date(now - 90 * 86_400_000).toISOString();
    const notifications = sqlite
      .query("DELETE FROM status_subscriber_deliveries WHERE (status = 'succeeded' AND updated_at < ?) OR (status = 'dead_letter' AND updated_at < ?)")
      .run(deliveredBefore, deadBefore).changes;
    return { snapshots, incidents, notifications };
  })();
}
