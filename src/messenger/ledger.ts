// The game ledger: every change of free_spin_balance, missile_balance or points goes through applyAction, which
// in ONE synchronous SQLite transaction (1) answers a repeated client request id with the stored answer,
// (2) runs the action's game-state changes, (3) refuses a balance below zero, (4) updates the balances and
// (5) appends the ledger row. A thrown AppError rolls all of it back.
import { createHash } from "node:crypto";
import type { Database } from "bun:sqlite";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { type balancesOf, getPlayerOrCreate, type PlayerRow } from "./players";

export interface Deltas {
  freeSpins: number;
  missiles: number;
  points: number;
}

export interface ActionInput {
  telegramUserId: number;
  requestId: string;
  /** e.g. "spin_wheel.play", "items.purchase" — part of the fingerprint. */
  action: string;
  /** The inputs that define the action: the same request id with other inputs is request_id_reused. */
  inputs: unknown;
  gameKey: string | null;
}

export interface ActionEffect<R> {
  deltas: Deltas;
  /** Points earned (counted on the leaderboard); spending never lowers it. */
  earnedPoints?: number;
  /** The answer, stored with the ledger row and returned again for a replay. balances are added here. */
  result: R;
}

export type Balances = ReturnType<typeof balancesOf>;
export type Applied<R> = R & { balances: Balances; replayed: boolean; ledger_entry_id: number };

const fingerprintOf = (action: string, inputs: unknown) =>
  createHash("sha256")
    .update(JSON.stringify([action, inputs]))
    .digest("hex");

/** Thrown inside the transaction when a balance would go below zero: names the balance, what it holds and needs. */
export function insufficient(balance: keyof Balances, has: number, required: number): AppError {
  return new AppError(
    "game_balance_insufficient",
    `Not enough ${balance.replace("_balance", "").replace("_", " ")}: the player has ${has}, this needs ${required}`,
    {
      details: { balance, has, required },
    },
  );
}

export function applyAction<R extends object>(
  ctx: AppContext,
  input: ActionInput,
  effect: (player: PlayerRow, db: Database, now: string) => ActionEffect<R>,
): Applied<R> {
  const db = ctx.db.sqlite;
  const fingerprint = fingerprintOf(input.action, input.inputs);
  const run = db.transaction((): Applied<R> => {
    const prior = db
      .query<{ id: number; fingerprint: string; result: string }, [number, string]>(
        "SELECT id, fingerprint, result FROM messenger_ledger WHERE telegram_user_id = ? AND request_id = ?",
      )
      .get(input.telegramUserId, input.requestId);
    if (prior) {
      if (prior.fingerprint !== fingerprint) {
        throw new AppError("request_id_reused", `request_id ${JSON.stringify(input.requestId)} was already used for another action or payload`);
      }
      return { ...(JSON.parse(prior.result) as R & { balances: Balances }), replayed: true, ledger_entry_id: prior.id };
    }
    const now = ctx.clock.now().toISOString();
    const player = getPlayerOrCreate(db, input.telegramUserId, now);
    const out = effect(player, db, now);
    const after = {
      free_spin_balance: player.free_spin_balance + out.deltas.freeSpins,
      missile_balance: player.missile_balance + out.deltas.missiles,
      points_balance: player.points_balance + out.deltas.points,
    };
    for (const [name, value] of Object.entries(after) as Array<[keyof Balances, number]>) {
      if (!Number.isSafeInteger(value)) throw new AppError("invalid_payload", `the ${name} would leave the exact integer range`);
      if (value < 0) throw insufficient(name, player[name], player[name] - value);
    }
    db.query(
      "UPDATE messenger_players SET free_spin_balance = ?2, missile_balance = ?3, points_balance = ?4, points_earned = points_earned + ?5 WHERE telegram_user_id = ?1",
    ).run(input.telegramUserId, after.free_spin_balance, after.missile_balance, after.points_balance, Math.max(0, out.earnedPoints ?? 0));
    const stored = { ...out.result, balances: after };
    const row = db
      .query<{ id: number }, Array<string | number | null>>(
        `INSERT INTO messenger_ledger (telegram_user_id, request_id, action, fingerprint, free_spin_delta, missile_delta, points_delta,
           free_spin_after, missile_after, points_after, game_key, result, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      )
      .get(
        input.telegramUserId,
        input.requestId,
        input.action,
        fingerprint,
        out.deltas.freeSpins,
        out.deltas.missiles,
        out.deltas.points,
        after.free_spin_balance,
        after.missile_balance,
        after.points_balance,
        input.gameKey,
        JSON.stringify(stored),
        now,
      )!;
    return { ...stored, replayed: false, ledger_entry_id: row.id };
  });
  // IMMEDIATE: take the write lock before reading the balances, so another process cannot interleave.
  return run.immediate();
}

/** The player's ledger, newest first (bounded). */
export function ledgerOf(db: Database, telegramUserId: number, limit: number) {
  return db
    .query<Record<string, unknown>, [number, number]>(
      `SELECT id, request_id, action, game_key, free_spin_delta, missile_delta, points_delta, free_spin_after, missile_after, points_after, created_at
       FROM messenger_ledger WHERE telegram_user_id = ? ORDER BY id DESC LIMIT ?`,
    )
    .all(telegramUserId, limit);
}
