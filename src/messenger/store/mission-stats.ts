import { apartTask } from "../../db/apart";
import { countOf, type Queryable } from "../../db/port";

// The operators' mission analytics (src/messenger/admin/missions-analytics.ts): reads of
// messenger_mission_enrollments and messenger_mission_events, each bounded by one mission's key (and a time range)
// so it walks that mission's slice of an index, never a whole table:
// - messenger_mission_events_mission_idx (mission_key, created_at): events, refusals and rewards in a window;
// - messenger_mission_enrollments_mission_idx (mission_key, completed_at): completions in a window, and the
//   mission's enrollments (their enrolled_at is filtered within that mission's slice).
// `byDay` groups by the UTC day (the first 10 characters of the ISO time); without it every row is day "".

const dayOf = (col: string, byDay: boolean) => (byDay ? `substr(${col}, 1, 10)` : "''");
const groupDay = (col: string, byDay: boolean) => (byDay ? `substr(${col}, 1, 10)` : "");
const groupBy = (...parts: string[]) => {
  const p = parts.filter(Boolean);
  return p.length ? `GROUP BY ${p.join(", ")}` : "";
};

type Window = { key: string; since: string; until: string; byDay: boolean };

/** The mission's enrollments (by enrolled_at) or completions (by completed_at) in the window. */
const enrollmentsPerDay = (col: "enrolled_at" | "completed_at") => (q: Queryable, w: Window) =>
  q.all<{ d: string; n: number }>(
    `SELECT ${dayOf(col, w.byDay)} AS d, COUNT(*) AS n FROM messenger_mission_enrollments
     WHERE mission_key = ? AND ${col} >= ? AND ${col} < ? ${groupBy(groupDay(col, w.byDay))}`,
    [w.key, w.since, w.until],
  );
export const enrolledPerDay = enrollmentsPerDay("enrolled_at");
export const completedPerDay = enrollmentsPerDay("completed_at");

export const eventsPerDay = (q: Queryable, w: Window) =>
  q.all<{ d: string; accepted: number; reason: string | null; n: number; units: number }>(
    `SELECT ${dayOf("created_at", w.byDay)} AS d, accepted, reason, COUNT(*) AS n, SUM(value) AS units FROM messenger_mission_events
     WHERE mission_key = ? AND created_at >= ? AND created_at < ? ${groupBy(groupDay("created_at", w.byDay), "accepted", "reason")}`,
    [w.key, w.since, w.until],
  );

/**
 * The accepted events that completed the mission (their recorded answer has a reward_paid object), with that
 * answer: what was paid is read from it in TypeScript. LIKE only narrows the rows (JSON functions differ between
 * the engines); the caller parses each answer and keeps those whose reward_paid is an object.
 */
export const completingEvents = (q: Queryable, w: Omit<Window, "byDay">) =>
  q.all<{ created_at: string; result: string }>(
    `SELECT created_at, result FROM messenger_mission_events
     WHERE mission_key = ? AND created_at >= ? AND created_at < ? AND accepted = 1 AND result LIKE '%"reward\\_paid":{%' ESCAPE '\\'`,
    [w.key, w.since, w.until],
  );

/**
 * A mission's four window reads at once, apart from the event loop (src/db/apart.ts): the events' counts read every
 * event of the mission in the window (570 ms of /healthz stall at 200,000 events, 3.8 s at 2,000,000 on SQLite
 * before), and the completing events come back as rows.
 */
export const missionWindowTask = apartTask("mission-window", async (q, w: Window) => ({
  enrolled: await enrolledPerDay(q, w),
  completed: await completedPerDay(q, w),
  events: await eventsPerDay(q, w),
  completing: await completingEvents(q, w),
}));

/** Of the players who enrolled in [since, until), how many had completed before `until`. */
export const enrolledAndCompleted = (q: Queryable, key: string, since: string, until: string) =>
  countOf(q, "SELECT COUNT(*) AS n FROM messenger_mission_enrollments WHERE mission_key = ? AND enrolled_at >= ? AND enrolled_at < ? AND completed_at < ?", [
    key,
    since,
    until,
    until,
  ]);

/** The all-time funnel: enrolled, started (some progress or completed), completed, and the first enrollment. */
export async function funnelOf(q: Queryable, key: string) {
  return (await q.get<{ enrolled: number; started: number; completed: number; first: string | null }>(
    `SELECT COUNT(*) AS enrolled, count(*) FILTER (WHERE progress > 0 OR completed_at IS NOT NULL) AS started,
       count(*) FILTER (WHERE completed_at IS NOT NULL) AS completed, MIN(enrolled_at) AS first
     FROM messenger_mission_enrollments WHERE mission_key = ?`,
    [key],
  ))!;
}

export async function lastEventAt(q: Queryable, key: string): Promise<string | null> {
  return (await q.get<{ at: string | null }>("SELECT MAX(created_at) AS at FROM messenger_mission_events WHERE mission_key = ?", [key]))?.at ?? null;
}

/** The progress values at the middle of the mission's enrollments (one or two rows), read by offset. */
export async function progressAt(q: Queryable, key: string, limit: number, offset: number): Promise<number[]> {
  const rows = await q.all<{ progress: number }>(
    "SELECT progress FROM messenger_mission_enrollments WHERE mission_key = ? ORDER BY progress LIMIT ? OFFSET ?",
    [key, limit, offset],
  );
  return rows.map((r) => r.progress);
}
