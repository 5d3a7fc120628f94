import { countOf, type Queryable, type Statement } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerGrids } from "../tables";

// messenger_grids: the only SQL that touches it but the window search's probes (id-search.ts). Written inside a game
// action's transaction, after the player's row lock, so one player's grid changes one request at a time.

export type GridRow = Omit<RowOf<typeof messengerGrids>, "status"> & { status: "active" | "completed" | "abandoned" };

export const activeGrid = (q: Queryable, telegramUserId: number) =>
  q.get<GridRow>("SELECT * FROM messenger_grids WHERE telegram_user_id = ? AND status = 'active' ORDER BY id DESC LIMIT 1", [telegramUserId]);

export const lastEndedGrid = (q: Queryable, telegramUserId: number) =>
  q.get<GridRow>("SELECT * FROM messenger_grids WHERE telegram_user_id = ? AND status <> 'active' ORDER BY id DESC LIMIT 1", [telegramUserId]);

export async function endGrid(t: Queryable, id: number, status: "abandoned", at: string): Promise<void> {
  await t.run("UPDATE messenger_grids SET status = ?, ended_at = ? WHERE id = ?", [status, at, id]);
}

export async function insertGrid(
  t: Queryable,
  g: Pick<GridRow, "telegram_user_id" | "server_seed" | "server_seed_hash" | "client_seed" | "layout" | "created_at" | "committed_at">,
): Promise<GridRow> {
  return (await t.get<GridRow>(
    `INSERT INTO messenger_grids (telegram_user_id, server_seed, server_seed_hash, client_seed, layout, revealed, status, created_at, committed_at)
     VALUES (?, ?, ?, ?, ?, '[]', 'active', ?, ?) RETURNING *`,
    [g.telegram_user_id, g.server_seed, g.server_seed_hash, g.client_seed, g.layout, g.created_at, g.committed_at],
  ))!;
}

/** A grid's revealed cells and status, as a statement the ledger sends (ActionEffect.riders, src/messenger/ledger.ts). */
export const setRevealedStatement = (id: number, revealed: string, status: GridRow["status"], endedAt: string | null): Statement => ({
  sql: "UPDATE messenger_grids SET revealed = ?, status = ?, ended_at = ? WHERE id = ?",
  params: [revealed, status, endedAt, id],
});

export const countGridsOf = (q: Queryable, telegramUserId: number) =>
  countOf(q, "SELECT COUNT(*) AS n FROM messenger_grids WHERE telegram_user_id = ?", [telegramUserId]);

/**
 * Grids of an id range per status, with their revealed cells summed. `revealed` is a JSON array of cell numbers
 * as JSON.stringify writes it ("[]", "[3,7]"): its cells are its commas plus one, counted with length() and
 * replace(), which both engines have (json_array_length is SQLite's alone).
 */
export const gridCounts = (q: Queryable, fromId: number, toId: number) =>
  q.all<Pick<GridRow, "status"> & { n: number; reveals: number }>(
    `SELECT status, COUNT(*) AS n,
       COALESCE(SUM(CASE WHEN revealed = '[]' THEN 0 ELSE length(revealed) - length(replace(revealed, ',', '')) + 1 END), 0) AS reveals
     FROM messenger_grids WHERE id >= ? AND id < ? GROUP BY status`,
    [fromId, toId],
  );
