import { inOrder, lastStatements } from "../../db/in-order";
import type { Queryable, Statement } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerLedger } from "../tables";
import { type BalanceMove, type BalancesAfter, moveBalances, moveFromStatement } from "./players";

// messenger_ledger: the only SQL that touches it. A request id is claimed FIRST — the row is inserted (with its
// deltas still zero) under the unique index (telegram_user_id, request_id) with ON CONFLICT DO NOTHING — and only
// the transaction that inserted it applies the action; a second one, on any instance, gets no row back (on
// PostgreSQL after waiting for the first to commit) and replays the stored answer.

type LedgerRow = RowOf<typeof messengerLedger>;

export type PriorAction = Pick<LedgerRow, "id" | "fingerprint" | "result">;

export interface Claim {
  telegramUserId: number;
  requestId: string;
  action: string;
  fingerprint: string;
  gameKey: string | null;
  at: string;
}

/** The ledger row's id when this transaction claimed the request id; null when it was claimed before. */
export async function claimRequest(t: Queryable, c: Claim): Promise<number | null> {
  const row = await t.get<Pick<LedgerRow, "id">>(
    `INSERT INTO messenger_ledger (telegram_user_id, request_id, action, fingerprint, free_spin_delta, missile_delta, points_delta,
       free_spin_after, missile_after, points_after, game_key, result, created_at)
     VALUES (?, ?, ?, ?, 0, 0, 0, 0, 0, 0, ?, '{}', ?)
     ON CONFLICT (telegram_user_id, request_id) DO NOTHING RETURNING id`,
    [c.telegramUserId, c.requestId, c.action, c.fingerprint, c.gameKey, c.at],
  );
  return row?.id ?? null;
}

export const priorAction = (q: Queryable, telegramUserId: number, requestId: string) =>
  q.get<PriorAction>("SELECT id, fingerprint, result FROM messenger_ledger WHERE telegram_user_id = ? AND request_id = ?", [telegramUserId, requestId]);

export interface Outcome {
  deltas: { freeSpins: number; missiles: number; points: number };
  after: { free_spin_balance: number; missile_balance: number; points_balance: number };
  result: string;
}

/** Fills in the claimed row: the deltas, the balances they left and the stored answer. */
export async function completeClaim(t: Queryable, id: number, o: Outcome): Promise<void> {
  await t.run(
    `UPDATE messenger_ledger SET free_spin_delta = ?, missile_delta = ?, points_delta = ?, free_spin_after = ?, missile_after = ?, points_after = ?, result = ?
     WHERE id = ?`,
    [o.deltas.freeSpins, o.deltas.missiles, o.deltas.points, o.after.free_spin_balance, o.after.missile_balance, o.after.points_balance, o.result, id],
  );
}

/** What a game action leaves, for settleAction to write however the engine writes it best. */
export interface Settlement<R> {
  /** The claimed ledger row (claimRequest). */
  ledgerId: number;
  telegramUserId: number;
  /** The balances the transaction's row lock read, and the move from them (deltas, and the points earned). */
  from: BalancesAfter;
  move: BalanceMove;
  /** The answer, known before anything of the move is sent. */
  result: R;
  /** The action's own writes that nothing waits for (ActionEffect.riders in src/messenger/ledger.ts). */
  riders?: readonly Statement[];
}

/**
 * Moves the player's balances, sends the action's riders and fills in the claimed row with the deltas, the balances
 * they left and the stored answer (answer + balances), as the last statements of the transaction; answers that
 * stored answer, or null when the balances did not move (they were not what the lock read). How it is sent is the
 * engine's: on PostgreSQL one statement (moveAndCompletePostgres: one round trip and one statement fewer); on SQLite
 * the riders and the move, then the completion.
 */
export async function settleAction<R extends object>(t: Queryable, s: Settlement<R>): Promise<(R & { balances: BalancesAfter }) | null> {
  const deltas = { freeSpins: s.move.freeSpins, missiles: s.move.missiles, points: s.move.points };
  if (t.dialect === "postgres") {
    // The row lock fixes the balances the move leaves, so they are known before it is sent.
    const balances = {
      free_spin_balance: s.from.free_spin_balance + deltas.freeSpins,
      missile_balance: s.from.missile_balance + deltas.missiles,
      points_balance: s.from.points_balance + deltas.points,
    };
    const stored = { ...s.result, balances };
    const move = moveFromStatement(s.telegramUserId, s.move, s.from);
    await lastStatements(t, moveAndCompletePostgres(t, s.ledgerId, move, { deltas, result: JSON.stringify(stored) }, s.riders));
    return stored;
  }
  const ridden = inOrder(...(s.riders ?? []).map((r) => t.run(r.sql, r.params)));
  const [, moved] = await inOrder(ridden, moveBalances(t, s.telegramUserId, s.move));
  if (!moved) return null;
  const balances = { free_spin_balance: moved.free_spin_balance, missile_balance: moved.missile_balance, points_balance: moved.points_balance };
  const stored = { ...s.result, balances };
  // Inside a caller's transaction (a mission's reward, a promo) it is answered before that one's COMMIT all the same.
  await lastStatements(t, completeClaim(t, s.ledgerId, { deltas, after: balances, result: JSON.stringify(stored) }));
  return stored;
}

/**
 * PostgreSQL only (data-modifying CTEs are not SQLite's): the move from exactly the balances the row lock read
 * (moveFromStatement) and the claimed row filled in with what they became, in ONE statement sent with the last ones.
 * If the balances were not those, nothing moves, the after-columns get NULL and their NOT NULL rolls the transaction
 * back rather than record a move that did not happen. `riders` are members of its WITH, each run once; they must
 * write other rows than the player's (one statement changes a row once) and not depend on each other.
 */
export async function moveAndCompletePostgres(
  t: Queryable,
  id: number,
  move: Statement,
  o: Pick<Outcome, "deltas" | "result">,
  riders: readonly Statement[] = [],
): Promise<void> {
  const d = o.deltas;
  const members = riders.map((r, i) => `rider${i} AS (${r.sql}),`).join(" ");
  await t.run(
    `WITH ${members} moved AS (${move.sql})
     UPDATE messenger_ledger SET free_spin_delta = ?, missile_delta = ?, points_delta = ?, free_spin_after = (SELECT free_spin_balance FROM moved),
       missile_after = (SELECT missile_balance FROM moved), points_after = (SELECT points_balance FROM moved), result = ?
     WHERE id = ?`,
    [...riders.flatMap((r) => r.params), ...move.params, d.freeSpins, d.missiles, d.points, o.result, id],
  );
}

const ENTRY_COLUMNS = [
  "id",
  "request_id",
  "action",
  "game_key",
  "free_spin_delta",
  "missile_delta",
  "points_delta",
  "free_spin_after",
  "missile_after",
  "points_after",
  "created_at",
] as const;
export type LedgerEntry = Pick<LedgerRow, (typeof ENTRY_COLUMNS)[number]>;
const LEDGER_PAGE = `SELECT ${ENTRY_COLUMNS.join(", ")} FROM messenger_ledger WHERE telegram_user_id = ? AND id < ? ORDER BY id DESC LIMIT ? OFFSET ?`;

/**
 * The player's entries, newest first, below `beforeId` (a keyset cursor; MAX_SAFE_INTEGER for the first page):
 * messenger_ledger_player_idx (telegram_user_id, id) serves both.
 */
export const ledgerPage = (q: Queryable, telegramUserId: number, beforeId: number, limit: number, offset: number) =>
  q.all<LedgerEntry>(LEDGER_PAGE, [telegramUserId, beforeId, limit, offset]);

const UNFOLDED_COLUMNS = ["id", "telegram_user_id", "action", "game_key", "free_spin_delta", "missile_delta", "points_delta", "created_at"] as const;
export type UnfoldedRow = Pick<LedgerRow, (typeof UNFOLDED_COLUMNS)[number]>;

/**
 * Marks up to `limit` rows not yet counted as folded and returns them, in the fold's transaction. The outer
 * `folded = 0` is checked again on the row as it is when the UPDATE reaches it (PostgreSQL re-evaluates it after a
 * wait), so a row is marked — and counted — by exactly one fold. A row still uncommitted is not seen at all and
 * waits for a later fold: nothing reads "ids after N", so ids committing out of order lose nothing.
 */
export const claimUnfolded = (t: Queryable, limit: number) =>
  t.all<UnfoldedRow>(
    `UPDATE messenger_ledger SET folded = 1
     WHERE id IN (SELECT id FROM messenger_ledger WHERE folded = 0 ORDER BY id LIMIT ?) AND folded = 0
     RETURNING ${UNFOLDED_COLUMNS.join(", ")}`,
    [limit],
  );

/** Whether any row waits to be folded (messenger_ledger_unfolded_idx holds only those). */
export async function anyUnfolded(q: Queryable): Promise<boolean> {
  return (await q.get("SELECT id FROM messenger_ledger WHERE folded = 0 LIMIT 1")) !== null;
}
