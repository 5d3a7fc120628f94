import type { AppContext } from "../../context";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import type { Queryable } from "../../db/port";
import { AppError, problemsOrThrow } from "../../http/errors/errors";
import { latestPage, listAnswer } from "../../http/pagination";
import { parseUnits } from "../audit/amounts";
import { operatorChange } from "../state";
import { setThreshold, storedThresholdValues, thresholdHistoryPage } from "../store/operators";
import { bumpState } from "../store/state";

// The thresholds in force. Stored as text exactly as the operator gave them (a decimal token amount or a
// percentage with at most two decimals); absent = the built-in default. Every change writes a history row
// (threshold-history.json) and an admin_audit row in the same transaction as the change.

export const THRESHOLD_DEFAULTS = {
  large_transfer_amount: "1000000",
  severity_medium_amount: "10000",
  severity_high_amount: "100000",
  severity_critical_amount: "1000000",
  sigs_increase_threshold_pct: "50",
  rows_increase_threshold_pct: "100",
} as const;
export type ThresholdName = keyof typeof THRESHOLD_DEFAULTS;
export type Thresholds = Record<ThresholdName, string>;
export const THRESHOLD_NAMES = Object.keys(THRESHOLD_DEFAULTS) as ThresholdName[];

const AMOUNTS: readonly ThresholdName[] = ["large_transfer_amount", "severity_medium_amount", "severity_high_amount", "severity_critical_amount"];
export const isAmountThreshold = (name: ThresholdName) => AMOUNTS.includes(name);

const PCT = /^(\d{1,5})(?:\.(\d{1,2}))?$/;

/** "12.5" → 1250 hundredths of a percent; null outside 0–10000 or with more than two decimals. */
export function pctHundredths(text: string): number | null {
  const m = PCT.exec(text);
  if (!m) return null;
  const v = Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
  return v <= 1_000_000 ? v : null;
}

/** A query number (already checked 0–10000 by its schema) → hundredths, or a 400 when it has more than two decimals. */
export function pctQuery(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const h = Math.round(value * 100);
  if (Math.abs(value * 100 - h) > 1e-6) {
    const problem = `must have at most two decimal places (percent, 0–10000); got ${value}`;
    throw new AppError("invalid_query", `${field} ${problem}`, { details: [{ field, problem }] });
  }
  return h;
}

/** A run's thresholds as its run stored them (audit_runs.thresholds, JSON); a name it lacks is at its default. */
export function storedThresholds(json: string): Thresholds {
  return { ...THRESHOLD_DEFAULTS, ...(JSON.parse(json) as Partial<Thresholds>) };
}

const pctNumber = (text: string, fallback: string) => (pctHundredths(text) ?? pctHundredths(fallback)!) / 100;

/**
 * Thresholds as answers show them (runs.json, summary.json; alerts.json shows the two percentages the same way):
 * percentages as numbers (12.5), amounts as decimal strings — token amounts are decimal strings on the wire
 * (docs/design.md §2), and a threshold with 18 fractional digits would not survive a float.
 */
export function thresholdsView(t: Thresholds) {
  return {
    ...t,
    sigs_increase_threshold_pct: pctNumber(t.sigs_increase_threshold_pct, THRESHOLD_DEFAULTS.sigs_increase_threshold_pct),
    rows_increase_threshold_pct: pctNumber(t.rows_increase_threshold_pct, THRESHOLD_DEFAULTS.rows_increase_threshold_pct),
  };
}

/** The thresholds in force, read on `q` (the store, or a transaction that must see its own changes). */
export async function currentThresholds(q: Queryable): Promise<Thresholds> {
  const rows = await storedThresholdValues(q);
  const out: Thresholds = { ...THRESHOLD_DEFAULTS };
  for (const r of rows) if (r.parameter in out) out[r.parameter as ThresholdName] = r.value;
  return out;
}

/** A threshold's problem, or null (decimals bounds the fractional digits of amounts). */
function problemOf(name: ThresholdName, value: string, decimals: number): string | null {
  if (isAmountThreshold(name)) {
    return parseUnits(value, decimals) === null ? `must be a non-negative decimal token amount with at most ${decimals} fractional digits` : null;
  }
  return pctHundredths(value) === null ? 'must be a percentage from 0 to 10000 with at most two decimal places, as a string ("50", "12.5")' : null;
}

export interface ThresholdChange {
  values: Partial<Record<ThresholdName, string>>;
  reason: string;
  /** Who answers for the change (a person or team); default: the admin token's label. */
  owner?: string;
}

/**
 * PATCH /admin/transparency/thresholds: validates all, then records each changed parameter. The thresholds before
 * the change are read inside its transaction, so two operators changing them at once each record the value they
 * really replaced.
 */
export async function changeThresholds(ctx: AppContext, admin: AdminRequest, change: ThresholdChange, decimals: number) {
  const entries = Object.entries(change.values).filter(([, v]) => v !== undefined) as Array<[ThresholdName, string]>;
  if (entries.length === 0)
    throw new AppError("invalid_payload", "Name at least one threshold to change", {
      details: [{ field: "body", problem: `must set one of: ${THRESHOLD_NAMES.join(", ")}` }],
    });
  const problems = entries.flatMap(([name, value]) => {
    const p = problemOf(name, value, decimals);
    return p ? [{ field: name, problem: p }] : [];
  });
  problemsOrThrow("thresholds", problems);
  const now = ctx.clock.now().toISOString();
  const owner = change.owner ?? actorLabel(admin.actor);
  const plan = (before: Thresholds) => {
    const after = { ...before, ...Object.fromEntries(entries) } as Thresholds;
    const level = (n: ThresholdName) => parseUnits(after[n], decimals)!;
    if (level("severity_medium_amount") > level("severity_high_amount") || level("severity_high_amount") > level("severity_critical_amount")) {
      throw new AppError("invalid_payload", "severity_medium_amount ≤ severity_high_amount ≤ severity_critical_amount must hold", {
        details: [{ field: "severity_*_amount", problem: "the severity cut-offs must not decrease from medium to critical" }],
      });
    }
    return { after, changed: entries.filter(([name, value]) => before[name] !== value) };
  };
  return operatorChange(ctx, admin, now, async (t, audit) => {
    let before = await currentThresholds(t);
    let { after, changed } = plan(before);
    if (changed.length === 0) return { thresholds: after, changed: [] as ThresholdName[] };
    // The audit_state bump first: its row lock serialises concurrent changes (PostgreSQL), and the thresholds read
    // again after it are the ones this change really replaces.
    await bumpState(t, now);
    before = await currentThresholds(t);
    ({ after, changed } = plan(before));
    for (const [name, value] of changed) {
      await setThreshold(t, { changed_at: now, parameter: name, previous_value: before[name], new_value: value, owner, reason: change.reason });
    }
    if (changed.length) {
      const details = { before: Object.fromEntries(changed.map(([n]) => [n, before[n]])), after: Object.fromEntries(changed), reason: change.reason };
      await audit("transparency.thresholds.change", changed.map(([n]) => n).join(","), details);
    }
    return { thresholds: after, changed: changed.map(([n]) => n) };
  });
}

/** threshold-history.json: the latest `limit` changes, newest first, how many there are, and the thresholds in force. */
export async function thresholdHistory(ctx: AppContext, limit: number) {
  const h = await thresholdHistoryPage(ctx.store, limit + 1);
  return { limit, total: h.total, ...listAnswer("rows", latestPage(h.rows, limit), {}, { current: await currentThresholds(ctx.store) }) };
}
