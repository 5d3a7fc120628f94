import { t } from "elysia";
import { preflightDelta, selectionOf } from "../preflight/service";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { incidentsInWindow, type IncidentView } from "../../status/incidents-service";
import { failedOfNewest } from "./store";
import { codeOf, jobFailures, MAX_JOB_FAILURES, topErrors, type ErrorRow, type JobFailure, type TimeRange, type TopErrors } from "./sources";
import { resolveWindow } from "./window";
import { withDefaults } from "../with-defaults";

// A ready-to-edit incident report from a window's status incidents, failed requests, failed job runs and preflight
// delta. draft-render.ts writes this same draft as Markdown and text, so the three formats cannot disagree.

export const DRAFT_LIMITS = {
  hours: { fallback: 24, max: 720 },
  limit: { fallback: 10, max: 50 },
  index: { fallback: 0, max: 49 },
  preflightDayOffset: { fallback: 1, min: 1, max: 30 },
  topErrorsHours: { fallback: 24, max: 168 },
  topErrorsLimit: { fallback: 50_000, max: 200_000 },
  topErrorsTopN: { fallback: 10, max: 50 },
} as const;

export type DraftSource = "all" | "status" | "errors" | "jobs";
export type DraftContext = "none" | "brief" | "full";
export type DraftTemplate = "v1" | "minimal";
export type SeverityFilter = "all" | "warn" | "bad";

/** Every draft parameter with its default (the order of draft.json's query echo). */
const DRAFT_DEFAULTS = {
  hours: DRAFT_LIMITS.hours.fallback as number,
  limit: DRAFT_LIMITS.limit.fallback as number,
  source: "all" as DraftSource,
  severity: "all" as SeverityFilter,
  since: "",
  until: "",
  index: 0,
  context: "brief" as DraftContext,
  template: "v1" as DraftTemplate,
  preflight_day_offset: DRAFT_LIMITS.preflightDayOffset.fallback as number,
  top_errors_hours: DRAFT_LIMITS.topErrorsHours.fallback as number,
  top_errors_limit: DRAFT_LIMITS.topErrorsLimit.fallback as number,
  top_errors_top_n: DRAFT_LIMITS.topErrorsTopN.fallback as number,
};

export type DraftQuery = Partial<typeof DRAFT_DEFAULTS>;

/** One event of a draft's timeline (model.ts names it IncidentTimelineEntry). */
export const TimelineEntrySchema = t.Object({
  at: t.String(),
  kind: t.UnionEnum(["incident_started", "incident_update", "incident_resolved", "job_failure", "first_error", "last_error", "other_incident"], {
    description: "what happened",
  }),
  text: t.String(),
});
export type TimelineEntry = typeof TimelineEntrySchema.static;

export type IncidentBrief = ReturnType<typeof brief>;

export const SECTION_TITLES = {
  summary: "Summary",
  impact: "Impact",
  timeline: "Timeline",
  incidents: "Incidents in the window",
  top_errors: "Top errors",
  job_failures: "Job failures",
  preflight: "Preflight",
  next_steps: "What we are doing",
} as const;
export type SectionId = keyof typeof SECTION_TITLES;

export const NEXT_STEPS_PLACEHOLDER =
  "EDIT BEFORE PUBLISHING: say what the team is doing now, any workaround for partners, and when the next update will be posted.";
const CONTEXT_PAD_MS = 15 * 60_000;
const MAX_TIMELINE = 200;

export const severityLabel = (s: "warn" | "bad" | null) => (s === "bad" ? "outage" : s === "warn" ? "degraded service" : "none recorded");

export const brief = (i: IncidentView) => ({
  id: i.id,
  source: i.source,
  title: i.title,
  severity: i.severity,
  status: i.status,
  started_at: i.started_at,
  ended_at: i.ended_at,
});

const requestText = (r: ErrorRow) => `${r.method} ${r.route} answered ${r.status} ${codeOf(r)} (request ${r.request_id})`;

export function incidentEvents(i: IncidentView): TimelineEntry[] {
  const out: TimelineEntry[] = [
    { at: i.started_at, kind: "incident_started", text: `Incident #${i.id} started (${severityLabel(i.severity)}, ${i.source}): ${i.title}` },
  ];
  for (const u of [...i.updates].reverse()) {
    const sev = u.severity ? `, severity ${u.severity}` : "";
    out.push({ at: u.created_at, kind: "incident_update", text: `Update #${u.id} [${u.state}${sev}]: ${u.message}` });
  }
  if (i.ended_at) out.push({ at: i.ended_at, kind: "incident_resolved", text: `Incident #${i.id} resolved after ${i.duration_minutes} minutes` });
  return out;
}

export interface Surroundings {
  errors: boolean;
  jobs: boolean;
  /** Rows of request_log read at most (top_errors_limit). */
  rowsLimit: number;
  /** Full context: the other incidents of the window, whose start and end are shown too. */
  others: IncidentBrief[] | null;
}

/** Job failures, the first and last failed request and (full context) the other incidents, within the range. */
export async function surroundings(ctx: AppContext, range: TimeRange, o: Surroundings): Promise<TimelineEntry[]> {
  const out: TimelineEntry[] = [];
  if (o.jobs) {
    for (const f of await jobFailures(ctx, range))
      out.push({ at: f.started_at, kind: "job_failure", text: `Job ${f.job} failed (run ${f.run_id}): ${f.error ?? "no message"}` });
  }
  if (o.errors) {
    const errors = await failedOfNewest(ctx.store, range.since, range.until, o.rowsLimit);
    const [first, last] = [errors[0], errors.at(-1)];
    if (first) out.push({ at: first.at, kind: "first_error", text: `First failed request: ${requestText(first)}` });
    if (last && last.request_id !== first?.request_id) out.push({ at: last.at, kind: "last_error", text: `Last failed request: ${requestText(last)}` });
  }
  for (const i of o.others ?? []) {
    if (i.started_at >= range.since && i.started_at < range.until)
      out.push({ at: i.started_at, kind: "other_incident", text: `Other incident #${i.id} started (${severityLabel(i.severity)}): ${i.title}` });
    if (i.ended_at && i.ended_at >= range.since && i.ended_at < range.until)
      out.push({ at: i.ended_at, kind: "other_incident", text: `Other incident #${i.id} resolved: ${i.title}` });
  }
  return out;
}

/** The incident's span with CONTEXT_PAD_MS each side, inside `within`. */
export function paddedSpan(i: IncidentView, openUntil: string, within: TimeRange): TimeRange {
  const since = new Date(Date.parse(i.started_at) - CONTEXT_PAD_MS).toISOString();
  const until = new Date(Date.parse(i.ended_at ?? openUntil) + CONTEXT_PAD_MS).toISOString();
  // ISO 8601 UTC strings of one format order as text (Math.min/max do not apply to strings).
  return { since: [since, within.since].sort()[1]!, until: [until, within.until].sort()[0]! };
}

function summaryOf(incident: IncidentView | null, window: TimeRange, top: TopErrors | null, failures: JobFailure[] | null): string {
  const parts: string[] = [];
  if (incident) {
    const state = incident.status === "open" ? "is still open" : `was resolved at ${incident.ended_at}`;
    parts.push(
      `${incident.source === "operator" ? "Operator" : "Automatic"} incident #${incident.id} "${incident.title}" (${severityLabel(incident.severity)}) started at ${incident.started_at} and ${state}, after ${incident.duration_minutes} minutes.`,
    );
  } else parts.push(`No status incident is selected for the window ${window.since} to ${window.until}.`);
  if (top) {
    const lead = top.codes[0];
    parts.push(
      `${top.error_requests} failed requests (${top.server_errors} server errors) among the ${top.rows_read} requests read from ${top.window.since} to ${top.window.until}${lead ? `; the most frequent code was ${lead.error_code} (${lead.count})` : ""}.`,
    );
  }
  if (failures && failures.length > MAX_JOB_FAILURES)
    parts.push(`More than ${MAX_JOB_FAILURES} failed job runs in the window (the newest ${MAX_JOB_FAILURES} listed).`);
  else if (failures) parts.push(`${failures.length} failed job ${failures.length === 1 ? "run" : "runs"} in the window.`);
  return parts.join(" ");
}

export type Draft = Awaited<ReturnType<typeof buildDraft>>;

/** The draft of one incident of the window (index 0 = newest start), or of the window itself when it has none. */
export async function buildDraft(ctx: AppContext, query: DraftQuery) {
  const q = withDefaults(DRAFT_DEFAULTS, query);
  const now = ctx.clock.now();
  const w = resolveWindow(query, now, DRAFT_LIMITS.hours.fallback, DRAFT_LIMITS.hours.max);
  const src = {
    status: q.source === "all" || q.source === "status",
    errors: q.source === "all" || q.source === "errors",
    jobs: q.source === "all" || q.source === "jobs",
  };
  const listed = src.status
    ? await incidentsInWindow(ctx, { since: w.since, until: w.until, severity: q.severity === "all" ? undefined : q.severity, limit: q.limit, offset: 0 })
    : { total: 0, items: [] };
  if (q.index >= Math.max(listed.items.length, 1))
    throw new AppError("not_found", `No incident at index ${q.index}: the window lists ${listed.items.length} (index 0 = the newest)`, {
      details: { index: q.index, listed: listed.items.length },
    });
  const incident = listed.items[q.index] ?? null;
  const others = listed.items.filter((i) => i !== incident).map(brief);
  const v1 = q.template === "v1";

  const timeline: TimelineEntry[] = incident ? incidentEvents(incident) : [];
  if (q.context !== "none") {
    const range = q.context === "full" || !incident ? w : paddedSpan(incident, w.until, w);
    const around = { errors: src.errors, jobs: src.jobs, rowsLimit: q.top_errors_limit, others: q.context === "full" ? others : null };
    if (range.until > range.since) timeline.push(...(await surroundings(ctx, range, around)));
  }
  timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));

  // The top errors end where the incident ended (open: the window's end) and look top_errors_hours back.
  const anchor = Date.parse(incident?.ended_at ?? w.until);
  const topRange = { since: new Date(anchor - q.top_errors_hours * 3_600_000).toISOString(), until: new Date(anchor).toISOString() };
  const top = v1 && src.errors ? await topErrors(ctx, topRange, q.top_errors_limit, q.top_errors_top_n) : null;
  // One more than the list holds, so the summary can say the list was cut.
  const failuresRead = v1 && src.jobs ? await jobFailures(ctx, w, MAX_JOB_FAILURES + 1) : null;
  const failures = failuresRead?.slice(0, MAX_JOB_FAILURES) ?? null;

  const omitted: Partial<Record<SectionId, string>> = {};
  const sections: SectionId[] = ["summary", "impact", "timeline"];
  const add = (id: SectionId, ok: boolean, why: string) => (ok ? sections.push(id) : (omitted[id] = why));
  add("incidents", v1 && src.status, v1 ? `source=${q.source} reads no status incidents` : "template=minimal");
  add("top_errors", top !== null, v1 ? `source=${q.source} reads no request_log` : "template=minimal");
  add("job_failures", failures !== null, v1 ? `source=${q.source} reads no job_runs` : "template=minimal");
  add("preflight", v1, "template=minimal");
  sections.push("next_steps");

  return {
    template: q.template,
    generated_at: now.toISOString(),
    query: { ...q, since: query.since ?? null, until: query.until ?? null },
    window: { since: w.since, until: w.until, hours: w.hours, basis: w.basis },
    incidents_total: listed.total,
    incidents: v1 ? listed.items.map(brief) : [],
    incident,
    title: incident ? `Incident report: ${incident.title}` : `Incident report: ${w.since} to ${w.until}`,
    summary: summaryOf(incident, w, top, failuresRead),
    impact: {
      severity: incident?.severity ?? null,
      severity_label: severityLabel(incident?.severity ?? null),
      status: incident?.status ?? null,
      state: incident?.state ?? null,
      components: incident?.components ?? [],
      checks: incident ? Object.keys(incident.checks) : [],
      started_at: incident?.started_at ?? null,
      ended_at: incident?.ended_at ?? null,
      duration_minutes: incident?.duration_minutes ?? null,
    },
    timeline: timeline.slice(0, MAX_TIMELINE),
    timeline_truncated: timeline.length > MAX_TIMELINE,
    top_errors: top,
    job_failures: failures,
    preflight: v1 ? await preflightSection(ctx, q.preflight_day_offset) : null,
    next_steps: { placeholder: true as const, text: NEXT_STEPS_PLACEHOLDER },
    sections,
    omitted,
  };
}

/** The draft's preflight section: the guards' delta against the snapshot of `dayOffset` days ago (src/ops/preflight/service.ts). */
async function preflightSection(ctx: AppContext, dayOffset: number) {
  const d = await preflightDelta(ctx, dayOffset, await selectionOf(ctx, {}));
  const differing = d.counts.added + d.counts.removed + d.counts.changed;
  return {
    available: d.compare_available,
    day_offset: dayOffset,
    compare_day: d.compare_day,
    counts: d.counts,
    changes: d.changes.slice(0, MAX_PREFLIGHT_CHANGES).map((c) => ({ section: c.section, field: c.field, change: c.change, before: c.before, after: c.after })),
    changes_truncated: d.changes.length > MAX_PREFLIGHT_CHANGES,
    note: d.compare_available
      ? `${differing} preflight guard ${differing === 1 ? "field differs" : "fields differ"} from the snapshot of ${d.compare_day} (GET /admin/ops/preflight-guards/delta.json?day_offset=${dayOffset})`
      : `Not available: no preflight snapshot was taken on ${d.compare_day}, so there is nothing to compare`,
  };
}

/** Guard changes listed in a draft (the delta route has them all). */
const MAX_PREFLIGHT_CHANGES = 20;
