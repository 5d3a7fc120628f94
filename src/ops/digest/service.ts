import type { AppContext } from "../../context";
import { loadDigestData } from "./data";
import { BASELINE_SPAN_HOURS, baselineAt, type DigestParams, digestParamsOf, type Finding, isSpike, type Window } from "./findings";
import { type DimensionStats, findingsOf, GROUP_DIMENSIONS, Interner, Tally } from "./tally";
import { activeRules } from "./suppressions";

// The 403 digest: the window's 403s per hour against a baseline, grouped, with findings, from the hourly rollups only.
// Findings are computed over every 403 and over those no active rule matches; one of the first set with no
// counterpart (same kind, dimension, value, overlapping hours) in the second is suppressed, under the rule that
// matched most of its 403s. docs/ops-digest.md has the definitions.

/** At most this many findings (and as many suppressed findings) are listed; the totals count them all. */
export const MAX_FINDINGS = 500;

const HOUR_MS = 3_600_000;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** A rollup row an active rule matched: kept to name the rule behind each suppressed finding. */
interface SuppressedRow {
  i: number;
  values: string[];
  count: number;
  ruleId: number;
}

export type PublicFinding = Omit<Finding, "from" | "to">;
const publicFinding = ({ from: _f, to: _t, ...f }: Finding): PublicFinding => f;

export async function buildDigest(ctx: AppContext, p: DigestParams) {
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const nowHourMs = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const history = Math.max(BASELINE_SPAN_HOURS[p.baseline_mode], p.new_path_lookback_days * 24);
  const span = history + p.hours;
  const startMs = nowHourMs - (span - 1) * HOUR_MS;
  const hourName = (i: number) => new Date(startMs + i * HOUR_MS).toISOString().slice(0, 13);
  const w: Window = { first: history, last: span - 1, hourName };
  const data = await loadDigestData(ctx, hourName(0), hourName(w.last));
  w.dataSince = data.dataSince;
  const rules = await activeRules(ctx, nowIso);

  // One pass over the rollup rows: every 403 into `all`, those no active rule matches into `counted`.
  const names = new Interner();
  const all = new Tally(span);
  const counted = rules.length ? new Tally(span) : all;
  const suppressedRows: SuppressedRow[] = [];
  const ids = [0, 0, 0];
  let lastHour = "";
  let i = 0;
  for (const [hour, route, key, prefix, n] of data.forbidden) {
    if (hour !== lastHour) {
      lastHour = hour;
      i = Math.round((Date.parse(`${hour}:00:00.000Z`) - startMs) / HOUR_MS);
    }
    ids[0] = names.id(0, route);
    ids[1] = names.id(1, key);
    ids[2] = names.id(2, prefix);
    all.add(ids, i, n);
    if (!rules.length) continue;
    const rule = rules.find((x) => x.matches(route, key, prefix));
    if (rule) suppressedRows.push({ i, values: ["*", route, key, prefix], count: n, ruleId: rule.id });
    else counted.add(ids, i, n);
  }

  const kept = findingsOf(p, w, counted, names.names);
  const every = counted === all ? kept : findingsOf(p, w, all, names.names);
  const findings = kept.findings;
  const everything = every.findings;
  const overlaps = (a: Finding, b: Finding) => a.kind === b.kind && a.dimension === b.dimension && a.value === b.value && a.from <= b.to && b.from <= a.to;
  const suppressed = everything.filter((f) => !findings.some((g) => overlaps(f, g))).map((f) => ({ ...publicFinding(f), rule_id: ruleOf(f, suppressedRows) }));

  const hours = [];
  const countedSeries = counted.totalSeries();
  for (let h = w.first; h <= w.last; h++) {
    const forbidden = all.total[h]!;
    const observed = counted.total[h]!;
    const baseline = baselineAt(p.baseline_mode, countedSeries, h);
    hours.push({
      hour: hourName(h),
      requests: data.requests.get(hourName(h)) ?? 0,
      forbidden,
      suppressed: forbidden - observed,
      observed,
      baseline: round2(baseline),
      ratio: round2(observed / Math.max(baseline, 1)),
      spike: isSpike(p, observed, baseline),
    });
  }

  const lookbackFirst = w.first - p.new_path_lookback_days * 24;
  const group = (d: number) => groupsOf(every.stats[d]!, kept.stats[d]!, names.names[d]!, w, p.group_limit);
  return {
    generated_at: nowIso,
    window: { from_hour: hourName(w.first), to_hour: hourName(w.last), hours: p.hours, partial_last_hour: true },
    params: digestParamsOf(p),
    coverage: {
      data_since: data.dataSince,
      baseline_complete: data.dataSince !== null && data.dataSince <= hourName(w.first - BASELINE_SPAN_HOURS[p.baseline_mode]),
      lookback_complete: data.dataSince !== null && data.dataSince <= hourName(lookbackFirst),
    },
    totals: {
      requests: hours.reduce((s, h) => s + h.requests, 0),
      forbidden: hours.reduce((s, h) => s + h.forbidden, 0),
      suppressed: hours.reduce((s, h) => s + h.suppressed, 0),
    },
    hours,
    groups: { route: group(0), partner_key: group(1), client_prefix: group(2) },
    active_rules: rules.map((r) => r.id),
    findings_total: findings.length,
    findings: findings.slice(0, MAX_FINDINGS).map(publicFinding),
    suppressed_total: suppressed.length,
    suppressed: suppressed.slice(0, MAX_FINDINGS),
  };
}

export type Digest = Awaited<ReturnType<typeof buildDigest>>;

/** The rule whose matched 403s in the finding's dimension value and hours are the most (lowest id on a tie). */
function ruleOf(f: Finding, rows: SuppressedRow[]): number {
  const d = ["all", ...GROUP_DIMENSIONS].indexOf(f.dimension);
  const by = new Map<number, number>();
  for (const r of rows) if (r.i >= f.from && r.i <= f.to && r.values[d] === f.value) by.set(r.ruleId, (by.get(r.ruleId) ?? 0) + r.count);
  let best = 0;
  let bestN = -1;
  for (const [id, n] of [...by].sort((a, b) => a[0] - b[0])) if (n > bestN) [best, bestN] = [id, n];
  return best;
}

/** The window's 403s per value of a dimension, most first; `suppressed` of them matched an active rule. */
function groupsOf(all: DimensionStats, kept: DimensionStats, names: string[], w: Window, limit: number) {
  const items = [];
  for (let v = 0; v < names.length; v++) {
    const count = all.observed[v]!;
    if (count === 0) continue;
    items.push({
      value: names[v]!,
      count,
      suppressed: count - kept.observed[v]!,
      hours: all.hours[v]!,
      first_hour: w.hourName(all.from[v]!),
      last_hour: w.hourName(all.to[v]!),
    });
  }
  items.sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
  return { distinct: items.length, items: items.slice(0, limit) };
}
