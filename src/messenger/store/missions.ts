import { changed, countOf, type Dialect, type Queryable, type Statement } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerMissionEnrollments, messengerMissionEvents, messengerMissions } from "../tables";

// Missions, enrollments and progress events (messenger_missions, messenger_mission_enrollments,
// messenger_mission_events): the only SQL that touches them, but for the operators' analytics (mission-stats.ts).
// Lock order, the same on every path so no two transactions wait for each other in a circle: the player's row
// (player actions), then an enrollment, then (a progress event, on PostgreSQL) the mission's target lock, shared; an
// operator's edit takes the mission's row, then (lowering the target) that target lock alone — no enrollment.

export type MissionRow = Omit<RowOf<typeof messengerMissions>, "progress_source"> & { progress_source: "server" | "self_reported" };
export type EnrollmentRow = RowOf<typeof messengerMissionEnrollments>;
type EventRow = RowOf<typeof messengerMissionEvents>;

// ---- missions ----

/** The new mission, or null when its key is taken. */
export const insertMission = (
  t: Queryable,
  m: Pick<MissionRow, "mission_key" | "title" | "event_type" | "progress_source" | "target" | "daily_cap" | "per_minute_cap">,
  reward: { free_spins: number; missiles: number; points: number; salutes: string | null },
  at: string,
) =>
  t.get<MissionRow>(
    `INSERT INTO messenger_missions (mission_key, title, event_type, progress_source, target, reward_free_spins, reward_missiles, reward_points,
       reward_salutes, daily_cap, per_minute_cap, active, created_at, revision, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 1, ?) ON CONFLICT (mission_key) DO NOTHING RETURNING *`,
    [
      m.mission_key,
      m.title,
      m.event_type,
      m.progress_source,
      m.target,
      reward.free_spins,
      reward.missiles,
      reward.points,
      reward.salutes,
      m.daily_cap,
      m.per_minute_cap,
      at,
      at,
    ],
  );

export const missionByKey = (q: Queryable, key: string) => q.get<MissionRow>("SELECT * FROM messenger_missions WHERE mission_key = ?", [key]);

/** The mission's row lock for the rest of `t` (an operator's edit), and the row as it is now. */
export const lockMission = (t: Queryable, key: string) =>
  t.get<MissionRow>("UPDATE messenger_missions SET revision = revision WHERE mission_key = ? RETURNING *", [key]);

/** Oldest first (created_at, then key); the cursor is the last row's [created_at, mission_key]. */
export const missionsPage = (q: Queryable, afterCreated: string | null, afterKey: string | null, limit: number, offset: number) =>
  q.all<MissionRow>(
    `SELECT * FROM messenger_missions WHERE CAST(? AS text) IS NULL OR created_at > ? OR (created_at = ? AND mission_key > ?)
     ORDER BY created_at, mission_key LIMIT ? OFFSET ?`,
    [afterCreated, afterCreated, afterCreated, afterKey ?? "", limit, offset],
  );

export const countMissions = (q: Queryable) => countOf(q, "SELECT COUNT(*) AS n FROM messenger_missions");

export const activeMissions = (q: Queryable, limit: number) =>
  q.all<MissionRow>("SELECT * FROM messenger_missions WHERE active = 1 ORDER BY created_at, mission_key LIMIT ?", [limit]);

/**
 * The compare-and-set of an operator's edit: the columns named (from the caller's fixed list, never a request)
 * take their values and the revision goes up, only while the revision is still `expected`.
 */
export function updateMissionIfRevision(
  t: Queryable,
  key: string,
  expected: number,
  sets: Array<{ column: string; value: string | number | null }>,
  at: string,
) {
  return t.get<MissionRow>(
    `UPDATE messenger_missions SET ${sets.map((c) => `${c.column} = ?`).join(", ")}, revision = revision + 1, updated_at = ?
     WHERE mission_key = ? AND revision = ? RETURNING *`,
    [...sets.map((c) => c.value), at, key, expected],
  );
}

// ---- enrollments ----

export const enrollmentsOf = (q: Queryable, telegramUserId: number) =>
  q.all<EnrollmentRow>("SELECT * FROM messenger_mission_enrollments WHERE telegram_user_id = ?", [telegramUserId]);

export const enrollmentsWithMissions = (q: Queryable, telegramUserId: number, limit: number, offset: number) =>
  q.all<EnrollmentRow & Pick<MissionRow, "title" | "target" | "progress_source">>(
    `SELECT e.*, m.title, m.target, m.progress_source FROM messenger_mission_enrollments e JOIN messenger_missions m ON m.mission_key = e.mission_key
     WHERE e.telegram_user_id = ? ORDER BY e.enrolled_at, e.mission_key LIMIT ? OFFSET ?`,
    [telegramUserId, limit, offset],
  );

/** True when this call enrolled the player (false: already enrolled). */
export async function insertEnrollment(t: Queryable, telegramUserId: number, key: string, at: string): Promise<boolean> {
  return changed(
    t,
    "INSERT INTO messenger_mission_enrollments (telegram_user_id, mission_key, progress, enrolled_at) VALUES (?, ?, 0, ?) ON CONFLICT (telegram_user_id, mission_key) DO NOTHING",
    [telegramUserId, key, at],
  );
}

export const enrollmentOf = (q: Queryable, telegramUserId: number, key: string) =>
  q.get<EnrollmentRow>("SELECT * FROM messenger_mission_enrollments WHERE telegram_user_id = ? AND mission_key = ?", [telegramUserId, key]);

/** The enrollment with its row lock held for the rest of `t` (a progress event), or null when not enrolled. */
export const lockEnrollment = (t: Queryable, telegramUserId: number, key: string) =>
  t.get<EnrollmentRow>("UPDATE messenger_mission_enrollments SET progress = progress WHERE telegram_user_id = ? AND mission_key = ? RETURNING *", [
    telegramUserId,
    key,
  ]);

/** pg_advisory_xact_lock's first key for a mission's target lock ("misn" in ASCII); the second is the mission key's hash. */
const MISSION_TARGET_LOCK_CLASS = 0x6d_69_73_6e;

/**
 * A mission's target lock, per engine. PostgreSQL: a transaction-scoped advisory lock on the mission key's hash, which
 * every progress event holds shared (any number at once) and an operator lowering the target takes exclusively, so
 * the edit waits for the events in flight and they for it — without a lock on any enrollment. A shared advisory lock
 * writes nothing (a row's FOR SHARE writes its tuple, and a multixact once two events hold it); and the lock queue is
 * fair, so an edit is not starved by a stream of events as it could be behind a row's share locks. SQLite needs
 * none: a transaction holds the one writer from its BEGIN IMMEDIATE, so no event runs beside the edit. (Two-key
 * locks never meet the one-key locks other code takes.)
 */
const TARGET_LOCK: Record<Dialect, { shared: string; exclusive: string } | null> = {
  postgres: {
    shared: "SELECT pg_advisory_xact_lock_shared(CAST(? AS integer), hashtext(?)) AS locked",
    exclusive: "SELECT pg_advisory_xact_lock(CAST(? AS integer), hashtext(?)) AS locked",
  },
  sqlite: null,
};

/**
 * A progress event's hold on the mission's target until `t` ends, taken before the mission is read (in a statement
 * of its own: on PostgreSQL a statement reads what had committed when it began, so the read after it sees the target
 * of any edit it waited for). Sent with the enrollment's lock, it costs no round trip of its own.
 */
export async function holdMissionTarget(t: Queryable, key: string): Promise<void> {
  const lock = TARGET_LOCK[t.dialect];
  if (lock) await t.get(lock.shared, [MISSION_TARGET_LOCK_CLASS, key]);
}

/**
 * The highest progress among a mission's unfinished enrollments, for an operator lowering its target, with the target
 * lock held exclusively for the rest of `t` (after the mission's row lock): a progress event in flight has committed
 * (and is counted) or waits for this edit and then reads the new target. Locks no enrollment: a row lock on each
 * unfinished one (an UPDATE of them all) took as long as there were players, and kept their plays waiting meanwhile.
 * The read is one entry of an index on (mission_key, completed_at, progress), walked backwards; without one it
 * reads the mission's unfinished enrollments through messenger_mission_enrollments_mission_idx.
 */
export async function highestUnfinishedProgress(t: Queryable, key: string): Promise<number | null> {
  const lock = TARGET_LOCK[t.dialect];
  if (lock) await t.get(lock.exclusive, [MISSION_TARGET_LOCK_CLASS, key]);
  const row = await t.get<{ progress: number }>(
    "SELECT progress FROM messenger_mission_enrollments WHERE mission_key = ? AND completed_at IS NULL ORDER BY progress DESC LIMIT 1",
    [key],
  );
  return row?.progress ?? null;
}

export async function setProgress(t: Queryable, telegramUserId: number, key: string, progress: number, completedAt: string | null): Promise<void> {
  await t.run("UPDATE messenger_mission_enrollments SET progress = ?, completed_at = ? WHERE telegram_user_id = ? AND mission_key = ?", [
    progress,
    completedAt,
    telegramUserId,
    key,
  ]);
}

/**
 * Counts `units` of a server-observed event for the player's unfinished enrollments in active server missions of
 * that type (one probe of the primary key for a player without any). As a statement for a caller that sends it
 * inside another (src/messenger/store/ledger.ts, riders), and run (addObserved).
 */
export const addObservedStatement = (telegramUserId: number, eventType: string, units: number): Statement => ({
  sql: `UPDATE messenger_mission_enrollments SET observed = observed + ?
     WHERE telegram_user_id = ? AND completed_at IS NULL AND EXISTS (
       SELECT 1 FROM messenger_missions m WHERE m.mission_key = messenger_mission_enrollments.mission_key
         AND m.event_type = ? AND m.progress_source = 'server' AND m.active = 1)`,
  params: [units, telegramUserId, eventType],
});

export async function addObserved(t: Queryable, telegramUserId: number, eventType: string, units: number): Promise<void> {
  const s = addObservedStatement(telegramUserId, eventType, units);
  await t.run(s.sql, s.params);
}

export const countCompletedOf = (q: Queryable, telegramUserId: number) =>
  countOf(q, "SELECT COUNT(*) AS n FROM messenger_mission_enrollments WHERE telegram_user_id = ? AND completed_at IS NOT NULL", [telegramUserId]);

// ---- progress events ----

export const priorEvent = (q: Queryable, telegramUserId: number, clientEventId: string) =>
  q.get<Pick<EventRow, "mission_key" | "result">>(
    "SELECT mission_key, result FROM messenger_mission_events WHERE telegram_user_id = ? AND client_event_id = ?",
    [telegramUserId, clientEventId],
  );

/** Accepted events of the player on one mission after `sinceIso` (the per-minute cap). */
export const acceptedEventsSince = (q: Queryable, telegramUserId: number, key: string, sinceIso: string) =>
  countOf(q, "SELECT COUNT(*) AS n FROM messenger_mission_events WHERE telegram_user_id = ? AND mission_key = ? AND created_at > ? AND accepted = 1", [
    telegramUserId,
    key,
    sinceIso,
  ]);

/** Accepted progress units of the player on one mission from `fromIso` (the daily cap). */
export async function acceptedUnitsFrom(q: Queryable, telegramUserId: number, key: string, fromIso: string): Promise<number> {
  const row = await q.get<{ s: number | null }>(
    "SELECT SUM(value) AS s FROM messenger_mission_events WHERE telegram_user_id = ? AND mission_key = ? AND created_at >= ? AND accepted = 1",
    [telegramUserId, key, fromIso],
  );
  return row?.s ?? 0;
}

export async function insertEvent(t: Queryable, e: Omit<EventRow, "id">): Promise<void> {
  await t.run(
    `INSERT INTO messenger_mission_events (telegram_user_id, mission_key, client_event_id, value, accepted, reason, result, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [e.telegram_user_id, e.mission_key, e.client_event_id, e.value, e.accepted, e.reason, e.result, e.created_at],
  );
}

/** The player's events, newest first; a null mission key lists every mission's. */
export const eventsOf = (q: Queryable, telegramUserId: number, key: string | null, limit: number, offset: number) =>
  q.all<Pick<EventRow, "mission_key" | "client_event_id" | "value" | "accepted" | "reason" | "created_at">>(
    `SELECT mission_key, client_event_id, value, accepted, reason, created_at FROM messenger_mission_events
     WHERE telegram_user_id = ? AND (CAST(? AS text) IS NULL OR mission_key = ?) ORDER BY id DESC LIMIT ? OFFSET ?`,
    [telegramUserId, key, key, limit, offset],
  );
