import { type BatchBound, type BatchedDeleteResult, deleteInBatches } from "../../db/batched-delete";
import { changed, countOf, insertedId, placeholders, type Queryable, type Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { PageRequest } from "../../http/pagination";
import { newestFirst } from "./newest-first";
import type { statusIncidentUpdates, statusIncidents } from "../tables";

// status_incidents and status_incident_updates: incidents of both sources (automatic ones follow the snapshots,
// operator ones are written through /admin/status/incidents) and the operators' updates.

export type IncidentRow = RowOf<typeof statusIncidents>;
export type UpdateRow = Pick<RowOf<typeof statusIncidentUpdates>, "id" | "incident_id" | "state" | "message" | "severity" | "created_at">;

export function incidentById(q: Queryable, id: number): Promise<IncidentRow | null> {
  return q.get<IncidentRow>("SELECT * FROM status_incidents WHERE id = ?", [id]);
}

/**
 * Takes the incident's row lock for the rest of the transaction `t` (false when there is no such incident), so two
 * changes of one incident on two instances run one after the other and the second reads the first's result: a
 * no-op UPDATE locks the row on PostgreSQL (SELECT … FOR UPDATE is not SQLite), and SQLite's writer is single.
 */
export async function lockIncident(t: Queryable, id: number): Promise<boolean> {
  return changed(t, "UPDATE status_incidents SET updated_at = updated_at WHERE id = ?", [id]);
}

/** The updates of these incidents, oldest first. */
export function updatesOfIncidents(q: Queryable, ids: readonly number[]): Promise<UpdateRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return q.all<UpdateRow>(
    `SELECT id, incident_id, state, message, severity, created_at FROM status_incident_updates WHERE incident_id IN (${placeholders(ids.length)}) ORDER BY id`,
    ids,
  );
}

// ------------------------------------------------------------------------------------------ automatic incidents

/** The open automatic incident (at most one: its changes run inside the snapshot transactions, one at a time). */
export function openAutomaticIncident(q: Queryable): Promise<IncidentRow | null> {
  return q.get<IncidentRow>("SELECT * FROM status_incidents WHERE ended_at IS NULL AND source = 'automatic' ORDER BY id DESC LIMIT 1");
}

export async function closeAutomaticIncident(t: Queryable, id: number, at: string, snapshotId: number): Promise<void> {
  await t.run("UPDATE status_incidents SET ended_at = ?, closed_snapshot_id = ?, updated_at = ? WHERE id = ?", [at, snapshotId, at, id]);
}

export async function openAutomatic(
  t: Queryable,
  r: { at: string; severity: "warn" | "bad"; checks: string; summary: string; snapshotId: number },
): Promise<number> {
  return insertedId(
    t,
    `INSERT INTO status_incidents (source, started_at, severity, current_severity, checks, summary, opened_snapshot_id, updated_at)
     VALUES ('automatic', ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [r.at, r.severity, r.severity, r.checks, r.summary, r.snapshotId, r.at],
  );
}

export async function updateAutomatic(
  t: Queryable,
  id: number,
  r: { peak: "warn" | "bad"; current: "warn" | "bad"; checks: string; summary: string; at: string },
): Promise<void> {
  await t.run("UPDATE status_incidents SET severity = ?, current_severity = ?, checks = ?, summary = ?, updated_at = ? WHERE id = ?", [
    r.peak,
    r.current,
    r.checks,
    r.summary,
    r.at,
    id,
  ]);
}

// ------------------------------------------------------------------------------------------ operator incidents

export type NewOperatorIncident = Pick<
  IncidentRow,
  "started_at" | "ended_at" | "severity" | "updated_at" | "title" | "state" | "components" | "created_by" | "idempotency_key" | "request_hash"
>;

/**
 * Inserts an operator incident, claiming its Idempotency-Key (if any) in the same statement: null when another
 * request holds the key already (on PostgreSQL it waits for that request's transaction to end first).
 */
export async function insertOperatorIncident(t: Queryable, r: NewOperatorIncident): Promise<number | null> {
  const row = await t.get<Pick<IncidentRow, "id">>(
    `INSERT INTO status_incidents (source, started_at, ended_at, severity, current_severity, checks, summary, updated_at, title, state, components, created_by, idempotency_key, request_hash)
     VALUES ('operator', ?, ?, ?, ?, '{}', '{}', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
    [r.started_at, r.ended_at, r.severity, r.severity, r.updated_at, r.title, r.state, r.components, r.created_by, r.idempotency_key, r.request_hash],
  );
  return row?.id ?? null;
}

export function incidentByKey(q: Queryable, key: string) {
  return q.get<Pick<IncidentRow, "id" | "request_hash">>("SELECT id, request_hash FROM status_incidents WHERE idempotency_key = ?", [key]);
}

export function updateByKey(q: Queryable, incidentId: number, key: string) {
  return q.get<Pick<RowOf<typeof statusIncidentUpdates>, "request_hash">>(
    "SELECT request_hash FROM status_incident_updates WHERE incident_id = ? AND idempotency_key = ?",
    [incidentId, key],
  );
}

export type NewUpdate = Pick<
  RowOf<typeof statusIncidentUpdates>,
  "incident_id" | "state" | "message" | "severity" | "created_at" | "created_by" | "idempotency_key" | "request_hash"
>;

/** Inserts an update, claiming its Idempotency-Key on the incident (if any): false when the key was taken already. */
export async function insertUpdate(t: Queryable, u: NewUpdate): Promise<boolean> {
  return changed(
    t,
    `INSERT INTO status_incident_updates (incident_id, state, message, severity, created_at, created_by, idempotency_key, request_hash)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (incident_id, idempotency_key) DO NOTHING`,
    [u.incident_id, u.state, u.message, u.severity, u.created_at, u.created_by, u.idempotency_key, u.request_hash],
  );
}

export async function setOperatorState(
  t: Queryable,
  id: number,
  r: { state: string; peak: "warn" | "bad"; current: "warn" | "bad"; endedAt: string | null; at: string },
): Promise<void> {
  await t.run("UPDATE status_incidents SET state = ?, severity = ?, current_severity = ?, ended_at = ?, updated_at = ? WHERE id = ?", [
    r.state,
    r.peak,
    r.current,
    r.endedAt,
    r.at,
    id,
  ]);
}

export async function setTitleAndComponents(t: Queryable, id: number, title: string | null, components: string | null, at: string): Promise<void> {
  await t.run("UPDATE status_incidents SET title = ?, components = ?, updated_at = ? WHERE id = ?", [title, components, at, id]);
}

// ------------------------------------------------------------------------------------------ lists

/** Incidents of both sources that ended after `sinceIso` or are still open, newest start first. */
export function incidentsSince(q: Queryable, sinceIso: string, limit: number): Promise<IncidentRow[]> {
  return q.all<IncidentRow>("SELECT * FROM status_incidents WHERE ended_at IS NULL OR ended_at > ? ORDER BY started_at DESC, id DESC LIMIT ?", [
    sinceIso,
    limit,
  ]);
}

export function openIncidentRows(q: Queryable): Promise<IncidentRow[]> {
  return q.all<IncidentRow>("SELECT * FROM status_incidents WHERE ended_at IS NULL ORDER BY started_at DESC, id DESC LIMIT 50");
}

/** Keyset page by id (newest first), with optional source and open/resolved filters (NULL switches one off). */
export function adminIncidentPage(q: Queryable, page: PageRequest, source: string | null, status: string | null) {
  const filter = ` AND (CAST(? AS text) IS NULL OR source = ?)
       AND (CAST(? AS text) IS NULL OR (CAST(? AS text) = 'open' AND ended_at IS NULL) OR (CAST(? AS text) = 'resolved' AND ended_at IS NOT NULL))`;
  return newestFirst<IncidentRow>(q, "status_incidents", page, filter, [source, source, status, status, status]);
}

export interface WindowFilter {
  /** Incidents that overlap [since, until): started before until, and still open or ended at/after since. */
  since: string | null;
  until: string | null;
  /** The peak severity, exactly; absent or null: any. */
  severity?: "warn" | "bad" | null;
  status?: "open" | "resolved" | null;
  limit: number;
  offset: number;
}

const WINDOW_WHERE = `(CAST(? AS text) IS NULL OR ended_at IS NULL OR ended_at >= ?) AND (CAST(? AS text) IS NULL OR started_at < ?)
  AND (CAST(? AS text) IS NULL OR severity = ?)
  AND (CAST(? AS text) IS NULL OR (CAST(? AS text) = 'open' AND ended_at IS NULL) OR (CAST(? AS text) = 'resolved' AND ended_at IS NOT NULL))`;
const windowArgs = ({ since, until, severity = null, status = null }: WindowFilter) => [since, since, until, until, severity, severity, status, status, status];

export async function incidentsInWindowRows(q: Queryable, f: WindowFilter) {
  const rows = await q.all<IncidentRow>(`SELECT * FROM status_incidents WHERE ${WINDOW_WHERE} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`, [
    ...windowArgs(f),
    f.limit,
    f.offset,
  ]);
  const total = await countOf(q, `SELECT count(*) AS n FROM status_incidents WHERE ${WINDOW_WHERE}`, windowArgs(f));
  return { rows, total };
}

/**
 * Closed incidents that ended before `cutoffIso`, in bounded batches down status_incidents_ended_idx: a batch of
 * incidents and their updates (first: the foreign key) in one transaction.
 */
export function pruneIncidents(store: Store, cutoffIso: string, bound: BatchBound = {}): Promise<BatchedDeleteResult> {
  return deleteInBatches(store, {
    table: "status_incidents",
    key: "id",
    where: "ended_at IS NOT NULL AND ended_at < ?",
    params: [cutoffIso],
    children: [{ table: "status_incident_updates", column: "incident_id" }],
    ...bound,
  });
}
