// What operators read about missions: a side-by-side comparison of every mission in a window, one mission's
// per-day series, and its all-time stats. Every query is bounded by one mission's key (and a time range where
// there is one): src/messenger/store/mission-stats.ts says which index serves each.
// Rewards paid are read from the completing event's recorded answer (reward_paid, salutes), not from the
// mission's current reward: an edited reward does not rewrite what was paid before the edit.
import type { AppContext } from "../../context";
import type { Queryable, Store } from "../../db/port";
import { adminListAnswer } from "../config/inputs";
import { adminMissionView, missionKeyPage } from "../games/missions";
import { enrolledAndCompleted, funnelOf, lastEventAt, missionWindowTask, progressAt } from "../store/mission-stats";
import { missionOrThrow } from "./missions-admin";
import { AMOUNT_KINDS } from "../catalog";
import { MISSION_WINDOW_DEFAULT_DAYS } from "./missions-model";
import { REFUSAL_REASONS } from "../games/promos-model";
import { daysOf, resolveWindow, type ReportWindow, type WindowQuery } from "./window";

type Reason = (typeof REFUSAL_REASONS)[number];

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

/** A mission's figures, and the salutes paid as micro-units while they are summed. */
const emptyFigures = () => ({
  enrollments: 0,
  completions: 0,
  events: { accepted: 0, accepted_units: 0, refused: 0, refused_by_reason: Object.fromEntries(REFUSAL_REASONS.map((r) => [r, 0])) as Record<Reason, number> },
  rewards_paid: { completions_paid: 0, free_spins: 0, missiles: 0, points: 0, salutes: "0" },
  salutesMicro: 0n,
});
type Figures = Omit<ReturnType<typeof emptyFigures>, "salutesMicro">;

const noFigures = (): Figures => {
  const { salutesMicro: _, ...f } = emptyFigures();
  return f;
};

/** Whole-range bounds for all-time figures: every ISO timestamp sorts between them. */
const ALL_TIME = { since: "0", until: "9" };

interface PaidAnswer {
  reward_paid?: { free_spins?: number; missiles?: number; points?: number } | null;
  salutes?: { amount?: string; paid?: boolean } | null;
}

/**
 * One mission's figures in [since, until), grouped by UTC day (`byDay`) or as one total (key ""). Three index
 * range reads grouped in SQL, in the read worker (missionWindowTask); only the completing events (one row per paid
 * completion) come back as rows, their recorded answers summed here.
 */
async function missionFigures(store: Store, key: string, since: string, until: string, byDay: boolean): Promise<Map<string, Figures>> {
  const out = new Map<string, ReturnType<typeof emptyFigures>>();
  const at = (d: string) => {
    let f = out.get(d);
    if (!f) out.set(d, (f = emptyFigures()));
    return f;
  };
  const read = await store.apart(missionWindowTask, { key, since, until, byDay });
  for (const r of read.enrolled) if (r.n > 0) at(r.d).enrollments = r.n;
  for (const r of read.completed) if (r.n > 0) at(r.d).completions = r.n;
  for (const r of read.events) {
    const e = at(r.d).events;
    if (r.accepted === 1) {
      e.accepted += r.n;
      e.accepted_units += r.units;
    } else {
      e.refused += r.n;
      if (r.reason !== null && r.reason in e.refused_by_reason) e.refused_by_reason[r.reason as Reason] += r.n;
    }
  }
  for (const r of read.completing) {
    const answer = JSON.parse(r.result) as PaidAnswer;
    const reward = answer.reward_paid;
    if (!reward || typeof reward !== "object") continue;
    const f = at(byDay ? r.created_at.slice(0, 10) : "");
    f.rewards_paid.completions_paid += 1;
    for (const k of AMOUNT_KINDS) f.rewards_paid[k] += reward[k] ?? 0;
    if (answer.salutes?.paid === true && typeof answer.salutes.amount === "string") f.salutesMicro += toMicro(answer.salutes.amount);
  }
  const done = new Map<string, Figures>();
  for (const [d, { salutesMicro, ...f }] of out) done.set(d, { ...f, rewards_paid: { ...f.rewards_paid, salutes: fromMicro(salutesMicro) } });
  return done;
}

const windowView = (w: ReportWindow) => ({ from: w.from, to: w.to, days: w.days, label: w.label });
const ratio = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

/**
 * Every mission (oldest first, a page of `limit`, 200 by default) side by side in the window. Paged like the
 * mission list: a cursor holds the last row's [created_at, mission_key].
 */
export async function compareMissions(ctx: AppContext, query: WindowQuery & { limit?: number; offset?: number; cursor?: string }) {
  const q = ctx.store;
  const w = resolveWindow(query, ctx.clock.now(), MISSION_WINDOW_DEFAULT_DAYS);
  const p = await missionKeyPage(q, { ...query, limit: query.limit ?? 200 });
  const missions = [];
  for (const m of p.items) {
    const f = (await missionFigures(q, m.mission_key, w.since, w.until, false)).get("") ?? noFigures();
    // Of the players who enrolled in the window, how many had completed by its end (the completion rate's base).
    const done = await enrolledAndCompleted(q, m.mission_key, w.since, w.until);
    missions.push({
      mission_key: m.mission_key,
      title: m.title,
      active: m.active === 1,
      progress_source: m.progress_source,
      revision: m.revision,
      target: m.target,
      ...f,
      enrolled_and_completed: done,
      completion_rate: ratio(done, f.enrollments),
    });
  }
  return {
    window: windowView(w),
    ...adminListAnswer("missions", { ...p, items: missions }, { days: w.days, preset: query.preset ?? null }, { has_more: p.pagination.has_more }),
  };
}

/** One mission per UTC day of the window (every day listed, zeros included), and the window's totals. */
export async function missionAnalytics(ctx: AppContext, key: string, query: WindowQuery) {
  // The query's own rules (days with preset) before the lookup: a bad request is 400 whatever the mission.
  const w = resolveWindow(query, ctx.clock.now(), MISSION_WINDOW_DEFAULT_DAYS);
  await missionOrThrow(ctx.store, key);
  const byDay = await missionFigures(ctx.store, key, w.since, w.until, true);
  const totals = (await missionFigures(ctx.store, key, w.since, w.until, false)).get("") ?? noFigures();
  const series = daysOf(w).map((day) => ({ day, ...(byDay.get(day) ?? noFigures()) }));
  return { mission_key: key, window: windowView(w), totals, series };
}

export async function missionStats(ctx: AppContext, key: string) {
  const q = ctx.store;
  const m = await missionOrThrow(q, key);
  const funnel = await funnelOf(q, key);
  const started = funnel.started;
  const completed = funnel.completed;
  const f = (await missionFigures(q, key, ALL_TIME.since, ALL_TIME.until, false)).get("") ?? noFigures();
  const last = await lastEventAt(q, key);
  return {
    mission: adminMissionView(m),
    funnel: { enrolled: funnel.enrolled, started, in_progress: started - completed, completed },
    completion_rate: ratio(completed, funnel.enrolled),
    median_progress: await medianProgress(q, key, funnel.enrolled),
    events: f.events,
    rewards_paid: f.rewards_paid,
    first_enrolled_at: funnel.first,
    last_event_at: last,
  };
}

async function medianProgress(q: Queryable, key: string, n: number): Promise<number | null> {
  if (n === 0) return null;
  const middle = await progressAt(q, key, n % 2 === 1 ? 1 : 2, n % 2 === 1 ? (n - 1) / 2 : n / 2 - 1);
  return middle.reduce((a, b) => a + b, 0) / middle.length;
}
