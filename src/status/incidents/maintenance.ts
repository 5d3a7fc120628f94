import { zonedInstantMs } from "../../clock";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import type { AppContext } from "../../context";
import { found, ValidationError } from "../../http/errors/errors";
import type { PageRequest } from "../../http/pagination";
import { auditOperator } from "../../auth/audit";
import { schemaView } from "../../http/schema-view";
import { MaintenanceWindow } from "../model";
import { deleteWindow, insertWindow, windowPage, windowsOverlappingRows, type WindowRow } from "../store/maintenance";

// Admin-defined maintenance windows. Time inside one is left out of uptime by default (policy
// exclude_maintenance_default; ?exclude_maintenance= overrides per request). A window may not start more than
// MAX_BACKDATE_MINUTES in the past: maintenance declared after the fact would let an outage be rewritten
// out of the published uptime. Every create and delete writes an admin_audit row in the same transaction.

export const MAX_BACKDATE_MINUTES = 5;
export const MAX_WINDOW_DAYS = 14;

export interface Interval {
  start: number;
  end: number;
}

export const publicWindowView = (r: WindowRow, nowIso: string) =>
  schemaView(MaintenanceWindow, r, { phase: r.starts_at > nowIso ? "scheduled" : r.ends_at > nowIso ? "active" : "completed" });

const adminWindowView = (r: WindowRow, nowIso: string) => ({ ...publicWindowView(r, nowIso), created_by: r.created_by, created_at: r.created_at });

/** An ISO 8601 time with its zone, as UTC ISO text; a 400 naming the field otherwise. */
export function isoOrThrow(field: string, v: string): string {
  const ms = zonedInstantMs(v);
  if (Number.isNaN(ms))
    throw new ValidationError(`${field} must be an ISO 8601 UTC time such as 2026-01-01T00:00:00Z (a date that exists, with its zone)`, [
      { field, problem: "must be an ISO 8601 time with a zone" },
    ]);
  return new Date(ms).toISOString();
}

export async function listMaintenance(ctx: AppContext, page: PageRequest) {
  const p = await windowPage(ctx.store, page);
  const now = ctx.clock.now().toISOString();
  return { ...p, items: p.items.map((r) => adminWindowView(r, now)) };
}

export async function createMaintenance(
  ctx: AppContext,
  admin: AdminRequest,
  input: { starts_at: string; ends_at: string; title: string; description?: string },
) {
  const starts = isoOrThrow("starts_at", input.starts_at);
  const ends = isoOrThrow("ends_at", input.ends_at);
  const now = ctx.clock.now();
  if (ends <= starts) throw new ValidationError("ends_at must be after starts_at", [{ field: "ends_at", problem: "must be after starts_at" }]);
  if (Date.parse(starts) < now.getTime() - MAX_BACKDATE_MINUTES * 60_000) {
    throw new ValidationError(`starts_at may be at most ${MAX_BACKDATE_MINUTES} minutes in the past: uptime history is not rewritten after the fact`, [
      { field: "starts_at", problem: `must be at most ${MAX_BACKDATE_MINUTES} minutes in the past` },
    ]);
  }
  if (Date.parse(ends) - Date.parse(starts) > MAX_WINDOW_DAYS * 86_400_000) {
    throw new ValidationError(`a maintenance window lasts at most ${MAX_WINDOW_DAYS} days`, [
      { field: "ends_at", problem: `must be within ${MAX_WINDOW_DAYS} days of starts_at` },
    ]);
  }
  const nowIso = now.toISOString();
  return ctx.store.tx(async (t) => {
    const row = await insertWindow(t, {
      starts_at: starts,
      ends_at: ends,
      title: input.title,
      description: input.description ?? null,
      created_by: actorLabel(admin.actor),
      created_at: nowIso,
    });
    await auditOperator(t, admin, nowIso, "status.maintenance.create", String(row.id), { starts_at: starts, ends_at: ends, title: input.title });
    return adminWindowView(row, nowIso);
  });
}

export async function deleteMaintenance(ctx: AppContext, admin: AdminRequest, id: number) {
  const nowIso = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    const row = found(await deleteWindow(t, id), "maintenance window", id);
    // The audit row keeps the whole window: the table forgets it, the record does not.
    await auditOperator(t, admin, nowIso, "status.maintenance.delete", String(id), { ...row });
    return adminWindowView(row, nowIso);
  });
}

export const intervalsOf = (rows: WindowRow[]): Interval[] => rows.map((r) => ({ start: Date.parse(r.starts_at), end: Date.parse(r.ends_at) }));

/** What the public sees: the window in progress and those starting within the next 14 days. */
export async function maintenanceSummary(ctx: AppContext) {
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const horizon = new Date(now.getTime() + 14 * 86_400_000).toISOString();
  const rows = await windowsOverlappingRows(ctx.store, nowIso, horizon);
  const views = rows.map((r) => publicWindowView(r, nowIso));
  return { active: views.some((v) => v.phase === "active"), windows: views };
}
