import { apartTask } from "../../db/apart";
import { type BatchBound, type BatchedDeleteResult, repeatBatches } from "../../db/batched-delete";
import type { Level } from "../checks/types";
import type { Point } from "../uptime-math";
import { type Dialect, insertedId, type Queryable, type Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { statusSnapshots } from "../tables";

// status_snapshots' SQL, on the storage port (the same statements on SQLite and PostgreSQL). Written by the
// status-snapshot job (one transaction per snapshot, with the incident change it causes), read by the uptime
// maths, the trend and the page, pruned by age.

export type SnapshotRow = RowOf<typeof statusSnapshots>;
/** What the uptime maths reads of a snapshot. */
export type PointRow = Pick<SnapshotRow, "generated_at" | "overall" | "degraded" | "checks" | "id">;

/** The `checks` value of a snapshot whose check set is the previous snapshot's. */
export const SAME_SET = "=";

/** pg_advisory_xact_lock key of the snapshot transactions: any constant no other code uses ("status" in ASCII). */
const SNAPSHOT_LOCK = 0x73_74_61_74_75_73;

/**
 * PostgreSQL: makes the snapshot transactions of every instance take turns (a transaction-scoped advisory lock,
 * released at commit), so that two status-snapshot runs that overlap — a run that outlived its job lease, a manual
 * run beside the scheduled one — never both open an automatic incident (at most one is open), nor both store "="
 * against a set the other just changed. The lock has no row to hang on (no incident may be open yet), hence the
 * advisory lock; SQLite needs nothing, as its transactions hold the one write lock from BEGIN IMMEDIATE.
 */
const SERIALIZE_SNAPSHOTS_POSTGRES = "SELECT pg_advisory_xact_lock(?)";

export async function serializeSnapshots(t: Queryable, dialect: Dialect): Promise<void> {
  if (dialect === "postgres") await t.get(SERIALIZE_SNAPSHOTS_POSTGRES, [SNAPSHOT_LOCK]);
}

/** The newest snapshot's id (the one stored last: inside serializeSnapshots, ids are drawn in commit order). */
export async function newestSnapshotId(q: Queryable): Promise<number | null> {
  return (await q.get<Pick<SnapshotRow, "id">>("SELECT id FROM status_snapshots ORDER BY id DESC LIMIT 1"))?.id ?? null;
}

/**
 * The check set in force before snapshot `beforeId` (or after every snapshot): the latest list that is not "=". The
 * condition is written out as status_snapshots_checks_idx's own (SAME_SET's literal), so both engines walk that
 * partial index of the few changed sets, not every snapshot.
 */
export async function checksInForce(q: Queryable, beforeId: number | null): Promise<string | null> {
  const row = await q.get<Pick<SnapshotRow, "checks">>(
    "SELECT checks FROM status_snapshots WHERE (CAST(? AS bigint) IS NULL OR id < ?) AND checks <> '=' ORDER BY id DESC LIMIT 1",
    [beforeId, beforeId],
  );
  return row?.checks ?? null;
}

export function insertSnapshotRow(t: Queryable, r: Omit<SnapshotRow, "id">): Promise<number> {
  return insertedId(
    t,
    "INSERT INTO status_snapshots (generated_at, overall, degraded, checks, policy_version, in_maintenance, job_run_id) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    [r.generated_at, r.overall, r.degraded, r.checks, r.policy_version, r.in_maintenance, r.job_run_id],
  );
}

/** The last snapshot before `startIso`, then every one up to `endIso`, in time order. */
export async function pointRows(q: Queryable, startIso: string, endIso: string): Promise<PointRow[]> {
  const cols = "generated_at, overall, degraded, checks, id";
  const before = await q.get<PointRow>(`SELECT ${cols} FROM status_snapshots WHERE generated_at < ? ORDER BY generated_at DESC, id DESC LIMIT 1`, [startIso]);
  const rows = await q.all<PointRow>(`SELECT ${cols} FROM status_snapshots WHERE generated_at >= ? AND generated_at <= ? ORDER BY generated_at, id`, [
    startIso,
    endIso,
  ]);
  return before ? [before, ...rows] : rows;
}

/** The latest `limit` snapshots, newest first. */
export function latestSnapshots(q: Queryable, limit: number) {
  return q.all<Pick<SnapshotRow, "generated_at" | "overall">>(
    "SELECT generated_at, overall FROM status_snapshots ORDER BY generated_at DESC, id DESC LIMIT ?",
    [limit],
  );
}

export async function newestSnapshotAt(q: Queryable): Promise<string | null> {
  const row = await q.get<Pick<SnapshotRow, "generated_at">>("SELECT generated_at FROM status_snapshots ORDER BY generated_at DESC, id DESC LIMIT 1");
  return row?.generated_at ?? null;
}

export async function oldestSnapshotAt(q: Queryable): Promise<string | null> {
  return (await q.get<Pick<SnapshotRow, "generated_at">>("SELECT generated_at FROM status_snapshots ORDER BY generated_at, id LIMIT 1"))?.generated_at ?? null;
}

/**
 * What a cached uptime source was built from, besides the clock: the newest snapshot and the maintenance windows
 * (their count, largest id and id sum change with any insert or delete). One round trip.
 */
export async function uptimeInputsKey(q: Queryable): Promise<string> {
  const r = (await q.get<{ snap: number | null; n: number; max: number | null; sum: number | null }>(
    `SELECT (SELECT max(id) FROM status_snapshots) AS snap, (SELECT count(*) FROM status_maintenance_windows) AS n,
       (SELECT max(id) FROM status_maintenance_windows) AS max, (SELECT sum(id) FROM status_maintenance_windows) AS sum`,
  ))!;
  return `${r.snap ?? 0}|${r.n}:${r.max ?? 0}:${r.sum ?? 0}`;
}

type Oldest = Pick<SnapshotRow, "id" | "checks">;

/**
 * Deletes the snapshots before `cutoffIso`, oldest first, in bounded batches (src/db/batched-delete.ts), each in a
 * transaction taken in turn with the snapshots' (serializeSnapshots). Before a batch goes, the row that will then
 * be the oldest — the first after the batch, or the first kept — is given the check set in force, so "=" never
 * points at a deleted row, between two batches (or two runs, when the time bound stopped one) included.
 */
export function pruneSnapshots(store: Store, cutoffIso: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return repeatBatches(bound, (limit) =>
    store.tx(async (t) => {
      await serializeSnapshots(t, t.dialect);
      let statements = t.dialect === "postgres" ? 2 : 1;
      // Both walk status_snapshots_at_idx: the OFFSET reads the batch's own entries, no more.
      let next = await t.get<Oldest>("SELECT id, checks FROM status_snapshots WHERE generated_at < ? ORDER BY generated_at, id LIMIT 1 OFFSET ?", [
        cutoffIso,
        limit,
      ]);
      if (!next) {
        next = await t.get<Oldest>("SELECT id, checks FROM status_snapshots WHERE generated_at >= ? ORDER BY generated_at, id LIMIT 1", [cutoffIso]);
        statements++;
      }
      if (next?.checks === SAME_SET) {
        // The list in force at `next`: the latest before it that is not "=", down the primary key from `next`. The
        // oldest row holds a list (this prune keeps it so), so the walk ends within the batch.
        const inForce = await t.get<Pick<SnapshotRow, "checks">>("SELECT checks FROM status_snapshots WHERE id < ? AND checks <> ? ORDER BY id DESC LIMIT 1", [
          next.id,
          SAME_SET,
        ]);
        statements++;
        if (inForce) {
          await t.run("UPDATE status_snapshots SET checks = ? WHERE id = ?", [inForce.checks, next.id]);
          statements++;
        }
      }
      const { changes } = await t.run(
        "DELETE FROM status_snapshots WHERE id IN (SELECT id FROM status_snapshots WHERE generated_at < ? ORDER BY generated_at, id LIMIT ?)",
        [cutoffIso, limit],
      );
      return { deleted: changes, statements: statements + 1 };
    }),
  );
}

/**
 * Snapshots from the last one before `startIso` up to `endIso`, as uptime points, each with its check set
 * resolved ("=" → the set in force; the set before the first row is looked up once). Consecutive snapshots
 * that say the same thing (same overall, same degraded checks, same set) and follow each other within
 * maxGapMs become one point spanning them (`last`): 90 days of minutely snapshots are mostly a handful of
 * runs, so the maths stays cheap. The result is exactly what the individual snapshots would give.
 */
export async function uptimePoints(q: Queryable, startIso: string, endIso: string, maxGapMs: number): Promise<Point[]> {
  const all = await pointRows(q, startIso, endIso);
  if (all.length === 0) return [];
  let set: string[] = [];
  if (all[0]!.checks === SAME_SET) {
    const inForce = await checksInForce(q, all[0]!.id);
    set = inForce ? inForce.split(",") : [];
  }
  const points: Point[] = [];
  let prev: (Point & { key: string }) | null = null;
  for (const { generated_at: generatedAt, overall, degraded, checks } of all) {
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

/**
 * uptimePoints apart from the event loop (src/db/apart.ts): 90 days of minutely snapshots are 129,600 rows read and
 * compacted (/healthz held 140–219 ms on SQLite before); only the few points cross back.
 */
export const uptimePointsTask = apartTask("status-uptime-points", (q, a: { startIso: string; endIso: string; maxGapMs: number }) =>
  uptimePoints(q, a.startIso, a.endIso, a.maxGapMs),
);
