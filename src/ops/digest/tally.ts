import { compareFindings, type DetectionParams, type Dimension, type Finding, novelty, type Series, spikesOf, type Window, type WindowStats } from "./findings";

// The digest's counts, kept compact: over 14 days a busy deployment has ~100,000 403 rollup rows, most of them a
// client network seen once. Values are interned to small integers per dimension and rows kept as typed-array
// columns — no object or Map per client — so a digest over 5,000,000 request_log rows stays inside its 500 ms
// (bench/README.md, "ops-digest").

export const GROUP_DIMENSIONS = ["route", "partner_key", "client_prefix"] as const satisfies readonly Dimension[];

/** Names ↔ small integers, per dimension (route, partner_key, client_prefix). */
export class Interner {
  private readonly ids = GROUP_DIMENSIONS.map(() => new Map<string, number>());
  readonly names: string[][] = GROUP_DIMENSIONS.map(() => []);

  id(d: number, name: string): number {
    const ids = this.ids[d]!;
    let id = ids.get(name);
    if (id === undefined) {
      id = this.names[d]!.length;
      ids.set(name, id);
      this.names[d]!.push(name);
    }
    return id;
  }
}

/**
 * The rows of one variant (every 403, or those no rule matches) as columns, in hour order (the rollup is read
 * ORDER BY hour), plus the all-routes total per hour. Per-value figures are then computed in one streaming pass
 * per dimension: a value's cell for an hour is complete when the value's next row is in a later hour.
 */
export class Tally {
  /** All routes, per loaded hour. */
  readonly total: Float64Array;
  private hour = new Int32Array(1024);
  private count = new Float64Array(1024);
  private ids = GROUP_DIMENSIONS.map(() => new Int32Array(1024));
  private n = 0;

  constructor(readonly hours: number) {
    this.total = new Float64Array(hours);
  }

  add(ids: readonly number[], i: number, n: number): void {
    this.total[i]! += n;
    if (this.n === this.hour.length) this.grow();
    this.hour[this.n] = i;
    this.count[this.n] = n;
    for (let d = 0; d < ids.length; d++) this.ids[d]![this.n] = ids[d]!;
    this.n++;
  }

  private grow(): void {
    const size = this.hour.length * 2;
    const grown = <A extends Int32Array | Float64Array>(old: A, next: A) => {
      next.set(old);
      return next;
    };
    this.hour = grown(this.hour, new Int32Array(size));
    this.count = grown(this.count, new Float64Array(size));
    this.ids = this.ids.map((old) => grown(old, new Int32Array(size)));
  }

  totalSeries(): Series {
    const s: Series = new Map();
    this.total.forEach((n, i) => {
      if (n > 0) s.set(i, n);
    });
    return s;
  }

  /** Calls back once per (value, hour) cell of dimension d with its summed count, hours ascending per value. */
  cells(d: number, values: number, visit: (value: number, hour: number, count: number) => void): void {
    const curHour = new Int32Array(values).fill(-1);
    const curCount = new Float64Array(values);
    const ids = this.ids[d]!;
    for (let r = 0; r < this.n; r++) {
      const v = ids[r]!;
      const i = this.hour[r]!;
      if (curHour[v] === i) curCount[v]! += this.count[r]!;
      else {
        if (curHour[v] !== -1) visit(v, curHour[v]!, curCount[v]!);
        curHour[v] = i;
        curCount[v] = this.count[r]!;
      }
    }
    for (let v = 0; v < values; v++) if (curHour[v] !== -1) visit(v, curHour[v]!, curCount[v]!);
  }
}

/** Per value of a dimension, as columns: window figures, peak window hour, whether the lookback saw it. */
export interface DimensionStats {
  observed: Float64Array;
  hours: Int32Array;
  from: Int32Array;
  to: Int32Array;
  peak: Float64Array;
  seen: Uint8Array;
}

export function statsOf(t: Tally, d: number, values: number, w: Window, lookbackFirst: number): DimensionStats {
  const s: DimensionStats = {
    observed: new Float64Array(values),
    hours: new Int32Array(values),
    from: new Int32Array(values).fill(-1),
    to: new Int32Array(values).fill(-1),
    peak: new Float64Array(values),
    seen: new Uint8Array(values),
  };
  t.cells(d, values, (v, i, n) => {
    if (n === 0) return;
    if (i >= w.first) {
      s.observed[v]! += n;
      s.hours[v]!++;
      if (s.from[v] === -1) s.from[v] = i;
      s.to[v] = i;
      if (n > s.peak[v]!) s.peak[v] = n;
    } else if (i >= lookbackFirst) s.seen[v] = 1;
  });
  return s;
}

const windowStats = (s: DimensionStats, v: number): WindowStats => ({
  observed: s.observed[v]!,
  hours: s.hours[v]!,
  from: s.from[v]!,
  to: s.to[v]!,
  seenInLookback: s.seen[v] === 1,
});

/** Every finding of a tally (spikes of all routes and of each value, new routes and clients) and the stats per dimension. */
export function findingsOf(p: DetectionParams, w: Window, t: Tally, names: string[][]): { findings: Finding[]; stats: DimensionStats[] } {
  const out = spikesOf(p, w, "all", "*", t.totalSeries());
  const lookbackFirst = w.first - p.new_path_lookback_days * 24;
  const stats = GROUP_DIMENSIONS.map((dimension, d) => {
    const values = names[d]!.length;
    const s = statsOf(t, d, values, w, lookbackFirst);
    // A spike needs one window hour at ≥ spike_min_count: only those values get a full series.
    const candidates = new Map<number, Series>();
    for (let v = 0; v < values; v++) {
      if (s.peak[v]! >= p.spike_min_count) candidates.set(v, new Map());
      if (s.observed[v]! >= p.new_min_count && s.seen[v] === 0) {
        const f = novelty(p, w, dimension, names[d]![v]!, windowStats(s, v));
        if (f) out.push(f);
      }
    }
    if (candidates.size > 0) {
      t.cells(d, values, (v, i, n) => candidates.get(v)?.set(i, n));
      for (const [v, series] of candidates) out.push(...spikesOf(p, w, dimension, names[d]![v]!, series));
    }
    return s;
  });
  return { findings: out.sort(compareFindings), stats };
}
