import type { Param, Queryable } from "../../db/port";
import { pageOf, type PageRequest } from "../../http/pagination";

/** A literal union: the table name interpolated below is never a request's. */
type ListedTable = "status_subscribers" | "status_incidents" | "status_maintenance_windows";

/** The operators' lists: a keyset page of `table` by id, newest first; `filter` adds ` AND …` conditions with their parameters. */
export async function newestFirst<R extends { id: number }>(q: Queryable, table: ListedTable, page: PageRequest, filter = "", params: Param[] = []) {
  const rows = await q.all<R>(`SELECT * FROM ${table} WHERE (CAST(? AS bigint) IS NULL OR id < ?)${filter} ORDER BY id DESC LIMIT ? OFFSET ?`, [
    page.after,
    page.after,
    ...params,
    page.limit + 1,
    page.offset,
  ]);
  return pageOf(rows, page, (r) => r.id);
}
