// GET /api/messenger/admin/games/spin-wheel and /games/recon-grid: the overview's figures for one game, plus what
// only that game has — the wheel's segment counts against each campaign's weights (from messenger_spins), the
// grids started and finished (from messenger_grids). Neither table has a time index (one more index write on every
// spin, the benchmarked hot path), but both are append-only with ids in created_at order, so the window is found by
// a binary search over ids (≈20 primary-key probes) and only the window's rows are read — at most SCAN_LIMIT of
// them, the newest; the answer says when the bound cut the window (`scan.bounded`). On PostgreSQL with several
// instances, ids and created_at can disagree for the few rows written at the same moment (the time is taken before
// the insert draws its id): a window's edge may then move by those rows — a report's rounding, not a count lost.
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import type { StoredSegment } from "../config/cache";
import { wheelSegmentsText } from "../store/config";
import { spinCounts } from "../store/fair";
import { gridCounts } from "../store/grids";
import { createdAtFrom, type IdTable, idBounds } from "../store/id-search";
import { AMOUNT_KINDS, WHEEL_CAMPAIGN } from "../catalog";
import { gameFigures, valueOf, zero } from "./overview";
import { resolveWindow, type ReportWindow, type WindowQuery } from "./window";

export const GAME_STATS_DEFAULT_DAYS = 7;
export const SCAN_LIMIT = 200_000;

/** The smallest id whose row (and every later one) has created_at >= iso; max id + 1 when none. */
async function firstIdFrom(q: Queryable, table: IdTable, iso: string): Promise<number> {
  const bounds = await idBounds(q, table);
  if (!bounds || bounds.lo === null || bounds.hi === null) return 1;
  let lo = bounds.lo;
  let hi = bounds.hi + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const row = await createdAtFrom(q, table, mid);
    if (!row || row.created_at >= iso) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The id range [from, to) of the window's rows, cut to the newest SCAN_LIMIT. */
async function windowIds(q: Queryable, table: IdTable, w: ReportWindow) {
  const from = await firstIdFrom(q, table, w.since);
  const to = await firstIdFrom(q, table, w.until);
  const bounded = to - from > SCAN_LIMIT;
  return { from: bounded ? to - SCAN_LIMIT : from, to, bounded };
}

/** A segment as read back from a campaign's stored JSON: its reward may be partial or absent. */
type SegmentDef = Omit<StoredSegment, "reward"> & { reward?: Partial<StoredSegment["reward"]> };

/** A campaign's segments: the built-in wheel, or an operator campaign's stored JSON (read defensively). */
async function campaignSegments(q: Queryable, key: string): Promise<SegmentDef[] | null> {
  if (key === WHEEL_CAMPAIGN.campaign_key) return WHEEL_CAMPAIGN.segments;
  const text = await wheelSegmentsText(q, key);
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) return null;
    return (parsed as Array<Partial<SegmentDef> | null>).map((s, i) => ({
      label: typeof s?.label === "string" ? s.label : `segment ${i}`,
      weight: Number(s?.weight) || 0,
      reward: s?.reward,
    }));
  } catch {
    return null;
  }
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Per campaign: spins, how they were paid, and each segment's observed count and share against its weight. */
export async function wheelSegments(ctx: AppContext, w: ReportWindow) {
  const ids = await windowIds(ctx.store, "messenger_spins", w);
  const rows = await spinCounts(ctx.store, ids.from, ids.to);
  const byCampaign = new Map<string, typeof rows>();
  for (const r of rows) (byCampaign.get(r.campaign_key) ?? byCampaign.set(r.campaign_key, []).get(r.campaign_key)!).push(r);
  const defsOf = new Map<string, SegmentDef[] | null>();
  for (const key of byCampaign.keys()) defsOf.set(key, await campaignSegments(ctx.store, key));
  const campaigns = [...byCampaign].map(([key, list]) => {
    const defs = defsOf.get(key) ?? null;
    const spins = list.reduce((n, r) => n + r.n, 0);
    // Both kinds always, 0 when none (docs/messenger-admin-analytics.md); a kind a later release adds shows as it comes.
    const paidWith: Record<string, number> = { daily_free_spin: 0, free_spin_balance: 0 };
    const counts = new Map<number, number>();
    for (const r of list) {
      paidWith[r.paid_with] = (paidWith[r.paid_with] ?? 0) + r.n;
      counts.set(r.segment_index, (counts.get(r.segment_index) ?? 0) + r.n);
    }
    const weightSum = defs?.reduce((s, d) => s + d.weight, 0) ?? 0;
    const indexes = [...new Set([...(defs ?? []).map((_, i) => i), ...counts.keys()])].sort((a, b) => a - b);
    const segments = indexes.map((i) => {
      const def = defs?.[i];
      const count = counts.get(i) ?? 0;
      const expected = def && weightSum > 0 ? def.weight / weightSum : null;
      const observed = spins > 0 ? count / spins : 0;
      // z: how many standard errors the observed share is from the expected one (binomial); null without a weight.
      const z = expected !== null && expected > 0 && expected < 1 && spins > 0 ? (observed - expected) / Math.sqrt((expected * (1 - expected)) / spins) : null;
      return {
        segment_index: i,
        label: def?.label ?? null,
        weight: def?.weight ?? null,
        expected_share: expected === null ? null : round(expected, 6),
        count,
        observed_share: round(observed, 6),
        drift_points: expected === null ? null : round((observed - expected) * 100, 3),
        z_score: z === null ? null : round(z, 3),
      };
    });
    // The gross payout of the spins, from the segments' rewards (exact where every segment's reward is known).
    const known = defs !== null && segments.every((s) => s.count === 0 || defs[s.segment_index]?.reward !== undefined);
    const payout = zero();
    if (known) for (const s of segments) for (const k of AMOUNT_KINDS) payout[k] += (defs![s.segment_index]?.reward?.[k] ?? 0) * s.count;
    return {
      campaign_key: key,
      known_campaign: defs !== null,
      spins,
      paid_with: paidWith,
      gross_payout: known ? { ...payout, points_value: valueOf(payout) } : null,
      max_abs_z_score: segments.reduce<number | null>((m, s) => (s.z_score === null ? m : Math.max(m ?? 0, Math.abs(s.z_score))), null),
      segments,
    };
  });
  const examined = rows.reduce((n, r) => n + r.n, 0);
  return { campaigns, scan: { table: "messenger_spins", rows_examined: examined, limit: SCAN_LIMIT, bounded: ids.bounded } };
}

export async function spinWheelStats(ctx: AppContext, query: WindowQuery) {
  const w = resolveWindow(query, ctx.clock.now(), GAME_STATS_DEFAULT_DAYS);
  const { games } = await gameFigures(ctx, w, ["spin_wheel"]);
  return { window: w, game: games[0]!, wheel: await wheelSegments(ctx, w) };
}

export async function reconGridStats(ctx: AppContext, query: WindowQuery) {
  const w = resolveWindow(query, ctx.clock.now(), GAME_STATS_DEFAULT_DAYS);
  const { games } = await gameFigures(ctx, w, ["recon_grid"]);
  const ids = await windowIds(ctx.store, "messenger_grids", w);
  const rows = await gridCounts(ctx.store, ids.from, ids.to);
  const by = (s: string) => rows.find((r) => r.status === s) ?? { n: 0, reveals: 0 };
  const started = rows.reduce((n, r) => n + r.n, 0);
  const revealsInGrids = rows.reduce((n, r) => n + r.reveals, 0);
  const finished = by("completed").n + by("abandoned").n;
  return {
    window: w,
    game: games[0]!,
    grids: {
      started,
      completed: by("completed").n,
      abandoned: by("abandoned").n,
      active: by("active").n,
      finished,
      reveals_in_these_grids: revealsInGrids,
      average_reveals_per_grid: started > 0 ? round(revealsInGrids / started, 2) : null,
      average_reveals_per_finished_grid: finished > 0 ? round((by("completed").reveals + by("abandoned").reveals) / finished, 2) : null,
    },
    scan: { table: "messenger_grids", rows_examined: started, limit: SCAN_LIMIT, bounded: ids.bounded },
  };
}
