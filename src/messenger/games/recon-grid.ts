// The recon grid: a 5×5 board whose hidden layout is a provably-fair shuffle of GRID_CELLS, drawn from the
// grid's own server seed and the player's client seed with nonce 0. The server seed is the one committed to
// (next_server_seed_hash) in an earlier answer — status, or the previous start — never one made by the start that
// takes the client seed (seed-commitments.ts). Each reveal costs one missile and credits the cell's reward; when
// every prize is found (or the grid is abandoned) the seed is shown.
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { GRID_CELLS, GRID_PRIZES, GRID_SIZE } from "../catalog";
import { gamesConfig } from "../config/cache";
import { requireCatalogAccess } from "../config/campaigns";
import { bump } from "../counters";
import { applyAction, creditOf } from "../ledger";
import { balancesOf, lockedPlayer } from "../players";
import { activeGrid, endGrid, type GridRow, insertGrid, lastEndedGrid, setRevealedStatement } from "../store/grids";
import { newClientSeed, shuffleFair } from "./fair";
import { observedStatement, observeEvent } from "./mission-sources";
import { ensureCommitment, nextView, takeCommitmentOrThrow } from "./seed-commitments";

/** What a player may see of a grid: revealed cells only, and the seed and layout once it has ended. */
export function gridView(g: GridRow) {
  const layout = JSON.parse(g.layout) as number[];
  const revealed = JSON.parse(g.revealed) as number[];
  const prizesFound = revealed.filter((c) => layout[c]! < GRID_PRIZES.length).length;
  const ended = g.status !== "active";
  return {
    grid_id: g.id,
    status: g.status,
    cells_total: GRID_SIZE,
    prizes_total: GRID_PRIZES.length,
    prizes_found: prizesFound,
    revealed_cells: revealed.map((cell) => ({ cell, reward: GRID_CELLS[layout[cell]!]! })),
    fairness: {
      server_seed_hash: g.server_seed_hash,
      client_seed: g.client_seed,
      nonce: 0,
      server_seed: ended ? g.server_seed : null,
      layout: ended ? layout : null,
      committed_at: g.committed_at ?? g.created_at,
      client_seed_set_at: g.created_at,
    },
    created_at: g.created_at,
    ended_at: g.ended_at,
  };
}

const STATUS_ROUTE = "POST /api/messenger/games/recon-grid/status";

export async function gridStatus(ctx: AppContext, telegramUserId: number) {
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    const player = await lockedPlayer(t, telegramUserId, now);
    const active = await activeGrid(t, telegramUserId);
    const last = await lastEndedGrid(t, telegramUserId);
    const next = await ensureCommitment(ctx, t, telegramUserId, "recon_grid", now);
    return { active_grid: active ? gridView(active) : null, last_grid: last ? gridView(last) : null, balances: balancesOf(player), ...nextView(next) };
  });
}

export async function startGrid(
  ctx: AppContext,
  telegramUserId: number,
  input: { client_seed?: string; abandon_active?: boolean; next_server_seed_hash?: string },
) {
  const config = await gamesConfig(ctx);
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    // Catalog campaigns gate starting a grid; a grid already started can be finished after its campaign ends.
    requireCatalogAccess(config, await lockedPlayer(t, telegramUserId, now), "recon_grid", now);
    const active = await activeGrid(t, telegramUserId);
    let abandoned: ReturnType<typeof gridView> | null = null;
    if (active) {
      if (!input.abandon_active) {
        throw new AppError(
          "game_state_conflict",
          `Grid ${active.id} is still active: reveal its cells, or start with abandon_active=true to end it (its seed is then revealed)`,
          {
            details: { active_grid_id: active.id },
          },
        );
      }
      await endGrid(t, active.id, "abandoned", now);
      abandoned = gridView({ ...active, status: "abandoned", ended_at: now });
    }
    const committed = await takeCommitmentOrThrow(t, telegramUserId, "recon_grid", STATUS_ROUTE, input.next_server_seed_hash);
    const clientSeed = input.client_seed ?? newClientSeed(ctx.rng);
    const layout = shuffleFair([...GRID_CELLS.keys()], committed.server_seed, clientSeed, 0);
    const row = await insertGrid(t, {
      telegram_user_id: telegramUserId,
      server_seed: committed.server_seed,
      server_seed_hash: committed.server_seed_hash,
      client_seed: clientSeed,
      layout: JSON.stringify(layout),
      created_at: now,
      committed_at: committed.committed_at,
    });
    const next = await ensureCommitment(ctx, t, telegramUserId, "recon_grid", now);
    await observeEvent(t, telegramUserId, "recon_grid.start");
    // Last: the counter's row is every player's (see ActionEffect.count).
    await bump(t, ctx.clock, "plays", "recon_grid");
    return { grid: gridView(row), abandoned_grid: abandoned, ...nextView(next) };
  });
}

export function revealCell(ctx: AppContext, telegramUserId: number, input: { request_id: string; grid_id: number; cell: number }) {
  return applyAction(
    ctx,
    {
      telegramUserId,
      requestId: input.request_id,
      action: "recon_grid.reveal",
      inputs: { grid_id: input.grid_id, cell: input.cell },
      gameKey: "recon_grid",
      sharing: "player rows",
    },
    async (player, { t, now }) => {
      const grid = await activeGrid(t, telegramUserId);
      if (!grid || grid.id !== input.grid_id) {
        throw new AppError("game_state_conflict", `Grid ${input.grid_id} is not your active grid; read POST /api/messenger/games/recon-grid/status`, {
          details: { active_grid_id: grid?.id ?? null },
        });
      }
      const revealed = JSON.parse(grid.revealed) as number[];
      if (revealed.includes(input.cell)) throw new AppError("game_state_conflict", `Cell ${input.cell} is already revealed`, { details: { cell: input.cell } });
      if (player.missile_balance < 1) {
        throw new AppError(
          "game_balance_insufficient",
          "A reveal costs one missile and the player has none: buy missiles with POST /api/messenger/games/recon-grid/purchase",
          {
            details: { balance: "missile_balance", has: 0, required: 1 },
          },
        );
      }
      const layout = JSON.parse(grid.layout) as number[];
      const reward = GRID_CELLS[layout[input.cell]!]!;
      revealed.push(input.cell);
      const found = revealed.filter((c) => layout[c]! < GRID_PRIZES.length).length;
      const done = found === GRID_PRIZES.length || revealed.length === GRID_SIZE;
      const status = done ? "completed" : "active";
      const after: GridRow = { ...grid, revealed: JSON.stringify(revealed), status, ended_at: done ? now : null };
      // The grid's new state and the mission progress (two event types: two missions' enrollments, never one row
      // twice) are written by the ledger with the balances' move: one statement on PostgreSQL.
      const riders = [
        setRevealedStatement(grid.id, after.revealed, status, after.ended_at),
        observedStatement(telegramUserId, "recon_grid.reveal"),
        ...(done ? [observedStatement(telegramUserId, "recon_grid.complete")] : []),
      ];
      return {
        ...creditOf(reward, { missiles: 1 }),
        riders,
        result: { cell: input.cell, reward, grid: gridView(after) },
      };
    },
  );
}
