import { latestPage, listAnswer } from "../http/pagination";
import type { AppContext } from "../context";
import { type BatchBound, DAILY_PRUNE_MAX_MS, unfinished } from "../db/batched-delete";
import type { CheckBase, Level } from "./checks/types";
import { evaluateChecks, type StatusEvaluation } from "./checks/engine";
import { applyIncidentTransition, findIncident, type Transition } from "./incidents/incidents";
import { enqueueIncidentEvent, type StatusEventType } from "./incidents/notify";
import { windowsOverlappingRows } from "./store/maintenance";
import { loadPolicy, type StatusPolicy } from "./checks/policy";
import type { Point } from "./uptime-math";
import { pruneIncidents } from "./store/incidents";
import {
  checksInForce,
  insertSnapshotRow,
  latestSnapshots,
  newestSnapshotId,
  pruneSnapshots,
  SAME_SET,
  serializeSnapshots,
  uptimePointsTask,
} from "./store/snapshots";
import { pruneDeliveries } from "./store/subscribers";

// The status-snapshot job's work and the readers of its history. A snapshot and the incident change it
// causes commit in one transaction, so an incident never points at a snapshot that is not there. The snapshot
// transactions of every instance take turns (serializeSnapshots), so two runs that overlap never open two
// automatic incidents, and each stores its check set against the one really stored before it.

/**
 * The set in force as last stored by this process, and the snapshot that stored it (a per-process cache kept by
 * the job between runs): without it, finding the latest full list means scanning back over every "=" row. It is
 * used only while that snapshot is still the newest one; after another instance stored one, the set is read again.
 */
export interface CheckSetMemo {
  names: string | null;
  snapshotId?: number | null;
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
export async function storeSnapshot(
  ctx: AppContext,
  evaluation: StatusEvaluation,
  jobRunId: number | null,
  memo: CheckSetMemo = { names: null },
): Promise<StoredSnapshot> {
  const degraded: Record<string, Level> = {};
  const reasons: Record<string, string> = {};
  for (const [name, c] of Object.entries(evaluation.checks)) {
    if (c.status !== "ok") {
      degraded[name] = c.status;
      reasons[name] = (c as CheckBase).summary.slice(0, 300);
    }
  }
  const at = evaluation.generated_at;
  const inMaintenance = (await windowsOverlappingRows(ctx.store, at, new Date(Date.parse(at) + 1).toISOString())).length > 0;
  const names = Object.keys(evaluation.checks).join(",");
  const stored = await ctx.store.tx(async (t) => {
    await serializeSnapshots(t, ctx.store.dialect);
    const newest = await newestSnapshotId(t);
    const inForce = memo.names !== null && memo.snapshotId === newest ? memo.names : ((await checksInForce(t, null)) ?? "");
    const id = await insertSnapshotRow(t, {
      generated_at: at,
      overall: evaluation.overall,
      degraded: JSON.stringify(degraded),
      checks: inForce === names ? SAME_SET : names,
      policy_version: evaluation.policy_version,
      in_maintenance: inMaintenance ? 1 : 0,
      job_run_id: jobRunId,
    });
    const incident = await applyIncidentTransition(t, { snapshotId: id, at, overall: evaluation.overall, degraded, reasons });
    // Subscribers hear of openings, closings and real changes — not of every minute an incident stays the same.
    const type = incident.changed ? EVENT_OF[incident.action] : null;
    const view = type && incident.incident_id !== null ? await findIncident(t, incident.incident_id, new Date(at)) : null;
    const notifications = type && view ? await enqueueIncidentEvent(ctx, t, type, view) : 0;
    return { snapshot_id: id, evaluation, incident, notifications };
  });
  // Only after the commit: a rolled-back insert must not be remembered.
  memo.names = names;
  memo.snapshotId = stored.snapshot_id;
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

/** Uptime points of [startIso, endIso] (uptimePoints), compacted in the read worker on SQLite (uptimePointsTask). */
export function loadPoints(ctx: Pick<AppContext, "store">, startIso: string, endIso: string, maxGapMs: number): Promise<Point[]> {
  return ctx.store.apart(uptimePointsTask, { startIso, endIso, maxGapMs });
}

/** The latest `limit` snapshots, oldest first (the order a chart draws them). */
export async function trend(ctx: AppContext, limit: number) {
  const page = latestPage(await latestSnapshots(ctx.store, limit + 1), limit);
  const points = page.items.reverse();
  const counts = { ok: 0, warn: 0, bad: 0 };
  for (const p of points) counts[p.overall]++;
  return { limit, ...listAnswer("points", { ...page, items: points }, {}, { counts }) };
}

/**
 * Deletes snapshots and closed incidents older than the retention, and old subscriber deliveries, each in bounded
 * batches (src/db/batched-delete.ts): a batch of snapshots takes its turn with the snapshot transactions (the row
 * that becomes the oldest may be given the check set in force). `done: false` when a time bound left rows for the
 * next day's run.
 */
export async function pruneStatusHistory(ctx: AppContext, bound: BatchBound = { maxMs: DAILY_PRUNE_MAX_MS }) {
  const now = ctx.clock.now().getTime();
  const cutoff = new Date(now - ctx.config.status.snapshotRetentionDays * 86_400_000).toISOString();
  // Delivered notifications after the webhook retention, dead letters after 90 days (as partner deliveries).
  const deliveredBefore = new Date(now - ctx.config.webhooks.retentionDays * 86_400_000).toISOString();
  const deadBefore = new Date(now - 90 * 86_400_000).toISOString();
  const snapshots = await pruneSnapshots(ctx.store, cutoff, bound);
  const incidents = await pruneIncidents(ctx.store, cutoff, bound);
  const notifications = await pruneDeliveries(ctx.store, deliveredBefore, deadBefore, bound);
  return {
    snapshots: snapshots.deleted,
    incidents: incidents.deleted,
    notifications: notifications.deleted,
    ...unfinished(snapshots, incidents, notifications),
  };
}
