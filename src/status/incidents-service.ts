import type { AppContext } from "../context";
import { viewsOf, type IncidentView } from "./incidents/incidents";
import { incidentsInWindowRows, type WindowFilter } from "./store/incidents";

// Incidents of both sources read for the operators' exports and incident drafts (src/ops/incidents*.ts): a
// window, filters and a page. Read-only; the status domain keeps its tables to itself.

export type { IncidentView } from "./incidents/incidents";

/**
 * A page of incidents, newest start first, with their updates, and how many match in all. The table holds one
 * row per incident (a few a week), so the count is cheap; both statements stay within the started_at index.
 */
export async function incidentsInWindow(ctx: AppContext, f: WindowFilter): Promise<{ total: number; items: IncidentView[] }> {
  const { rows, total } = await incidentsInWindowRows(ctx.store, f);
  return { total, items: await viewsOf(ctx.store, rows, ctx.clock.now()) };
}
