// The reporting window of the messenger admin routes: `days` (the last N UTC days, today included) or `preset`
// (a named calendar window), one vocabulary for every route that takes them (docs/messenger-admin.md "Windows").
import { t } from "elysia";
import { invalidRequest } from "../../http/errors/errors";
import { intQuery } from "../../http/params";

export const WINDOW_PRESETS = ["today", "yesterday", "last_7d", "last_30d", "last_90d", "this_week", "this_month", "last_month"] as const;
export type WindowPreset = (typeof WINDOW_PRESETS)[number];
export const MAX_WINDOW_DAYS = 366;
/** `days` or `preset`, as windowQueryFields checked them. */
export type WindowQuery = { days?: number; preset?: WindowPreset };

/** The query fields every windowed admin route takes (spread into its query schema). */
export const windowQueryFields = (defaultDays: number) => ({
  days: intQuery({ minimum: 1, maximum: MAX_WINDOW_DAYS, defaultValue: defaultDays, description: "the last N UTC days, today included (or use preset)" }),
  preset: t.Optional(
    t.Union(
      WINDOW_PRESETS.map((p) => t.Literal(p)),
      { description: `a named UTC window instead of days: ${WINDOW_PRESETS.join(", ")}` },
    ),
  ),
});

export const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/** The UTC days `from` to `to`, inclusive: every day of a window, those without figures too. */
export function daysOf(w: { from: string; to: string }): string[] {
  const days: string[] = [];
  for (let ms = Date.parse(`${w.from}T00:00:00Z`); ms <= Date.parse(`${w.to}T00:00:00Z`); ms += DAY_MS) days.push(dayOf(ms));
  return days;
}

/**
 * A resolved window: inclusive UTC days `from`..`to` (YYYY-MM-DD), its label (the preset's name, or `last_<n>d` for
 * days), and the instants that bound it.
 */
export type ReportWindow = ReturnType<typeof span>;

function span(fromMs: number, toMs: number, label: string) {
  return {
    from: dayOf(fromMs),
    to: dayOf(toMs),
    days: Math.round((startOfDay(toMs) - startOfDay(fromMs)) / DAY_MS) + 1,
    label,
    since: new Date(startOfDay(fromMs)).toISOString(),
    until: new Date(startOfDay(toMs) + DAY_MS).toISOString(),
  };
}

/** Each preset's first and last day (the starts of those days) from today's; weeks start on Monday (ISO 8601). */
const PRESET_DAYS: Record<WindowPreset, (today: number, d: Date) => [number, number]> = {
  today: (today) => [today, today],
  yesterday: (today) => [today - DAY_MS, today - DAY_MS],
  last_7d: (today) => [today - 6 * DAY_MS, today],
  last_30d: (today) => [today - 29 * DAY_MS, today],
  last_90d: (today) => [today - 89 * DAY_MS, today],
  this_week: (today, d) => [today - ((d.getUTCDay() + 6) % 7) * DAY_MS, today],
  this_month: (today, d) => [Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), today],
  last_month: (_, d) => [Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) - DAY_MS],
};

/**
 * Resolves `days` / `preset` at `now`. Both given is a 400 naming both (which one was meant is a guess); neither
 * gives the route's default days.
 */
export function resolveWindow(query: WindowQuery, now: Date, defaultDays: number): ReportWindow {
  if (query.days !== undefined && query.preset !== undefined) {
    throw invalidRequest("parameters", [
      { field: "query.days", problem: `names the same window as query.preset; send one of them (got ${query.days})` },
      { field: "query.preset", problem: `names the same window as query.days; send one of them (got ${query.preset})` },
    ]);
  }
  const today = startOfDay(now.getTime());
  if (query.preset === undefined) {
    const days = query.days ?? defaultDays;
    return span(today - (days - 1) * DAY_MS, today, `last_${days}d`);
  }
  const [fromMs, toMs] = PRESET_DAYS[query.preset](today, new Date(today));
  return span(fromMs, toMs, query.preset);
}
