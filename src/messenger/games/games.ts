// The game catalog and item purchases (priced in game points, paid through the game ledger).
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { GAMES, ITEMS, inAudience, type ItemKey } from "../catalog";
import { type GamesConfig, gamesConfig } from "../config/cache";
import { catalogAccess } from "../config/campaigns";
import { activeWheel } from "../config/wheel-campaigns";
import { applyAction } from "../ledger";
import type { PlayerRow } from "../players";
import { observedStatement } from "./mission-sources";
import { freeSpinState } from "./wheel";

/**
 * The launchable games for this player: the built-in audience rules applied, then the catalog campaigns (a game
 * with enabled campaigns is listed for everyone but available only inside an active campaign of the player's
 * audience, with the reason otherwise), each with its availability and cost.
 */
export async function gameCatalog(ctx: AppContext, player: PlayerRow) {
  return catalogOf(await gamesConfig(ctx), player, ctx.clock.now());
}

/** The catalog from a loaded configuration (the catalog preview shows it for a hypothetical player too). */
export function catalogOf(config: GamesConfig, player: PlayerRow, now: Date) {
  const iso = now.toISOString();
  const games = GAMES.filter((g) => inAudience(player, g.audience_group, config)).map((g) => {
    const access = catalogAccess(config, player, g.game_key, iso);
    let reason: string | null;
    if (!access.allowed) reason = `not open to you now: ${access.reason}`;
    else if (g.game_key === "spin_wheel") {
      const free = freeSpinState(player, now, activeWheel(config, player, iso).cooldown_seconds);
      reason =
        free.free_spin_available || player.free_spin_balance > 0 ? null : `next daily free spin at ${free.next_free_spin_at}; buy a spin_play to play now`;
    } else reason = player.missile_balance > 0 ? null : "no missiles: a grid can be started, revealing needs a missile (buy some with points)";
    // The grid stays available without missiles (starting one is free); the wheel needs a spin.
    const available = access.allowed && (g.game_key === "spin_wheel" ? reason === null : true);
    return {
      game_key: g.game_key,
      title: g.title,
      audience_group: access.campaign?.audience_group ?? g.audience_group,
      available,
      open_to_you: access.allowed,
      reason,
      cost: g.cost,
      campaign_id: access.campaign?.id ?? null,
    };
  });
  const items = Object.values(ITEMS).map((i) => ({ item_key: i.item_key, title: i.title, price_points: i.price_points, grants: i.grants }));
  return { games, items };
}

/** Buys `quantity` of an item with points: one ledger row, idempotent by request id. */
export function purchaseItem(
  ctx: AppContext,
  telegramUserId: number,
  input: { request_id: string; item_key: string; quantity: number },
  action: "items.purchase" | "recon_grid.purchase" = "items.purchase",
) {
  const item = (ITEMS as Record<string, (typeof ITEMS)[ItemKey]>)[input.item_key];
  if (!item) throw new AppError("game_not_found", `No item ${JSON.stringify(input.item_key)}; the catalog lists ${Object.keys(ITEMS).join(", ")}`);
  const cost = item.price_points * input.quantity;
  const granted = { free_spins: item.grants.free_spins * input.quantity, missiles: item.grants.missiles * input.quantity, points: 0 };
  return applyAction(
    ctx,
    {
      telegramUserId,
      requestId: input.request_id,
      action,
      inputs: { item_key: item.item_key, quantity: input.quantity },
      gameKey: item.item_key === "missile" ? "recon_grid" : "spin_wheel",
      sharing: "player rows",
    },
    async () => ({
      deltas: { freeSpins: granted.free_spins, missiles: granted.missiles, points: -cost },
      // Mission progress, written by the ledger with the balances' move (one statement on PostgreSQL).
      riders: [observedStatement(telegramUserId, action, input.quantity)],
      result: {
        purchase: {
          item_key: item.item_key,
          quantity: input.quantity,
          price_points: item.price_points,
          total_points: cost,
          granted,
        },
      },
    }),
  );
}
