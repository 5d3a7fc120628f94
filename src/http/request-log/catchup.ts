import { apartTask } from "../../db/apart";
import type { Store } from "../../db/port";
import { hourOf, hourStartIso, nextHour } from "./hours";
import { rebuildHour } from "./rollup";
import { ALL_KEYS, levelDailySummaries } from "./summary";

export interface CatchUpProgress {
  /** Hours compared with request_log so far. */
  scannedHours: number;
  /** Hours rebuilt because the rollup counted fewer requests than request_log holds. */
  rebuiltHours: number;
  /** request_log rows read by those rebuilds. */
  rebuiltRows: number;
  /** Days of the daily summaries rebuilt from the hourly ones at the end (their hourly rows counted otherwise). */
  rebuiltDays: number;
  done: boolean;
}

export interface CatchUpLimits {
  /** Hours compared per step (one indexed count per step over that range). */
  scanHours?: number;
  /** A step stops after rebuilding about this many request_log rows. */
  maxRows?: number;
}

/**
 * request_log's rows per hour over a few hours: a count over every row of them (~80,000 for six hours at 10M rows a
 * month), run apart from the event loop (src/db/apart.ts) — the start-up catch-up runs it for every hour the log holds.
 */
export const hourCountsTask = apartTask("request-log-hour-counts", (q, a: { fromIso: string; toIso: string }) =>
  q.all<{ hour: string; n: number }>("SELECT substr(at, 1, 13) AS hour, count(*) AS n FROM request_log WHERE at >= ? AND at < ? GROUP BY substr(at, 1, 13)", [
    a.fromIso,
    a.toIso,
  ]),
);

type HourCount = { hour: string; requests: number };
const byHour = (rows: HourCount[]) => new Map(rows.map((r) => [r.hour, r.requests]));
const ROLLED_HOURS = "SELECT hour, requests FROM request_log_hourly WHERE hour >= ? AND hour < ?";
/** The summaries' row for every key (key_ref 0) per route, summed per hour: down their primary key. */
const SUMMARIZED_HOURS = "SELECT hour, sum(requests) AS requests FROM request_summary_hourly WHERE key_ref = ? AND hour >= ? AND hour < ? GROUP BY hour";

const prevHour = (hour: string) => new Date(Date.parse(hourStartIso(hour)) - 3_600_000).toISOString().slice(0, 13);

/**
 * Brings the hourly rollups and the summaries per key and route (summary.ts) level with request_log, newest hour
 * first, in bounded steps: each step compares `scanHours` hours (request_log's count per hour from its `at` index
 * against request_log_hourly.requests and the summaries' count of every key) and rebuilds, one transaction per hour,
 * what counts FEWER requests for an hour — missing after an upgrade (migration 0032 added the summaries empty), or
 * partial when the hour began before the upgrade. An hour whose rollup counts more is left alone: that is
 * the prune job having deleted request_log rows the rollup keeps on purpose (baselines look back 4 weeks).
 * Through the storage port, on either engine; several instances catching up at once rebuild an hour in turn (each
 * rebuild locks its hour first: rollup.ts), each writing the same counts.
 */
export class RollupCatchUp {
  private cursor: string | null | undefined;
  private first: string | null = null;
  readonly progress: CatchUpProgress = { scannedHours: 0, rebuiltHours: 0, rebuiltRows: 0, rebuiltDays: 0, done: false };

  constructor(private readonly store: Store) {}

  private async init(): Promise<void> {
    const min = await this.store.get<{ at: string | null }>("SELECT min(at) AS at FROM request_log");
    const max = await this.store.get<{ at: string | null }>("SELECT max(at) AS at FROM request_log");
    this.first = min?.at ? hourOf(min.at) : null;
    this.cursor = max?.at ? nextHour(hourOf(max.at)) : null;
  }

  /** The hours level: the daily summaries are made level with the hourly ones (a database from before them), once. */
  private async finish(): Promise<void> {
    if (this.progress.done) return;
    this.progress.rebuiltDays = await levelDailySummaries(this.store);
    this.progress.done = true;
  }

  /** One bounded step; returns the progress so far (`done` once the oldest hour of request_log was compared). */
  async step(limits: CatchUpLimits = {}): Promise<CatchUpProgress> {
    const scanHours = limits.scanHours ?? 6;
    const maxRows = limits.maxRows ?? 20_000;
    if (this.cursor === undefined) await this.init();
    const hi = this.cursor ?? null;
    const first = this.first;
    if (hi === null || first === null || hi <= first) {
      await this.finish();
      return this.progress;
    }
    let lo: string = hi;
    for (let i = 0; i < scanHours && lo > first; i++) lo = prevHour(lo);
    const logged = new Map((await this.store.apart(hourCountsTask, { fromIso: hourStartIso(lo), toIso: hourStartIso(hi) })).map((r) => [r.hour, r.n]));
    const rolled = byHour(await this.store.all<HourCount>(ROLLED_HOURS, [lo, hi]));
    const summarized = byHour(await this.store.all<HourCount>(SUMMARIZED_HOURS, [ALL_KEYS, lo, hi]));
    let rows = 0;
    let cursor = hi;
    for (let h = prevHour(hi); h >= lo; h = prevHour(h)) {
      this.progress.scannedHours++;
      cursor = h;
      const n = logged.get(h) ?? 0;
      const parts = { rollups: n > (rolled.get(h) ?? 0), summaries: n > (summarized.get(h) ?? 0) };
      if (parts.rollups || parts.summaries) {
        rows += await rebuildHour(this.store, h, parts);
        this.progress.rebuiltHours++;
        if (rows >= maxRows) break;
      }
    }
    this.cursor = cursor;
    this.progress.rebuiltRows += rows;
    if (cursor <= first) await this.finish();
    return this.progress;
  }
}

/** Runs the catch-up to the end in one go (tests, the benchmark, an operator's maintenance script). */
export async function catchUpRollups(store: Store, limits: CatchUpLimits = {}): Promise<CatchUpProgress> {
  const c = new RollupCatchUp(store);
  let p = await c.step(limits);
  while (!p.done) p = await c.step(limits);
  return p;
}
