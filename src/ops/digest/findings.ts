import { t } from "elysia";
import { withDefaults } from "../with-defaults";
// Findings of the 403 digest: spikes against a baseline, and paths or clients never seen 403 before. Pure
// functions over per-hour counts; docs/ops-digest.md defines every rule here in words, with the same numbers.

export const BASELINE_MODES = ["rolling_24h", "same_hour_yesterday", "same_weekday_hour_4w"] as const;
export type BaselineMode = (typeof BASELINE_MODES)[number];

export const Hour = t.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}$", description: "UTC hour, YYYY-MM-DDTHH" });
const DimensionSchema = t.Union([t.Literal("all"), t.Literal("route"), t.Literal("partner_key"), t.Literal("client_prefix")]);
/** A finding as the digest answers it (model.ts names it Ops403Finding). */
export const FindingFields = {
  kind: t.Union([t.Literal("sustained_spike"), t.Literal("spike"), t.Literal("new_path"), t.Literal("new_client")]),
  dimension: DimensionSchema,
  value: t.String({ description: 'the route template, partner key id ("" = none), client prefix, or * for all' }),
  first_hour: Hour,
  last_hour: Hour,
  hours: t.Integer(),
  observed: t.Integer(),
  baseline: t.Number(),
  ratio: t.Number(),
  why: t.String(),
};
export type Dimension = typeof DimensionSchema.static;
export type FindingKind = typeof FindingFields.kind.static;

/** Hours of history each baseline reads before the hour it describes. */
export const BASELINE_SPAN_HOURS: Record<BaselineMode, number> = { rolling_24h: 24, same_hour_yesterday: 24, same_weekday_hour_4w: 4 * 168 };

/** The digest's parameters with their defaults, named and ordered as its query and its `params` echo name them. */
export const DIGEST_DEFAULTS = {
  hours: 24,
  baseline_mode: "rolling_24h" as BaselineMode,
  new_path_lookback_days: 14,
  spike_consecutive_hours: 2,
  spike_ratio: 3,
  spike_min_count: 10,
  new_min_count: 3,
  group_limit: 20,
};
export type DigestParams = typeof DIGEST_DEFAULTS;
export type DetectionParams = Omit<DigestParams, "hours" | "group_limit">;

export const digestParamsOf = (q: Partial<DigestParams>) => withDefaults(DIGEST_DEFAULTS, q);

/** Hour i's count, 0 when absent. Index 0 is the oldest loaded hour. */
export type Series = Map<number, number>;
const at = (s: Series, i: number) => (i < 0 ? 0 : (s.get(i) ?? 0));

/**
 * The expected 403 count of hour i:
 * - rolling_24h: the mean of the 24 hours just before it (i-24 … i-1);
 * - same_hour_yesterday: hour i-24;
 * - same_weekday_hour_4w: the mean of the same hour 1, 2, 3 and 4 weeks before (i-168, i-336, i-504, i-672).
 * Hours before the oldest rollup count as 0.
 */
export function baselineAt(mode: BaselineMode, s: Series, i: number): number {
  if (mode === "same_hour_yesterday") return at(s, i - 24);
  if (mode === "same_weekday_hour_4w") return (at(s, i - 168) + at(s, i - 336) + at(s, i - 504) + at(s, i - 672)) / 4;
  let sum = 0;
  for (let k = 1; k <= 24; k++) sum += at(s, i - k);
  return sum / 24;
}

/** An hour is a spike at ≥ spike_min_count 403s and ≥ spike_ratio × max(baseline, 1). */
export const isSpike = (p: DetectionParams, observed: number, baseline: number) =>
  observed >= p.spike_min_count && observed >= p.spike_ratio * Math.max(baseline, 1);

export const FindingSchema = t.Object(FindingFields);
export type Finding = typeof FindingSchema.static & {
  /** Loaded-range indexes of first_hour and last_hour (not serialised). */
  from: number;
  to: number;
};

const round2 = (n: number) => Math.round(n * 100) / 100;

export function labelOf(dimension: Dimension, value: string): string {
  if (dimension === "all") return "all routes";
  if (dimension === "route") return `route ${value}`;
  if (dimension === "partner_key") return `partner key ${value || "(none)"}`;
  return `client ${value || "(unknown)"}`;
}

export interface Window {
  /** Index of the first and last window hour (the last is the current, partial, hour). */
  first: number;
  last: number;
  hourName: (i: number) => string;
  /** The first hour Herald holds request data for (null: none), so a finding never claims history it has not seen. */
  dataSince?: string | null;
}

/** Runs of consecutive spike hours in the window: a run of ≥ spike_consecutive_hours is sustained_spike, shorter is spike. */
export function spikesOf(p: DetectionParams, w: Window, dimension: Dimension, value: string, s: Series): Finding[] {
  const out: Finding[] = [];
  let runStart = -1;
  let observed = 0;
  let baseline = 0;
  let floor = 0;
  const close = (end: number) => {
    const hours = end - runStart + 1;
    const kind: FindingKind = hours >= p.spike_consecutive_hours ? "sustained_spike" : "spike";
    const ratio = round2(observed / floor);
    const span = hours === 1 ? `hour ${w.hourName(runStart)}` : `${hours} consecutive hours (${w.hourName(runStart)} to ${w.hourName(end)})`;
    const why =
      `${labelOf(dimension, value)}: ${observed} 403s in ${span} against a ${p.baseline_mode} baseline of ${round2(baseline)} (ratio ${ratio}); ` +
      `an hour is a spike at ≥ ${p.spike_min_count} 403s and ≥ ${p.spike_ratio}× its baseline` +
      (kind === "sustained_spike" ? `, and ${hours} consecutive spike hours (≥ spike_consecutive_hours ${p.spike_consecutive_hours}) make it sustained.` : ".");
    out.push({
      kind,
      dimension,
      value,
      first_hour: w.hourName(runStart),
      last_hour: w.hourName(end),
      hours,
      observed,
      baseline: round2(baseline),
      ratio,
      why,
      from: runStart,
      to: end,
    });
    runStart = -1;
  };
  for (let i = w.first; i <= w.last; i++) {
    const o = at(s, i);
    const b = baselineAt(p.baseline_mode, s, i);
    if (isSpike(p, o, b)) {
      if (runStart === -1) {
        runStart = i;
        observed = baseline = floor = 0;
      }
      observed += o;
      baseline += b;
      floor += Math.max(b, 1);
    } else if (runStart !== -1) close(i - 1);
  }
  if (runStart !== -1) close(w.last);
  return out;
}

/** What novelty needs of one value's series: its window figures and whether the lookback saw it. */
export interface WindowStats {
  observed: number;
  hours: number;
  from: number;
  to: number;
  seenInLookback: boolean;
}

/** A route or client with ≥ new_min_count 403s in the window and none in the new_path_lookback_days days before it. */
export function novelty(p: DetectionParams, w: Window, dimension: Dimension, value: string, s: WindowStats): Finding | null {
  if ((dimension !== "route" && dimension !== "client_prefix") || value === "") return null;
  if (s.seenInLookback || s.observed < p.new_min_count) return null;
  const lookbackFirst = w.first - p.new_path_lookback_days * 24;
  const kind: FindingKind = dimension === "route" ? "new_path" : "new_client";
  const lookbackStart = w.hourName(Math.max(lookbackFirst, 0));
  // When the data starts inside the lookback, say how much history the "none before" rests on (coverage.lookback_complete is false).
  const partial = w.dataSince !== undefined && (w.dataSince === null || w.dataSince > lookbackStart);
  const before = partial
    ? `and none before it in the history Herald holds (since ${w.dataSince ?? w.hourName(s.from)}, less than the ${p.new_path_lookback_days}-day lookback)`
    : `and none in the ${p.new_path_lookback_days} days before it (since ${lookbackStart})`;
  const why = `${labelOf(dimension, value)}: ${s.observed} 403s in this window (first at ${w.hourName(s.from)}) ${before}; flagged at ≥ ${p.new_min_count} 403s.`;
  return {
    kind,
    dimension,
    value,
    first_hour: w.hourName(s.from),
    last_hour: w.hourName(s.to),
    hours: s.hours,
    observed: s.observed,
    baseline: 0,
    ratio: s.observed,
    why,
    from: s.from,
    to: s.to,
  };
}

const KIND_ORDER: Record<FindingKind, number> = { sustained_spike: 0, spike: 1, new_path: 2, new_client: 3 };

export const compareFindings = (a: Finding, b: Finding) =>
  KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || b.ratio - a.ratio || a.dimension.localeCompare(b.dimension) || a.value.localeCompare(b.value) || a.from - b.from;
