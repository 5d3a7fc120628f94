import { and, asc, eq, gte, lte, sql } from "drizzle-orm";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { currentGuards, type GuardRow, PREFLIGHT_PRESETS, type PreflightPreset, type PreflightSection } from "./guards";
import { opsPreflightSnapshots } from "../tables";

// The preflight guards' store and read-models: the daily snapshot (one row per day and guard field), the delta
// of the current values against a past day, and the per-day history. Days are UTC calendar days `YYYY-MM-DD`.

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
export function selectionOf(ctx: AppContext, q: { section?: PreflightSection | "all"; fields?: string; fields_preset?: PreflightPreset }): Selection {
  const listed = (q.fields ?? "")
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean);
  const preset = q.fields_preset ? [...PREFLIGHT_PRESETS[q.fields_preset]] : [];
  const known = new Set(currentGuards(ctx).map((g) => g.field));
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

export interface SnapshotRow {
  day: string;
  section: string;
  field: string;
  value: string;
  fingerprint: string;
  takenAt: string;
}

/** Snapshot rows of days from..to (inclusive), day then catalog-independent field order. */
export function snapshotRows(ctx: AppContext, from: string, to: string): SnapshotRow[] {
  const t = opsPreflightSnapshots;
  return ctx.db.db
    .select()
    .from(t)
    .where(and(gte(t.day, from), lte(t.day, to)))
    .orderBy(asc(t.day), asc(t.section), asc(t.field))
    .all();
}

/** The latest taken_at of a day's snapshot, or null when the day has none. */
export function snapshotTakenAt(ctx: AppContext, day: string): string | null {
  const t = opsPreflightSnapshots;
  const row = ctx.db.db
    .select({ at: sql<string | null>`max(${t.takenAt})` })
    .from(t)
    .where(eq(t.day, day))
    .get();
  return row?.at ?? null;
}

/**
 * Writes today's snapshot of every guard field: the day's rows are replaced in one transaction, so running it
 * twice on a day leaves one row per field with the later values (idempotent per day).
 */
export function takePreflightSnapshot(ctx: AppContext): { day: string; fields: number; taken_at: string } {
  const now = ctx.clock.now();
  const day = dayOf(now);
  const takenAt = now.toISOString();
  const rows = currentGuards(ctx).map((g) => ({ day, section: g.section, field: g.field, value: g.value, fingerprint: g.fingerprint, takenAt }));
  ctx.db.db.transaction((tx) => {
    tx.delete(opsPreflightSnapshots).where(eq(opsPreflightSnapshots.day, day)).run();
    tx.insert(opsPreflightSnapshots).values(rows).run();
  });
  return { day, fields: rows.length, taken_at: takenAt };
}

/**
 * Whether the scheduled run has work: today has no snapshot yet, or this process started after it was taken
 * (configuration changes only with a restart, so a restart's values replace the day's).
 */
export function snapshotDue(ctx: AppContext): boolean {
  const at = snapshotTakenAt(ctx, dayOf(ctx.clock.now()));
  return at === null || at < ctx.startedAt.toISOString();
}

export type ChangeKind = "added" | "removed" | "changed";

export interface DeltaEntry {
  section: string;
  field: string;
  change: ChangeKind;
  before: string | null;
  after: string | null;
  before_fingerprint: string | null;
  after_fingerprint: string | null;
}

export interface Delta {
  current_day: string;
  compare_day: string;
  day_offset: number;
  /** False when the compared day has no snapshot: nothing can be said, and `changes` is empty. */
  compare_available: boolean;
  compare_taken_at: string | null;
  current_at: string;
  section: string;
  fields: string[] | null;
  counts: { added: number; removed: number; changed: number; unchanged: number };
  changes: DeltaEntry[];
}

/** The current guard values against the snapshot of `dayOffset` days ago, within the selection. */
export function preflightDelta(ctx: AppContext, dayOffset: number, sel: Selection, current: GuardRow[] = currentGuards(ctx)): Delta {
  const today = dayOf(ctx.clock.now());
  const compareDay = addDays(today, -dayOffset);
  const before = snapshotRows(ctx, compareDay, compareDay).filter((r) => selects(sel, r));
  const now = current.filter((g) => selects(sel, g));
  const counts = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  const changes: DeltaEntry[] = [];
  const available = before.length > 0 || snapshotTakenAt(ctx, compareDay) !== null;
  if (available) {
    const old = new Map(before.map((r) => [`${r.section}.${r.field}`, r]));
    for (const g of now) {
      const b = old.get(`${g.section}.${g.field}`);
      old.delete(`${g.section}.${g.field}`);
      if (!b) {
        counts.added++;
        changes.push({
          section: g.section,
          field: g.field,
          change: "added",
          before: null,
          after: g.value,
          before_fingerprint: null,
          after_fingerprint: g.fingerprint,
        });
      } else if (b.fingerprint !== g.fingerprint) {
        counts.changed++;
        changes.push({
          section: g.section,
          field: g.field,
          change: "changed",
          before: b.value,
          after: g.value,
          before_fingerprint: b.fingerprint,
          after_fingerprint: g.fingerprint,
        });
      } else counts.unchanged++;
    }
    for (const b of old.values()) {
      counts.removed++;
      changes.push({
        section: b.section,
        field: b.field,
        change: "removed",
        before: b.value,
        after: null,
        before_fingerprint: b.fingerprint,
        after_fingerprint: null,
      });
    }
  }
  return {
    current_day: today,
    compare_day: compareDay,
    day_offset: dayOffset,
    compare_available: available,
    compare_taken_at: snapshotTakenAt(ctx, compareDay),
    current_at: ctx.startedAt.toISOString(),
    section: sel.section,
    fields: sel.fields,
    counts,
    changes,
  };
}

export interface HistoryRow {
  day: string;
  section: string;
  field: string;
  value: string;
  fingerprint: string;
  /** Against the day before: true/false, or null when the day before has no snapshot to compare with. */
  changed: boolean | null;
}

/** Every snapshot row of the last `days` days (today included) within the selection, oldest day first. */
export function preflightHistory(ctx: AppContext, days: number, sel: Selection): { from: string; to: string; days: number; rows: HistoryRow[] } {
  const to = dayOf(ctx.clock.now());
  const from = addDays(to, -(days - 1));
  const all = snapshotRows(ctx, addDays(from, -1), to);
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
