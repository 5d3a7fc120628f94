import type { AppContext } from "../../context";
import { commaList } from "../../config/parse";
import type { Queryable } from "../../db/port";
import { AppError } from "../../http/errors/errors";
import { currentGuards, type GuardRow, PREFLIGHT_PRESETS, type PreflightPreset, type PreflightSection } from "./guards";
import { claimDay, dayTakenAt, replaceDayRest, type SnapshotRow, snapshotRowsBetween } from "./store";

// The preflight guards' daily snapshot, the delta of the current values against a past day, and the per-day
// history. Days are UTC calendar days `YYYY-MM-DD`.

const DAY_MS = 86_400_000;
export const dayOf = (d: Date): string => d.toISOString().slice(0, 10);
export const addDays = (day: string, n: number): string => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));

export interface Selection {
  section: PreflightSection | "all";
  /** Field names asked for (fields ∪ the preset's), or null for every field of the section. */
  fields: string[] | null;
}

/**
 * The section filter and the field filter (`fields` comma list united with the preset's list). A field name
 * that no guard has is refused as 400 invalid_query naming it: a typo would otherwise read as "no changes".
 */
export async function selectionOf(
  ctx: AppContext,
  q: { section?: PreflightSection | "all"; fields?: string; fields_preset?: PreflightPreset },
): Promise<Selection> {
  const listed = commaList(q.fields ?? "");
  const preset = q.fields_preset ? [...PREFLIGHT_PRESETS[q.fields_preset]] : [];
  const known = new Set((await currentGuards(ctx)).map((g) => g.field));
  const unknown = listed.filter((f) => !known.has(f));
  if (unknown.length) {
    throw new AppError("invalid_query", `Unknown preflight guard field: ${unknown.slice(0, 5).join(", ")}`, {
      details: unknown.slice(0, 20).map((f) => ({ field: "query.fields", problem: `no guard field is named ${JSON.stringify(f.slice(0, 60))}` })),
    });
  }
  const fields = listed.length || preset.length ? [...new Set([...listed, ...preset])] : null;
  return { section: q.section ?? "all", fields };
}

export const selects = (s: Selection, g: { section: string; field: string }): boolean =>
  (s.section === "all" || g.section === s.section) && (s.fields === null || s.fields.includes(g.field));

/**
 * Writes today's snapshot of every guard field in the caller's transaction `t` if the day has none, or one taken
 * before `dueBefore`; null when not due. The day's rows are replaced whole (idempotent per day), after the claim
 * (store.ts claimDay): of two instances taking it at once, one does.
 */
export async function takePreflightSnapshotIn(
  t: Queryable,
  ctx: AppContext,
  guards: GuardRow[],
  dueBefore: string,
): Promise<{ day: string; fields: number; taken_at: string } | null> {
  const now = ctx.clock.now();
  const day = dayOf(now);
  const takenAt = now.toISOString();
  const rows = guards.map((g) => ({ day, section: g.section, field: g.field, value: g.value, fingerprint: g.fingerprint, taken_at: takenAt }));
  const [lead, ...rest] = rows;
  if (!lead || !(await claimDay(t, lead, dueBefore))) return null;
  await replaceDayRest(t, lead, rest);
  return { day, fields: rows.length, taken_at: takenAt };
}

/** Writes today's snapshot now (replacing the day's rows), in a transaction of its own. */
export async function takePreflightSnapshot(ctx: AppContext): Promise<{ day: string; fields: number; taken_at: string }> {
  const guards = await currentGuards(ctx);
  const now = ctx.clock.now().toISOString();
  const taken = await ctx.store.tx((t) => takePreflightSnapshotIn(t, ctx, guards, ALWAYS_DUE));
  return taken ?? { day: dayOf(ctx.clock.now()), fields: guards.length, taken_at: now };
}

/** A dueBefore no snapshot's taken_at reaches: the snapshot is replaced whatever its time (a manual run). */
export const ALWAYS_DUE = "9999-12-31T23:59:59.999Z";

/** The scheduled run's dueBefore: configuration changes only with a restart, so a restart's values replace the day's. */
export const snapshotDueBefore = (ctx: Pick<AppContext, "startedAt">) => ctx.startedAt.toISOString();

/** Whether the scheduled run has work now (the same rule as the claim; the claim decides). */
export async function snapshotDue(ctx: AppContext): Promise<boolean> {
  const at = await dayTakenAt(ctx.store, dayOf(ctx.clock.now()));
  return at === null || at < snapshotDueBefore(ctx);
}

/** A change between `b`, the compared snapshot's row (absent when added), and `g`, the current guard (absent when removed). */
const entryOf = (change: "added" | "removed" | "changed", b?: SnapshotRow, g?: GuardRow) => ({
  section: (g ?? b)!.section,
  field: (g ?? b)!.field,
  change,
  before: b?.value ?? null,
  after: g?.value ?? null,
  before_fingerprint: b?.fingerprint ?? null,
  after_fingerprint: g?.fingerprint ?? null,
});
export type DeltaEntry = ReturnType<typeof entryOf>;

export type Delta = Awaited<ReturnType<typeof preflightDelta>>;

/**
 * The current guard values against the snapshot of `dayOffset` days ago, within the selection. compare_available is
 * false when the compared day has no snapshot: nothing can be said, and `changes` is empty.
 */
export async function preflightDelta(ctx: AppContext, dayOffset: number, sel: Selection, current?: GuardRow[]) {
  const today = dayOf(ctx.clock.now());
  const compareDay = addDays(today, -dayOffset);
  current ??= await currentGuards(ctx);
  const before = (await snapshotRowsBetween(ctx.store, compareDay, compareDay)).filter((r) => selects(sel, r));
  const now = current.filter((g) => selects(sel, g));
  const counts = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  const changes: DeltaEntry[] = [];
  const compareTakenAt = await dayTakenAt(ctx.store, compareDay);
  const available = before.length > 0 || compareTakenAt !== null;
  if (available) {
    const old = new Map(before.map((r) => [`${r.section}.${r.field}`, r]));
    for (const g of now) {
      const b = old.get(`${g.section}.${g.field}`);
      old.delete(`${g.section}.${g.field}`);
      const change = !b ? "added" : b.fingerprint !== g.fingerprint ? "changed" : "unchanged";
      counts[change]++;
      if (change !== "unchanged") changes.push(entryOf(change, b, g));
    }
    for (const b of old.values()) {
      counts.removed++;
      changes.push(entryOf("removed", b));
    }
  }
  return {
    current_day: today,
    compare_day: compareDay,
    day_offset: dayOffset,
    compare_available: available,
    compare_taken_at: compareTakenAt,
    current_at: ctx.startedAt.toISOString(),
    section: sel.section,
    fields: sel.fields,
    counts,
    changes,
  };
}

export type HistoryRow = Awaited<ReturnType<typeof preflightHistory>>["rows"][number];

/**
 * Every snapshot row of the last `days` days (today included) within the selection, oldest day first; `changed`
 * against the day before, or null when the day before has no snapshot to compare with.
 */
export async function preflightHistory(ctx: AppContext, days: number, sel: Selection) {
  const to = dayOf(ctx.clock.now());
  const from = addDays(to, -(days - 1));
  const all = await snapshotRowsBetween(ctx.store, addDays(from, -1), to);
  const byDay = new Map<string, Map<string, string>>();
  for (const r of all) {
    if (!byDay.has(r.day)) byDay.set(r.day, new Map());
    byDay.get(r.day)!.set(`${r.section}.${r.field}`, r.fingerprint);
  }
  const rows = all
    .filter((r) => r.day >= from && selects(sel, r))
    .map((r) => {
      const prev = byDay.get(addDays(r.day, -1));
      const changed = prev ? prev.get(`${r.section}.${r.field}`) !== r.fingerprint : null;
      return { day: r.day, section: r.section, field: r.field, value: r.value, fingerprint: r.fingerprint, changed };
    });
  return { from, to, days, rows };
}
