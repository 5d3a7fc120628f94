import type { Queryable, Statement } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerMissionEnrollments, messengerMissionEvents, messengerMissions } from "../tables";

// Missions, enrollments and progress events (messenger_missions, messenger_mission_enrollments,
// messenger_mission_events): the only SQL that touches them, but for the operators' analytics (mission-stats.ts).
// Lock order, the same on every path so no two transactions wait for each other in a circle: the player's row
// (player actions), then an enrollment; an operator's edit takes the mission's row, then its enrollments.

export type MissionRow = Omit<RowOf<typeof messengerMissions>, "progress_source"> & { progress_source: "server" | "self_reported" };
export type EnrollmentRow = RowOf<typeof messengerMissionEnrollments>;
type EventRow = RowOf<typeof messengerMissionEvents>;

// ---- missions ----

export interface NewMissionRow {
  missionKey: string;
  title: string;
  eventType: string;
  source: MissionRow["progress_source"];
  target: number;
  reward: { free_spins: number; missiles: number; points: number; salutes: string | null };
  dailyCap: number;
  perMinuteCap: number;
  at: string;
}

/** The new mission, or null when its key is taken. */
export const insertMission = (t: Queryable, m: NewMissionRow) =>
  t.get<MissionRow>(
    `INSERT INTO messenger_missions (mission_key, title, event_type, progress_source, target, reward_free_spins, reward_missiles, reward_points,
       reward_salutes, daily_cap, per_minute_cap, active, created_at, revision, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, 1, ?) ON CONFLICT (mission_key) DO NOTHING RETURNING *`,
    [
      m.missionKey,
      m.title,
      m.eventType,
      m.source,
      m.target,
      m.reward.free_spins,
      m.reward.missiles,
      m.reward.points,
      m.reward.salutes,
      m.dailyCap,
      m.perMinuteCap,
      m.at,
      m.at,
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

export async function countMissions(q: Queryable): Promise<number> {
  return (await q.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_missions"))?.n ?? 0;
}

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
  const r = await t.run(
    "INSERT INTO messenger_mission_enrollments (telegram_user_id, mission_key, progress, enrolled_at) VALUES (?, ?, 0, ?) ON CONFLICT (telegram_user_id, mission_key) DO NOTHING",
    [telegramUserId, key, at],
  );
  return r.changes > 0;
}

export const enrollmentOf = (q: Queryable, telegramUserId: number, key: string) =>
  q.get<EnrollmentRow>("SELECT * FROM messenger_mission_enrollments WHERE telegram_user_id = ? AND mission_key = ?", [telegramUserId, key]);

/** The enrollment with its row lock held for the rest of `t` (a progress event), or null when not enrolled. */
export const lockEnrollment = (t: Queryable, telegramUserId: number, key: string) =>
  t.get<EnrollmentRow>("UPDATE messenger_mission_enrollments SET progress = progress WHERE telegram_user_id = ? AND mission_key = ? RETURNING *", [
    telegramUserId,
    key,
  ]);

/**
 * Locks every unfinished enrollment of a mission (an operator lowering its target), then reads the highest
 * progress among them: a progress event in flight has either committed (and is counted) or waits for this edit.
 */
export async function highestUnfinishedProgress(t: Queryable, key: string): Promise<number | null> {
  await t.run("UPDATE messenger_mission_enrollments SET progress = progress WHERE mission_key = ? AND completed_at IS NULL", [key]);
  // messenger_mission_enrollments_mission_idx (mission_key, completed_at): the unfinished enrollments of one mission.
  return (
    (await t.get<{ p: number | null }>("SELECT MAX(progress) AS p FROM messenger_mission_enrollments WHERE mission_key = ? AND completed_at IS NULL", [key]))
      ?.p ?? null
  );
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
 * that type. A player without enrollments costs one probe of the primary key (telegram_user_id, mission_key).
 */
/** addObserved's statement, for a caller that sends it inside another (src/messenger/store/ledger.ts, riders). */
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

export async function countCompletedOf(q: Queryable, telegramUserId: number): Promise<number> {
  return (
    (
      await q.get<{ n: number }>("SELECT COUNT(*) AS n FROM messenger_mission_enrollments WHERE telegram_user_id = ? AND completed_at IS NOT NULL", [
        telegramUserId,
      ])
    )?.n ?? 0
  );
}

// ---- progress events ----

export const priorEvent = (q: Queryable, telegramUserId: number, clientEventId: string) =>
  q.get<Pick<EventRow, "mission_key" | "result">>(
    "SELECT mission_key, result FROM messenger_mission_events WHERE telegram_user_id = ? AND client_event_id = ?",
    [telegramUserId, clientEventId],
  );

/** Accepted events of the player on one mission after `sinceIso` (the per-minute cap). */
export async function acceptedEventsSince(q: Queryable, telegramUserId: number, key: string, sinceIso: string): Promise<number> {
  const row = await q.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM messenger_mission_events WHERE telegram_user_id = ? AND mission_key = ? AND created_at > ? AND accepted = 1",
    [telegramUserId, key, sinceIso],
  );
  return row?.n ?? 0;
}

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
