import type { AppContext } from "../context";
import { viewsOf, type IncidentRow, type IncidentView } from "./incidents/incidents";

// Incidents of both sources read for the operators' exports and incident drafts (src/ops/incidents*.ts): a
// window, filters and a page. Read-only; the status domain keeps its tables to itself.

export type { IncidentView, IncidentUpdateView } from "./incidents/incidents";

export interface IncidentWindowFilter {
  /** Incidents that overlap [since, until): started before until, and still open or ended at/after since. */
  since: string | null;
  until: string | null;
  /** The peak severity, exactly. */
  severity?: "warn" | "bad";
  status?: "open" | "resolved";
  limit: number;
  offset: number;
}

const WHERE = `(?1 IS NULL OR ended_at IS NULL OR ended_at >= ?1) AND (?2 IS NULL OR started_at < ?2)
  AND (?3 IS NULL OR severity = ?3)
  AND (?4 IS NULL OR (?4 = 'open' AND ended_at IS NULL) OR (?4 = 'resolved' AND ended_at IS NOT NULL))`;

/**
 * A page of incidents, newest start first, with their updates, and how many match in all. The table holds one
 * row per incident (a few a week), so the count is cheap; both statements stay within the started_at index.
 */
export function incidentsInWindow(ctx: AppContext, f: IncidentWindowFilter): { total: number; items: IncidentView[] } {
  const sqlite = ctx.db.sqlite;
  const args = [f.since, f.until, f.severity ?? null, f.status ?? null] as const;
  const rows = sqlite
    .query(`SELECT * FROM status_incidents WHERE ${WHERE} ORDER BY started_at DESC, id DESC LIMIT ?5 OFFSET ?6`)
    .all(...args, f.limit, f.offset) as IncidentRow[];
  const { total } = sqlite.query(`SELECT COUNT(*) AS total FROM status_incidents WHERE ${WHERE}`).get(...args) as { total: number };
  return { total, items: viewsOf(sqlite, rows, ctx.clock.now()) };
}
