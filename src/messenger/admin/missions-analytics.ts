// What operators read about missions: a side-by-side comparison of every mission in a window, one mission's
// per-day series, and its all-time stats. Every query is bounded by one mission's key (and a time range where
// there is one), so it walks that mission's slice of an index, never a whole table:
// - messenger_mission_events_mission_idx (mission_key, created_at): events, refusals and rewards in a window;
// - messenger_mission_enrollments_mission_idx (mission_key, completed_at): completions in a window, and the
//   mission's enrollments (their enrolled_at is filtered within that mission's slice).
// Rewards paid are read from the completing event's recorded answer (reward_paid, salutes), not from the
// mission's current reward: an edited reward does not rewrite what was paid before the edit.
import type { Database } from "bun:sqlite";
import type { AppContext } from "../../context";
import { keyPageOf, parseKeyPage } from "../../http/pagination";
import { adminMissionView, type MissionRow } from "../games/missions";
import { missionOrThrow } from "./missions-admin";
import { MISSION_WINDOW_DEFAULT_DAYS, REFUSAL_REASONS } from "./missions-model";
import { resolveWindow, type ReportWindow, type WindowPreset } from "./window";

type Reason = (typeof REFUSAL_REASONS)[number];

interface EventCounts {
  accepted: number;
  accepted_units: number;
  refused: number;
  refused_by_reason: Record<Reason, number>;
}

interface RewardsPaid {
  completions_paid: number;
  free_spins: number;
  missiles: number;
  points: number;
  salutes: string;
}

interface Figures {
  enrollments: number;
  completions: number;
  events: EventCounts;
  rewards_paid: RewardsPaid;
}

/** Salutes amounts have at most 6 decimals: summed as integer micro-units, so the total is exact. */
const MICRO = 1_000_000n;
const toMicro = (amount: string) => {
  const [whole, frac = ""] = amount.split(".");
  return BigInt(whole!) * MICRO + BigInt(frac.padEnd(6, "0"));
};
const fromMicro = (micro: bigint) => {
  const frac = (micro % MICRO).toString().padStart(6, "0").replace(/0+$/, "");
  return frac ? `${micro / MICRO}.${frac}` : `${micro / MICRO}`;
};

const emptyFigures = (): Figures & { salutesMicro: bigint } => ({
  enrollments: 0,
  completions: 0,
  events: { accepted: 0, accepted_units: 0, refused: 0, refused_by_reason: Object.fromEntries(REFUSAL_REASONS.map((r) => [r, 0])) as Record<Reason, number> },
  rewards_paid: { completions_paid: 0, free_spins: 0, missiles: 0, points: 0, salutes: "0" },
  salutesMicro: 0n,
});

const noFigures = (): Figures => {
  const { salutesMicro: _, ...f } = emptyFigures();
  return f;
};

/** Whole-range bounds for all-time figures: every ISO timestamp sorts between them. */
const ALL_TIME = { since: "0", until: "9" };

/**
 * One mission's figures in [since, until), grouped by UTC day (`byDay`) or as one total (key ""). Four index
 * range reads, each grouped in SQL; only the salutes amounts (one row per paid completion) come back as rows.
 */
function missionFigures(db: Database, key: string, since: string, until: string, byDay: boolean): Map<string, Figures> {
  const day = (col: string) => (byDay ? `substr(${col}, 1, 10)` : "''");
  const out = new Map<string, ReturnType<typeof emptyFigures>>();
  const at = (d: string) => {
    let f = out.get(d);
    if (!f) out.set(d, (f = emptyFigures()));
    return f;
  };
  const args = [key, since, until] as const;
  for (const r of db
    .query<{ d: string; n: number }, [string, string, string]>(
      `SELECT ${day("enrolled_at")} AS d, COUNT(*) AS n FROM messenger_mission_enrollments WHERE mission_key = ?1 AND enrolled_at >= ?2 AND enrolled_at < ?3 GROUP BY 1`,
    )
    .all(...args))
    at(r.d).enrollments = r.n;
  for (const r of db
    .query<{ d: string; n: number }, [string, string, string]>(
      `SELECT ${day("completed_at")} AS d, COUNT(*) AS n FROM messenger_mission_enrollments WHERE mission_key = ?1 AND completed_at >= ?2 AND completed_at < ?3 GROUP BY 1`,
    )
    .all(...args))
    at(r.d).completions = r.n;
  for (const r of db
    .query<{ d: string; accepted: number; reason: string | null; n: number; units: number }, [string, string, string]>(
      `SELECT ${day("created_at")} AS d, accepted, reason, COUNT(*) AS n, SUM(value) AS units FROM messenger_mission_events
       WHERE mission_key = ?1 AND created_at >= ?2 AND created_at < ?3 GROUP BY 1, 2, 3`,
    )
    .all(...args)) {
    const e = at(r.d).events;
    if (r.accepted === 1) {
      e.accepted += r.n;
      e.accepted_units += r.units;
    } else {
      e.refused += r.n;
      if (r.reason !== null && r.reason in e.refused_by_reason) e.refused_by_reason[r.reason as Reason] += r.n;
    }
  }
  for (const r of db
    .query<{ d: string; n: number; fs: number; mi: number; pt: number }, [string, string, string]>(
      `SELECT ${day("created_at")} AS d, COUNT(*) AS n, SUM(json_extract(result, '$.reward_paid.free_spins')) AS fs,
         SUM(json_extract(result, '$.reward_paid.missiles')) AS mi, SUM(json_extract(result, '$.reward_paid.points')) AS pt
       FROM messenger_mission_events WHERE mission_key = ?1 AND created_at >= ?2 AND created_at < ?3 AND accepted = 1
         AND json_type(result, '$.reward_paid') = 'object' GROUP BY 1`,
    )
    .all(...args)) {
    const p = at(r.d).rewards_paid;
    Object.assign(p, { completions_paid: r.n, free_spins: r.fs, missiles: r.mi, points: r.pt });
  }
  for (const r of db
    .query<{ d: string; amount: string }, [string, string, string]>(
      `SELECT ${day("created_at")} AS d, json_extract(result, '$.salutes.amount') AS amount FROM messenger_mission_events
       WHERE mission_key = ?1 AND created_at >= ?2 AND created_at < ?3 AND accepted = 1 AND json_extract(result, '$.salutes.paid') = 1`,
    )
    .all(...args))
    at(r.d).salutesMicro += toMicro(r.amount);
  const done = new Map<string, Figures>();
  for (const [d, { salutesMicro, ...f }] of out) done.set(d, { ...f, rewards_paid: { ...f.rewards_paid, salutes: fromMicro(salutesMicro) } });
  return done;
}

const windowView = (w: ReportWindow) => ({ from: w.from, to: w.to, days: w.days, label: w.label });
const ratio = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

export interface WindowQuery {
  days?: number;
  preset?: WindowPreset;
}

/**
 * Every mission (oldest first, a page of `limit`, 200 by default) side by side in the window. Paged like the
 * mission list: a cursor holds the last row's [created_at, mission_key].
 */
export function compareMissions(ctx: AppContext, query: WindowQuery & { limit?: number; offset?: number; cursor?: string }) {
  const db = ctx.db.sqlite;
  const w = resolveWindow(query, ctx.clock.now(), MISSION_WINDOW_DEFAULT_DAYS);
  const page = parseKeyPage({ ...query, limit: query.limit ?? 200 }, ["text", "text"]);
  const [afterCreated, afterKey] = (page.after ?? [null, null]) as [string | null, string | null];
  const rows = db
    .query<MissionRow, [string | null, string | null, number, number]>(
      `SELECT * FROM messenger_missions WHERE ?1 IS NULL OR created_at > ?1 OR (created_at = ?1 AND mission_key > ?2)
       ORDER BY created_at, mission_key LIMIT ?3 OFFSET ?4`,
    )
    .all(afterCreated, afterKey, page.limit + 1, page.offset);
  const p = keyPageOf(rows, page, (m) => [m.created_at, m.mission_key]);
  const missions = p.items.map((m) => {
    const f = missionFigures(db, m.mission_key, w.since, w.until, false).get("") ?? noFigures();
    // Of the players who enrolled in the window, how many had completed by its end (the completion rate's base).
    const done = db
      .query<{ n: number }, [string, string, string]>(
        "SELECT COUNT(*) AS n FROM messenger_mission_enrollments WHERE mission_key = ?1 AND enrolled_at >= ?2 AND enrolled_at < ?3 AND completed_at < ?3",
      )
      .get(m.mission_key, w.since, w.until)!.n;
    return {
      mission_key: m.mission_key,
      title: m.title,
      active: m.active === 1,
      progress_source: m.progress_source,
      revision: m.revision,
      target: m.target,
      ...f,
      enrolled_and_completed: done,
      completion_rate: ratio(done, f.enrollments),
    };
  });
  return {
    window: windowView(w),
    missions,
    count: p.count,
    has_more: p.pagination.has_more,
    pagination: p.pagination,
    query: { ...p.query, days: w.days, preset: query.preset ?? null },
  };
}

/** One mission per UTC day of the window (every day listed, zeros included), and the window's totals. */
export function missionAnalytics(ctx: AppContext, key: string, query: WindowQuery) {
  const db = ctx.db.sqlite;
  missionOrThrow(ctx, key);
  const w = resolveWindow(query, ctx.clock.now(), MISSION_WINDOW_DEFAULT_DAYS);
  const byDay = missionFigures(db, key, w.since, w.until, true);
  const totals = missionFigures(db, key, w.since, w.until, false).get("") ?? noFigures();
  const series: Array<Figures & { day: string }> = [];
  for (let ms = Date.parse(w.since); ms < Date.parse(w.until); ms += 86_400_000) {
    const day = new Date(ms).toISOString().slice(0, 10);
    series.push({ day, ...(byDay.get(day) ?? noFigures()) });
  }
  return { mission_key: key, window: windowView(w), totals, series };
}

/** All-time: the funnel, the median progress, every event and reward, with the mission's revision and state. */
export function missionStats(ctx: AppContext, key: string) {
  const db = ctx.db.sqlite;
  const m = missionOrThrow(ctx, key);
  const funnel = db
    .query<{ enrolled: number; started: number | null; completed: number | null; first: string | null }, [string]>(
      `SELECT COUNT(*) AS enrolled, SUM(progress > 0 OR completed_at IS NOT NULL) AS started, SUM(completed_at IS NOT NULL) AS completed,
         MIN(enrolled_at) AS first FROM messenger_mission_enrollments WHERE mission_key = ?`,
    )
    .get(key)!;
  const started = funnel.started ?? 0;
  const completed = funnel.completed ?? 0;
  const f = missionFigures(db, key, ALL_TIME.since, ALL_TIME.until, false).get("") ?? noFigures();
  const last = db.query<{ at: string | null }, [string]>("SELECT MAX(created_at) AS at FROM messenger_mission_events WHERE mission_key = ?").get(key)!.at;
  return {
    mission: adminMissionView(m),
    funnel: { enrolled: funnel.enrolled, started, in_progress: started - completed, completed },
    completion_rate: ratio(completed, funnel.enrolled),
    median_progress: medianProgress(db, key, funnel.enrolled),
    events: f.events,
    rewards_paid: f.rewards_paid,
    first_enrolled_at: funnel.first,
    last_event_at: last,
  };
}

/** The middle one or two progress values, read by offset: at most two rows come back. */
function medianProgress(db: Database, key: string, n: number): number | null {
  if (n === 0) return null;
  const middle = db
    .query<{ progress: number }, [string, number, number]>(
      "SELECT progress FROM messenger_mission_enrollments WHERE mission_key = ? ORDER BY progress LIMIT ? OFFSET ?",
    )
    .all(key, n % 2 === 1 ? 1 : 2, n % 2 === 1 ? (n - 1) / 2 : n / 2 - 1)
    .map((r) => r.progress);
  return middle.reduce((a, b) => a + b, 0) / middle.length;
}
