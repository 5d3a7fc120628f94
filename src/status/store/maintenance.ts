import type { Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { PageRequest } from "../../http/pagination";
import { newestFirst } from "./newest-first";
import type { statusMaintenanceWindows } from "../tables";

// status_maintenance_windows: admin-defined windows, left out of uptime by default.

export type WindowRow = RowOf<typeof statusMaintenanceWindows>;

export const windowPage = (q: Queryable, page: PageRequest) => newestFirst<WindowRow>(q, "status_maintenance_windows", page);

export async function insertWindow(t: Queryable, w: Omit<WindowRow, "id">): Promise<WindowRow> {
  return (await t.get<WindowRow>(
    "INSERT INTO status_maintenance_windows (starts_at, ends_at, title, description, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
    [w.starts_at, w.ends_at, w.title, w.description, w.created_by, w.created_at],
  ))!;
}

/** Deletes a window and answers it as it was (null when there was none). */
export function deleteWindow(t: Queryable, id: number): Promise<WindowRow | null> {
  return t.get<WindowRow>("DELETE FROM status_maintenance_windows WHERE id = ? RETURNING *", [id]);
}

/** Windows overlapping [startIso, endIso), oldest first (served by status_maintenance_starts_idx). */
export function windowsOverlappingRows(q: Queryable, startIso: string, endIso: string): Promise<WindowRow[]> {
  return q.all<WindowRow>("SELECT * FROM status_maintenance_windows WHERE starts_at < ? AND ends_at > ? ORDER BY starts_at, id", [endIso, startIso]);
}
