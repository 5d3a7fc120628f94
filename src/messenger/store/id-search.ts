import type { Queryable } from "../../db/port";

// The probes of the operators' window search over messenger_spins and messenger_grids (src/messenger/admin/game-stats.ts
// says why by id): the same two statements on either table.

/** A literal union: the table name interpolated below is never a request's. */
export type IdTable = "messenger_spins" | "messenger_grids";

/** The min and max id (the search's bounds); nulls when the table is empty. */
export const idBounds = (q: Queryable, table: IdTable) =>
  q.get<{ lo: number | null; hi: number | null }>(
    // Two scalar subqueries: each is one step down the primary key, where one MIN/MAX pair reads every row.
    `SELECT (SELECT MIN(id) FROM ${table}) AS lo, (SELECT MAX(id) FROM ${table}) AS hi`,
  );

export const createdAtFrom = (q: Queryable, table: IdTable, id: number) =>
  q.get<{ created_at: string }>(`SELECT created_at FROM ${table} WHERE id >= ? ORDER BY id LIMIT 1`, [id]);
