import { parseCalendarStrict, zonedInstantMs } from "../../clock";
import { queryProblem } from "../../http/errors/errors";
import type { TimeRange } from "./sources";

// The incident routes' window: `hours` back from now, or `since`/`until`, which override it. Refusals name the parameter.

/** An ISO 8601 instant with a zone (`Z` or `±hh:mm`) as epoch ms, or a 400 naming the parameter. */
export function instantOrThrow(name: string, raw: string): number {
  const ms = zonedInstantMs(raw);
  if (Number.isNaN(ms)) throw queryProblem(name, "must be an ISO 8601 instant with a zone, such as 2026-02-01T10:00:00Z");
  return ms;
}

/** A form's time: a datetime-local value (read as UTC) or an ISO 8601 instant with a zone, as epoch ms; NaN when neither. */
export const formInstantMs = (raw: string) => (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(raw) ? parseCalendarStrict(`${raw}Z`) : zonedInstantMs(raw));

/**
 * A GET form's values, read leniently (empty = the fallback): a bad value is replaced by its fallback and named in
 * `problems`, which the page shows (the alerts and incidents pages).
 */
export function lenientValues(problems: string[]) {
  return {
    int(raw: string | number | undefined, min: number, max: number, fallback: number, label: string): number {
      const v = String(raw ?? "").trim();
      if (v === "") return fallback;
      const n = /^\d{1,9}$/.test(v) ? Number(v) : Number.NaN;
      if (n >= min && n <= max) return n;
      problems.push(`${label} must be a whole number from ${min} to ${max}`);
      return fallback;
    },
    oneOf<T extends string>(raw: string | number | undefined, list: readonly T[], label: string): T {
      const v = String(raw ?? "");
      if (v === "" || (list as readonly string[]).includes(v)) return (v || list[0]) as T;
      problems.push(`${label} must be one of ${list.join(", ")}`);
      return list[0]!;
    },
  };
}

export interface WindowQuery {
  hours?: number;
  since?: string;
  until?: string;
}

export interface ResolvedWindow extends TimeRange {
  hours: number;
  /** Where the bounds came from: "hours" (until = now) or "since_until" (one or both given). */
  basis: "hours" | "since_until";
}

const iso = (ms: number) => new Date(ms).toISOString();
const hoursBetween = (a: number, b: number) => Math.round(((b - a) / 3_600_000) * 1000) / 1000;

/**
 * until defaults to now and since to until − hours; given both, hours is ignored. until must be after since and
 * the span at most maxHours (the same bound as hours), so since/until never read more than hours could.
 */
export function resolveWindow(q: WindowQuery, now: Date, defaultHours: number, maxHours: number): ResolvedWindow {
  const hours = q.hours ?? defaultHours;
  const given = q.since !== undefined || q.until !== undefined;
  const until = q.until !== undefined ? instantOrThrow("until", q.until) : now.getTime();
  const since = q.since !== undefined ? instantOrThrow("since", q.since) : until - hours * 3_600_000;
  if (until <= since) throw queryProblem("until", "must be after since");
  if (until - since > maxHours * 3_600_000)
    throw queryProblem(q.since !== undefined ? "since" : "until", `must be at most ${maxHours} hours from the other bound`);
  return { since: iso(since), until: iso(until), hours: given ? hoursBetween(since, until) : hours, basis: given ? "since_until" : "hours" };
}
