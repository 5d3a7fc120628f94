import { apartTask } from "../../db/apart";
import { countOf, insertedId, type Param, placeholders, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { opsAlertRuns, opsAlertSilences, opsAlertState } from "../tables";

// ops_alert_runs, ops_alert_state and ops_alert_silences: the only SQL that touches them, written once for both
// engines (docs/design.md §8a).

export type RunRow = RowOf<typeof opsAlertRuns>;
export type StateRow = RowOf<typeof opsAlertState>;
export type SilenceRow = RowOf<typeof opsAlertSilences>;

// ---- alert runs

const INSERT_RUN = "INSERT INTO ops_alert_runs (run_id, at, source, name, status, value, details) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id";

export async function insertRuns(t: Queryable, rows: ReadonlyArray<Omit<RunRow, "id">>): Promise<number[]> {
  const ids: number[] = [];
  for (const r of rows) ids.push(await insertedId(t, INSERT_RUN, [r.run_id, r.at, r.source, r.name, r.status, r.value, r.details]));
  return ids;
}

export interface RunFilter {
  from: string;
  to: string;
  /** "all" matches every value: the statement (and its parameter count) is the same for every filter. */
  source: string;
  status: string;
}

const RUN_FILTER = "at >= ? AND at <= ? AND (CAST(? AS text) = 'all' OR source = ?) AND (CAST(? AS text) = 'all' OR status = ?)";
const runFilterArgs = (f: RunFilter): Param[] => [f.from, f.to, f.source, f.source, f.status, f.status];

export const countRuns = (q: Queryable, f: RunFilter) => countOf(q, `SELECT count(*) AS n FROM ops_alert_runs WHERE ${RUN_FILTER}`, runFilterArgs(f));

/** Alert rows of the filter, newest first (then by id, so ties keep insertion order reversed). */
export const runsPage = (q: Queryable, f: RunFilter, limit: number, offset: number) =>
  q.all<RunRow>(
    `SELECT id, run_id, at, source, name, status, value, details FROM ops_alert_runs WHERE ${RUN_FILTER} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`,
    [...runFilterArgs(f), limit, offset],
  );

/**
 * A page of the filter's rows and how many there are in all, apart from the event loop (src/db/apart.ts): the count
 * reads every row of up to 90 days (559–637 ms of /healthz stall at 2,000,000 rows on SQLite before), and an export's
 * page is up to 50,000 rows.
 */
export const alertRunsPageTask = apartTask("alert-runs-page", async (q, a: { filter: RunFilter; limit: number; offset: number }) => ({
  total: await countRuns(q, a.filter),
  rows: await runsPage(q, a.filter, a.limit, a.offset),
}));

/** Every row of the filter that belongs to one of `runIds` (a page's runs, whole), newest first. */
export const rowsOfRuns = (q: Queryable, f: RunFilter, runIds: string[]) =>
  runIds.length === 0
    ? Promise.resolve([] as RunRow[])
    : q.all<RunRow>(
        `SELECT id, run_id, at, source, name, status, value, details FROM ops_alert_runs WHERE ${RUN_FILTER} AND run_id IN (${placeholders(runIds.length)}) ORDER BY at DESC, id DESC`,
        [...runFilterArgs(f), ...runIds],
      );

export const newestRun = (q: Queryable, source: string, name: string) =>
  q.get<Pick<RunRow, "value" | "details">>("SELECT value, details FROM ops_alert_runs WHERE source = ? AND name = ? ORDER BY at DESC, id DESC LIMIT 1", [
    source,
    name,
  ]);

/** The newest evaluations of (source, name), newest first: an alert's history. */
export const runHistory = (q: Queryable, source: string, name: string, limit: number) =>
  q.all<Pick<RunRow, "id" | "run_id" | "at" | "status" | "value" | "details">>(
    "SELECT id, run_id, at, status, value, details FROM ops_alert_runs WHERE source = ? AND name = ? ORDER BY at DESC, id DESC LIMIT ?",
    [source, name, limit],
  );

/** The rows of (source, name) at or after `since`, oldest first (the dead-letter growth). */
export const runsOfSince = (q: Queryable, source: string, name: string, since: string) =>
  q.all<Pick<RunRow, "value" | "details">>("SELECT value, details FROM ops_alert_runs WHERE source = ? AND name = ? AND at >= ? ORDER BY at, id", [
    source,
    name,
    since,
  ]);

/**
 * The newest `warn` streak of a source: the name of its newest warn row, the first warn row of that streak (no
 * other status of that name in between) and the first later row of that name that is not warn (null while it
 * still warns). Null when the source never warned.
 */
export async function warnStreakOf(q: Queryable, source: string): Promise<{ name: string; start: string; end: string | null } | null> {
  const latest = await q.get<Pick<RunRow, "at" | "name">>(
    "SELECT at, name FROM ops_alert_runs WHERE source = ? AND status = 'warn' ORDER BY at DESC, id DESC LIMIT 1",
    [source],
  );
  if (!latest) return null;
  // One seek each down ops_alert_runs_name_idx (source, name, status, at): "not warn" is ok and fail (ALERT_STATUSES), each its own
  // range (`status <> 'warn'` read the whole streak between).
  const at = async (agg: "min" | "max", statuses: readonly string[], cond: string, ...args: Param[]) => {
    const sql = `SELECT ${agg}(at) AS at FROM ops_alert_runs WHERE source = ? AND name = ? AND status = ? AND ${cond}`;
    const found = [];
    for (const status of statuses) found.push((await q.get<{ at: string | null }>(sql, [source, latest.name, status, ...args]))?.at ?? null);
    const ats = found.filter((a): a is string => a !== null).sort();
    return (agg === "min" ? ats[0] : ats[ats.length - 1]) ?? null;
  };
  const notWarn = ["ok", "fail"] as const;
  const before = await at("max", notWarn, "at < ?", latest.at);
  const start = await at("min", ["warn"], "at > ? AND at <= ?", before ?? "", latest.at);
  const end = await at("min", notWarn, "at > ?", latest.at);
  return { name: latest.name, start: start ?? latest.at, end };
}

// ---- alert state: which rows are not applied yet, and the per-key claim

export type PendingRun = Pick<RunRow, "id" | "at" | "source" | "name" | "status" | "value" | "details">;
const PENDING_COLUMNS = "r.id, r.at, r.source, r.name, r.status, r.value, r.details";
/**
 * Rows at or after `since` newer than the row their key last applied (or of a key without state). Not a watermark
 * over every key (ids commit out of order on PostgreSQL: a row can become visible after a higher id was applied):
 * each key is compared with its own last_row_id, so a late row of one key is still found.
 */
const PENDING = `FROM ops_alert_runs r LEFT JOIN ops_alert_state s ON s.alert_key = r.source || ':' || r.name
  WHERE r.at >= ? AND (s.id IS NULL OR r.id > s.last_row_id)`;

/**
 * Pending rows (PENDING), oldest first. The batch is taken in time order, down ops_alert_runs_at_idx from `since` (in
 * id order SQLite walked the table from its oldest row, and the table is never pruned), and returned in id order, as
 * its keys apply it.
 */
export const pendingRuns = async (q: Queryable, since: string, limit: number) =>
  (await q.all<PendingRun>(`SELECT ${PENDING_COLUMNS} ${PENDING} ORDER BY r.at, r.id LIMIT ?`, [since, limit])).sort((a, b) => a.id - b.id);

/** The given rows (those a writer just recorded), oldest first. */
export const runsByIds = (q: Queryable, ids: readonly number[]) =>
  q.all<PendingRun>(`SELECT ${PENDING_COLUMNS} FROM ops_alert_runs r WHERE r.id IN (${placeholders(ids.length)}) ORDER BY r.id`, ids);

/** Whether any row of the window is newer than its key's state (the cheap check of an idle tick). */
export async function anyPendingRun(q: Queryable, since: string): Promise<boolean> {
  return (await q.get<{ one: number }>(`SELECT 1 AS one ${PENDING} LIMIT 1`, [since])) !== null;
}

/**
 * The key's state, locked for the rest of the transaction: an UPDATE that changes nothing takes the row lock on
 * PostgreSQL (a second instance applying the same key waits here, then reads the first one's committed state, as
 * READ COMMITTED re-reads an updated row), and returns the row on both engines. Null when the key has no state.
 */
export const lockState = (t: Queryable, key: string) =>
  t.get<StateRow>("UPDATE ops_alert_state SET last_row_id = last_row_id WHERE alert_key = ? RETURNING *", [key]);

/** A key's first state; null when another transaction made it first (then lock it: lockState). */
export const insertState = (t: Queryable, s: Omit<StateRow, "id" | "resolved_at" | "notified_level" | "notified_at">) =>
  t.get<StateRow>(
    `INSERT INTO ops_alert_state (alert_key, source, name, level, since, fired_at, resolved_at, last_row_id, last_seen_at)
     VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?) ON CONFLICT (alert_key) DO NOTHING RETURNING *`,
    [s.alert_key, s.source, s.name, s.level, s.since, s.fired_at, s.last_row_id, s.last_seen_at],
  );

export async function updateState(t: Queryable, s: StateRow): Promise<void> {
  await t.run(
    `UPDATE ops_alert_state SET level = ?, since = ?, fired_at = ?, resolved_at = ?, last_row_id = ?, last_seen_at = ?, notified_level = ?, notified_at = ?
     WHERE id = ?`,
    [s.level, s.since, s.fired_at, s.resolved_at, s.last_row_id, s.last_seen_at, s.notified_level, s.notified_at, s.id],
  );
}

// ---- alert state: what operators read

/** A state row with its newest evaluation's value and details. */
export type JoinedState = StateRow & Pick<RunRow, "value" | "details">;
const JOINED = "SELECT s.*, r.value AS value, r.details AS details FROM ops_alert_state s LEFT JOIN ops_alert_runs r ON r.id = s.last_row_id";

/** Firing alerts (warn or fail), fail first, then the longest firing first; optionally of one source or level. */
export const firingStates = (q: Queryable, source: string | null, level: string | null) =>
  q.all<JoinedState>(
    `${JOINED} WHERE s.level IN ('warn', 'fail') AND (CAST(? AS text) IS NULL OR s.source = ?) AND (CAST(? AS text) IS NULL OR s.level = ?)
     ORDER BY CASE s.level WHEN 'fail' THEN 0 ELSE 1 END, s.since, s.id`,
    [source, source, level, level],
  );

/**
 * The states whose level changed most recently: the latest of since, resolved_at and fired_at, newest first. The
 * latest of three is a CASE, not max(a, b, c): PostgreSQL's max is an aggregate only (its greatest() is not SQLite's).
 */
export const recentStates = (q: Queryable, limit: number) =>
  q.all<JoinedState>(
    `${JOINED} ORDER BY CASE
       WHEN s.since >= coalesce(s.resolved_at, '') AND s.since >= coalesce(s.fired_at, '') THEN s.since
       WHEN coalesce(s.resolved_at, '') >= coalesce(s.fired_at, '') THEN coalesce(s.resolved_at, '')
       ELSE coalesce(s.fired_at, '') END DESC, s.id DESC LIMIT ?`,
    [limit],
  );

export const stateById = (q: Queryable, id: number) => q.get<JoinedState>(`${JOINED} WHERE s.id = ?`, [id]);

export const stateLevels = (q: Queryable) => q.all<{ key: string; level: string }>("SELECT alert_key AS key, level FROM ops_alert_state ORDER BY alert_key");

// ---- silences

export const insertSilence = (t: Queryable, s: Pick<SilenceRow, "matcher" | "reason" | "created_by" | "created_at" | "ends_at">) =>
  t.get<SilenceRow>("INSERT INTO ops_alert_silences (matcher, reason, created_by, created_at, ends_at) VALUES (?, ?, ?, ?, ?) RETURNING *", [
    s.matcher,
    s.reason,
    s.created_by,
    s.created_at,
    s.ends_at,
  ]);

export const silenceById = (q: Queryable, id: number) => q.get<SilenceRow>("SELECT * FROM ops_alert_silences WHERE id = ?", [id]);

/** Ends a silence still in force at `nowIso`; null when it had ended (by hand or by time) — by another request too. */
export const expireSilenceRow = (t: Queryable, id: number, nowIso: string, by: string) =>
  t.get<SilenceRow>("UPDATE ops_alert_silences SET expired_at = ?, expired_by = ? WHERE id = ? AND expired_at IS NULL AND ends_at > ? RETURNING *", [
    nowIso,
    by,
    id,
    nowIso,
  ]);

/** Silences newest first, before id `after` when set, optionally of one state ('active' | 'expired') at `nowIso`. */
export const silencesPage = (q: Queryable, page: { after: number | null; limit: number; offset: number }, state: string | null, nowIso: string) =>
  q.all<SilenceRow>(
    `SELECT * FROM ops_alert_silences WHERE (CAST(? AS bigint) IS NULL OR id < ?)
       AND (CAST(? AS text) IS NULL OR (? = 'expired' AND (expired_at IS NOT NULL OR ends_at <= ?)) OR (? = 'active' AND expired_at IS NULL AND ends_at > ?))
     ORDER BY id DESC LIMIT ? OFFSET ?`,
    [page.after, page.after, state, state, nowIso, state, nowIso, page.limit, page.offset],
  );

/** Silences in force at `nowIso`, the one ending last first (lowest id on a tie). */
export const silencesInForce = (q: Queryable, nowIso: string) =>
  q.all<SilenceRow>("SELECT * FROM ops_alert_silences WHERE expired_at IS NULL AND ends_at > ? ORDER BY ends_at DESC, id", [nowIso]);
