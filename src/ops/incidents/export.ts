import type { AppContext } from "../../context";
import { AppError, queryProblem } from "../../http/errors/errors";
import { columnTable } from "../../http/formats/csv";
import { listAnswer, totalPage } from "../../http/pagination";
import { getIncidentOrThrow } from "../../status/service";
import { incidentsInWindow, type IncidentView } from "../../status/incidents-service";
import { DRAFT_LIMITS, incidentEvents, paddedSpan, surroundings } from "./draft";
import { jobFailures, topErrors } from "./sources";
import { instantOrThrow } from "./window";

// The operators' incident list, its CSV export with a JSON twin, and one incident with everything around it.

export const LIST_LIMITS = { limit: { fallback: 50, max: 200 }, exportLimit: { fallback: 1000, max: 1000 }, index: { max: 999 } } as const;

export interface ListQuery {
  limit?: number;
  offset?: number;
  status?: "open" | "resolved";
  severity?: "warn" | "bad";
  since?: string;
}

async function page(ctx: AppContext, q: ListQuery, fallbackLimit: number) {
  const limit = q.limit ?? fallbackLimit;
  const offset = q.offset ?? 0;
  const since = q.since === undefined ? null : new Date(instantOrThrow("since", q.since)).toISOString();
  const r = await incidentsInWindow(ctx, { since, until: null, severity: q.severity, status: q.status, limit, offset });
  return {
    items: r.items,
    total: r.total,
    ...totalPage(r.items, r.total, limit, offset),
    filters: { status: q.status ?? null, severity: q.severity ?? null, since },
  };
}

export async function listIncidentsPage(ctx: AppContext, q: ListQuery) {
  const p = await page(ctx, q, LIST_LIMITS.limit.fallback);
  return listAnswer("incidents", p, p.filters, { total: p.total });
}

const newest = (i: IncidentView) => i.updates[0] ?? null;
const oldest = (i: IncidentView) => i.updates[i.updates.length - 1] ?? null;

/** One flat row per incident: lists joined with ";", the updates summed up by their count, first and last. */
export const { columns: EXPORT_COLUMNS, rowOf } = columnTable({
  id: (i: IncidentView) => i.id,
  source: (i: IncidentView) => i.source,
  title: (i: IncidentView) => i.title,
  severity: (i: IncidentView) => i.severity,
  current_severity: (i: IncidentView) => i.current_severity,
  status: (i: IncidentView) => i.status,
  state: (i: IncidentView) => i.state,
  started_at: (i: IncidentView) => i.started_at,
  ended_at: (i: IncidentView) => i.ended_at,
  duration_minutes: (i: IncidentView) => i.duration_minutes,
  components: (i: IncidentView) => i.components.join(";"),
  checks: (i: IncidentView) => Object.keys(i.checks).join(";"),
  update_count: (i: IncidentView) => i.updates.length,
  first_update_at: (i: IncidentView) => oldest(i)?.created_at ?? null,
  last_update_at: (i: IncidentView) => newest(i)?.created_at ?? null,
  last_update_state: (i: IncidentView) => newest(i)?.state ?? null,
  last_update_message: (i: IncidentView) => newest(i)?.message ?? null,
});

/** GET /admin/ops/incidents/export.json: the rows of the CSV, typed (null where the CSV cell is empty). */
export async function exportRows(ctx: AppContext, q: ListQuery) {
  const p = await page(ctx, q, LIST_LIMITS.exportLimit.fallback);
  return listAnswer("rows", { ...p, items: p.items.map(rowOf) }, p.filters, { total: p.total, columns: [...EXPORT_COLUMNS] });
}

export const exportFilename = (ctx: AppContext) => `herald-incidents-${ctx.clock.now().toISOString().slice(0, 10)}`;

export interface DetailQuery {
  id?: number;
  index?: number;
}

export async function incidentDetail(ctx: AppContext, q: DetailQuery) {
  if (q.id !== undefined && q.index !== undefined) throw queryProblem("index", "must not be given with id: give one of them");
  const index = q.index ?? 0;
  const incident =
    q.id !== undefined ? await getIncidentOrThrow(ctx, q.id) : (await incidentsInWindow(ctx, { since: null, until: null, limit: 1, offset: index })).items[0];
  if (!incident) throw new AppError("not_found", `No incident at index ${index} (index 0 = the newest)`, { details: { index } });
  const now = ctx.clock.now().toISOString();
  // The incident's own span and 15 minutes each side, never past now: what led to it and what followed.
  const range = paddedSpan(incident, now, { since: "0000", until: now });
  const around = await surroundings(ctx, range, { errors: true, jobs: true, rowsLimit: DRAFT_LIMITS.topErrorsLimit.fallback, others: null });
  const timeline = [...incidentEvents(incident), ...around].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return {
    incident,
    window: range,
    timeline,
    related: {
      errors: await topErrors(ctx, range, DRAFT_LIMITS.topErrorsLimit.fallback, DRAFT_LIMITS.topErrorsTopN.fallback),
      job_failures: await jobFailures(ctx, range),
    },
  };
}
