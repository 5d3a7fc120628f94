// GET /api/messenger/admin/games/spin-wheel and /games/recon-grid: the overview's figures for one game, plus what
// only that game has — the wheel's segment counts against each campaign's weights (from messenger_spins), the
// grids started and finished (from messenger_grids). Neither table has a time index (and the schema is not ours
// to change here), but both are append-only with ids in created_at order, so the window is found by a binary
// search over ids (≈20 primary-key probes) and only the window's rows are read — at most SCAN_LIMIT of them, the
// newest; the answer says when the bound cut the window (`scan.bounded`).
import type { Database } from "bun:sqlite";
import type { AppContext } from "../../context";
import { WHEEL_CAMPAIGN } from "../catalog";
import { gameFigures, valueOf } from "./overview";
import { resolveWindow, type ReportWindow, type WindowPreset } from "./window";

export const GAME_STATS_DEFAULT_DAYS = 7;
export const SCAN_LIMIT = 200_000;

type WindowQuery = { days?: number; preset?: WindowPreset };

/** The smallest id whose row (and every later one) has created_at >= iso; max id + 1 when none. */
function firstIdFrom(db: Database, table: "messenger_spins" | "messenger_grids", iso: string): number {
  const bounds = db.query<{ lo: number | null; hi: number | null }, []>(`SELECT MIN(id) AS lo, MAX(id) AS hi FROM ${table}`).get()!;
  if (bounds.lo === null || bounds.hi === null) return 1;
  const probe = db.query<{ created_at: string }, [number]>(`SELECT created_at FROM ${table} WHERE id >= ? ORDER BY id LIMIT 1`);
  let lo = bounds.lo;
  let hi = bounds.hi + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const row = probe.get(mid);
    if (!row || row.created_at >= iso) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The id range [from, to) of the window's rows, cut to the newest SCAN_LIMIT. */
function windowIds(db: Database, table: "messenger_spins" | "messenger_grids", w: ReportWindow) {
  const from = firstIdFrom(db, table, w.since);
  const to = firstIdFrom(db, table, w.until);
  const bounded = to - from > SCAN_LIMIT;
  return { from: bounded ? to - SCAN_LIMIT : from, to, bounded };
}

interface SegmentDef {
  label: string;
  weight: number;
  reward?: { free_spins?: number; missiles?: number; points?: number };
}

/** A campaign's segments: the built-in wheel, or an operator campaign's stored JSON (read defensively). */
function campaignSegments(db: Database, key: string): SegmentDef[] | null {
  if (key === WHEEL_CAMPAIGN.campaign_key) return WHEEL_CAMPAIGN.segments.map((s) => ({ label: s.label, weight: s.weight, reward: s.reward }));
  const row = db.query<{ segments: string }, [string]>("SELECT segments FROM messenger_wheel_campaigns WHERE campaign_key = ?").get(key);
  if (!row) return null;
  try {
    const parsed = JSON.parse(row.segments) as unknown;
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
export function wheelSegments(ctx: AppContext, w: ReportWindow) {
  const db = ctx.db.sqlite;
  const ids = windowIds(db, "messenger_spins", w);
  const rows = db
    .query<{ campaign_key: string; segment_index: number; paid_with: string; n: number }, [number, number]>(
      "SELECT campaign_key, segment_index, paid_with, COUNT(*) AS n FROM messenger_spins WHERE id >= ? AND id < ? GROUP BY 1, 2, 3",
    )
    .all(ids.from, ids.to);
  const byCampaign = new Map<string, typeof rows>();
  for (const r of rows) (byCampaign.get(r.campaign_key) ?? byCampaign.set(r.campaign_key, []).get(r.campaign_key)!).push(r);
  const campaigns = [...byCampaign].map(([key, list]) => {
    const defs = campaignSegments(db, key);
    const spins = list.reduce((n, r) => n + r.n, 0);
    const paidWith: Record<string, number> = {};
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
    const payout = { free_spins: 0, missiles: 0, points: 0 };
    if (known)
      for (const s of segments) {
        const r = defs![s.segment_index]?.reward ?? {};
        payout.free_spins += (r.free_spins ?? 0) * s.count;
        payout.missiles += (r.missiles ?? 0) * s.count;
        payout.points += (r.points ?? 0) * s.count;
      }
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

export function spinWheelStats(ctx: AppContext, query: WindowQuery) {
  const w = resolveWindow(query, ctx.clock.now(), GAME_STATS_DEFAULT_DAYS);
  const { games } = gameFigures(ctx, w, ["spin_wheel"]);
  return { window: w, game: games[0]!, wheel: wheelSegments(ctx, w) };
}

export function reconGridStats(ctx: AppContext, query: WindowQuery) {
  const w = resolveWindow(query, ctx.clock.now(), GAME_STATS_DEFAULT_DAYS);
  const { games } = gameFigures(ctx, w, ["recon_grid"]);
  const db = ctx.db.sqlite;
  const ids = windowIds(db, "messenger_grids", w);
  const rows = db
    .query<{ status: string; n: number; reveals: number }, [number, number]>(
      "SELECT status, COUNT(*) AS n, COALESCE(SUM(json_array_length(revealed)), 0) AS reveals FROM messenger_grids WHERE id >= ? AND id < ? GROUP BY status",
    )
    .all(ids.from, ids.to);
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
