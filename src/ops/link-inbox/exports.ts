import type { AppContext } from "../../context";
import { csvTable } from "../../http/formats/csv";
import { queryProblem } from "../../http/errors/errors";
import { incidentsInWindow } from "../../status/incidents-service";
import { warnStreakOf } from "../alerts/store";
import { instantOrThrow } from "../incidents/window";
import { attemptFailuresAfter, countEvents, eventRows, type EventsWhere, type TargetTally, targetTallies } from "./store-reads";
import {
  EVENT_FIELDS,
  EXPORT_DEFAULT_LIMIT,
  type EXPORT_FLAGS,
  type EventField,
  type ExportQueryEcho,
  type ExportWindow as ExportWindowSchema,
  type exportQuery,
  WINDOW_PRESETS,
} from "./exports-model";
import { LINK_EVENTS, SKIP_REASONS, STATUS_CODE_FAMILIES } from "./notify";
import { ok } from "../../http/envelope";

// The link-inbox event exports: filters → one parameterised SELECT over ops_link_events, newest first. Every
// value is checked here against its list (400 invalid_query naming the parameter), so a bad filter never reaches
// SQL and never becomes a 500. Presets resolve to a [from, to) window that is intersected with at_from/at_to.

/** The filters and fields of an export's query (what a download token stores), without its answer's flags. */
export type EventFilterInput = Omit<typeof exportQuery.static, keyof typeof EXPORT_FLAGS | "include_meta">;

export type ResolvedFilters = typeof ExportQueryEcho.static;

type ExportWindow = typeof ExportWindowSchema.static;

export type EventRow = Record<EventField, string | number | null>;

/** Values of a multi-select: comma parts of every repetition, trimmed, empties dropped, each one of `allowed`. */
function oneOf(name: string, raw: string[] | undefined, allowed: readonly string[]): string[] {
  const parts = (raw ?? []).flatMap((v) => v.split(",").map((part) => part.trim())).filter((v) => v !== "");
  const values = [...new Set(parts)];
  for (const v of values) {
    if (!allowed.includes(v)) throw queryProblem(name, `must be one of: ${allowed.join(", ")}; got "${v.slice(0, 40)}"`);
  }
  return values;
}

/** The columns asked for by `fields` (in the order given, duplicates dropped), or all of them. */
export function resolveFields(raw: string[] | undefined): EventField[] {
  const fields = oneOf("fields", raw, EVENT_FIELDS) as EventField[];
  return fields.length ? fields : [...EVENT_FIELDS];
}

const iso = (ms: number) => new Date(ms).toISOString();

export function resolveFilters(q: EventFilterInput): ResolvedFilters {
  const from = q.at_from !== undefined ? instantOrThrow("at_from", q.at_from) : null;
  const to = q.at_to !== undefined ? instantOrThrow("at_to", q.at_to) : null;
  if (from !== null && to !== null && to <= from) throw queryProblem("at_to", "must be after at_from");
  const preset = q.window_preset || null;
  if (preset !== null && !WINDOW_PRESETS.includes(preset as never)) {
    throw queryProblem("window_preset", `must be one of: ${WINDOW_PRESETS.join(", ")}; got "${preset.slice(0, 40)}"`);
  }
  return {
    event: oneOf("event", q.event, LINK_EVENTS),
    event_prefix: q.event_prefix || null,
    at_from: from === null ? null : iso(from),
    at_to: to === null ? null : iso(to),
    status_code_family: oneOf("status_code_family", q.status_code_family, STATUS_CODE_FAMILIES),
    skip_reason: oneOf("skip_reason", q.skip_reason, SKIP_REASONS),
    issue_id: q.issue_id || null,
    url_contains: q.url_contains || null,
    window_preset: preset,
    limit: q.limit ?? EXPORT_DEFAULT_LIMIT,
  };
}

/**
 * last_digest_warn: the latest 403-digest warning — the newest ops_alert_runs row with source `digest` and status
 * `warn` — as a span: from the first warn run of that streak (same alert name, no non-warn run in between) to the
 * first later run of that name that is not `warn` (exclusive), or now while it still warns.
 */
async function lastDigestWarn(ctx: AppContext): Promise<ExportWindow | null> {
  const s = await warnStreakOf(ctx.store, "digest");
  if (!s) return null;
  const to = s.end ?? ctx.clock.now().toISOString();
  const note = `digest warning "${s.name}" from ${s.start}${s.end ? ` until ${s.end}` : ", still warning"}`;
  return { preset: "last_digest_warn", from: s.start, to, note };
}

/**
 * last_outage: the latest resolved outage — a status incident of severity `bad`, which the drafts call "outage" —
 * or, when none was ever `bad`, the latest resolved incident of any severity (automatic or operator; newest
 * start); [started_at, ended_at).
 */
async function lastOutage(ctx: AppContext): Promise<ExportWindow | null> {
  const resolved = (severity: "bad" | null) =>
    incidentsInWindow(ctx, { since: null, until: null, severity: severity ?? undefined, status: "resolved", limit: 1, offset: 0 });
  const incident = (await resolved("bad")).items[0] ?? (await resolved(null)).items[0];
  if (!incident?.ended_at) return null;
  return { preset: "last_outage", from: incident.started_at, to: incident.ended_at, note: `status incident ${incident.id}: ${incident.title}` };
}

const later = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : Date.parse(a) >= Date.parse(b) ? a : b);
const earlier = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : Date.parse(a) <= Date.parse(b) ? a : b);

/** The window applied: at_from/at_to intersected with the preset's; `empty` when the preset has no window. */
export async function resolveWindow(ctx: AppContext, f: ResolvedFilters): Promise<{ window: ExportWindow; empty: boolean }> {
  if (f.window_preset === null) return { window: { preset: null, from: f.at_from, to: f.at_to, note: null }, empty: false };
  const found = f.window_preset === "last_digest_warn" ? await lastDigestWarn(ctx) : await lastOutage(ctx);
  if (!found) {
    const what =
      f.window_preset === "last_digest_warn" ? "no 403-digest warning recorded (ops_alert_runs, source digest, status warn)" : "no resolved status incident";
    return { window: { preset: f.window_preset, from: null, to: null, note: `${what}: nothing matches` }, empty: true };
  }
  const from = later(f.at_from, found.from);
  const to = earlier(f.at_to, found.to);
  const empty = from !== null && to !== null && Date.parse(to) <= Date.parse(from);
  return { window: { ...found, from, to }, empty };
}

/** The store's filter: the checked filters within the window. */
const whereOf = (f: ResolvedFilters, w: ExportWindow): EventsWhere => ({
  ...f,
  at_from: w.from === null ? null : new Date(w.from).toISOString(),
  at_to: w.to === null ? null : new Date(w.to).toISOString(),
});

export type EventsResult = Awaited<ReturnType<typeof queryEvents>>;

/** Runs an export: the matching total, and (unless countOnly) up to limit rows, newest first. */
export async function queryEvents(ctx: AppContext, q: EventFilterInput, countOnly: boolean) {
  const t0 = performance.now();
  const filters = resolveFilters(q);
  const fields = resolveFields(q.fields);
  const { window, empty } = await resolveWindow(ctx, filters);
  const t1 = performance.now();
  const where = whereOf(filters, window);
  const total = empty ? 0 : await countEvents(ctx.store, where);
  const t2 = performance.now();
  const rows: EventRow[] | null = countOnly ? null : empty ? [] : await eventRows(ctx.store, where, fields, filters.limit);
  const t3 = performance.now();
  const ms = (a: number, b: number) => Math.round((b - a) * 1000) / 1000;
  return { filters, window, fields, total, rows, timingsMs: { resolve: ms(t0, t1), count: ms(t1, t2), rows: ms(t2, t3) } };
}

/** debug=1: the filters in words (no SQL), as the operator would read them. */
export function explain(r: EventsResult): string[] {
  const f = r.filters;
  const lines: string[] = [];
  if (f.event.length) lines.push(`event is one of ${f.event.join(", ")}`);
  if (f.event_prefix !== null) lines.push(`event starts with "${f.event_prefix}"`);
  if (r.window.from !== null) lines.push(`at on or after ${r.window.from}`);
  if (r.window.to !== null) lines.push(`at before ${r.window.to}`);
  if (r.window.preset !== null) lines.push(`window preset ${r.window.preset}: ${r.window.note}`);
  if (f.status_code_family.length) lines.push(`status_code_family is one of ${f.status_code_family.join(", ")}`);
  if (f.skip_reason.length) lines.push(`skip_reason is one of ${f.skip_reason.join(", ")}`);
  if (f.issue_id !== null) lines.push(`issue_id is "${f.issue_id}"`);
  if (f.url_contains !== null) lines.push(`url contains "${f.url_contains}" (case-sensitive)`);
  if (!lines.length) lines.push("no filter: every event");
  lines.push(`newest first, at most ${f.limit} rows; ${r.total} match`);
  return lines;
}

export function eventsJson(ctx: AppContext, r: EventsResult, debug: boolean) {
  const count = r.rows === null ? r.total : r.rows.length;
  return ok({
    generated_at: ctx.clock.now().toISOString(),
    total: r.total,
    count,
    truncated: r.rows !== null && r.total > r.rows.length,
    fields: r.fields,
    query: r.filters,
    window: r.window,
    ...(r.rows === null ? {} : { events: r.rows }),
    ...(debug ? { debug: { explanation: explain(r), timings_ms: r.timingsMs } } : {}),
  });
}

/** RFC 4180 (CRLF), header row of the chosen fields; null is an empty cell. count_only: one `count` column. */
export function eventsCsv(r: EventsResult): string {
  if (r.rows === null) return csvTable([{ count: r.total }], ["count"]);
  return csvTable(r.rows, r.fields);
}

/** A target's tallies and its failing streak: the attempts that failed since its last 2xx (all when it never succeeded). */
export type TargetHealth = TargetTally & { streak: number };

/**
 * Per chat target, from ops_link_events: attempts (rows without skip_reason), their 2xx and failures, skips, the
 * current failing streak and the last success and failure. The page's summary; at most 100 targets.
 */
export async function targetHealth(ctx: AppContext): Promise<TargetHealth[]> {
  const out: TargetHealth[] = [];
  for (const r of await targetTallies(ctx.store)) out.push({ ...r, streak: await attemptFailuresAfter(ctx.store, r.target, r.last_success ?? "") });
  return out;
}
