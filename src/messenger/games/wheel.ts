// The spin wheel: availability (daily free spin + spins in hand), the provably-fair draw and its ledger entry.
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { AppError } from "../../http/errors/errors";
import { WHEEL_CAMPAIGN } from "../catalog";
import { catalogAccess, requireCatalogAccess } from "../config/campaigns";
import { gamesConfig } from "../config/cache";
import { activeWheel } from "../config/wheel-campaigns";
import { applyAction, creditOf } from "../ledger";
import { lockedPlayer, type PlayerRow } from "../players";
import { activeSeed, insertSeed, insertSpinStatement, revealedSeedRows, revealSeed, type SeedRow, takeActiveNonce, takeNonce } from "../store/fair";
import { newClientSeed, newServerSeed, pickWeighted, seedHash } from "./fair";
import { observedStatement } from "./mission-sources";
import { ensureCommitment, nextView, takeCommitmentOrThrow } from "./seed-commitments";

/** The daily free spin: due `cooldownSeconds` (the player's wheel campaign's) after the last one. */
export function freeSpinState(p: Pick<PlayerRow, "last_free_spin_at">, now: Date, cooldownSeconds: number = WHEEL_CAMPAIGN.cooldown_seconds) {
  const next = p.last_free_spin_at ? Date.parse(p.last_free_spin_at) + cooldownSeconds * 1000 : now.getTime();
  const available = next <= now.getTime();
  return {
    free_spin_available: available,
    cooldown_seconds_remaining: available ? 0 : Math.ceil((next - now.getTime()) / 1000),
    next_free_spin_at: new Date(Math.max(next, now.getTime())).toISOString(),
  };
}

/** A default pair, server seed and client seed both the server's: made when a player has none yet. */
function createSeed(ctx: AppContext, t: Queryable, telegramUserId: number, now: string): Promise<SeedRow> {
  const serverSeed = newServerSeed(ctx.rng);
  return insertSeed(t, { telegramUserId, serverSeed, serverSeedHash: seedHash(serverSeed), clientSeed: newClientSeed(ctx.rng), committedAt: now, at: now });
}

const seedTimes = (s: SeedRow) => ({ committed_at: s.committed_at ?? s.created_at, client_seed_set_at: s.created_at });

const STATUS_ROUTE = "POST /api/messenger/games/spin-wheel/status";

/**
 * The wheel's status, with the active pair and the hash of the NEXT server seed (committed now if there is none).
 * With `clientSeed`, the pair rotates first: the current server seed is revealed (so every spin made with it can
 * be recomputed) and the next server seed — committed in an earlier answer, never in this one — becomes active
 * with the player's client seed; a new next seed is committed and its hash shown.
 */
export async function wheelStatus(ctx: AppContext, player: PlayerRow, clientSeed: string | undefined, expectedNextHash?: string) {
  const config = await gamesConfig(ctx);
  const now = ctx.clock.now();
  const iso = now.toISOString();
  const uid = player.telegram_user_id;
  return ctx.store.tx(async (t) => {
    // The player's row lock first: a rotation and a spin of one player never interleave (the nonce, the pair).
    const fresh = await lockedPlayer(t, uid, iso);
    let seed = await activeSeed(t, uid);
    let revealed: ReturnType<typeof revealedView> | null = null;
    if (clientSeed !== undefined) {
      const committed = await takeCommitmentOrThrow(t, uid, "spin_wheel", STATUS_ROUTE, expectedNextHash);
      if (seed) {
        await revealSeed(t, seed.id, iso);
        revealed = revealedView({ ...seed, revealed_at: iso });
      }
      seed = await insertSeed(t, {
        telegramUserId: uid,
        serverSeed: committed.server_seed,
        serverSeedHash: seedHash(committed.server_seed),
        clientSeed,
        committedAt: committed.committed_at,
        at: iso,
      });
    } else if (!seed) {
      seed = await createSeed(ctx, t, uid, iso);
    }
    const next = await ensureCommitment(ctx, t, uid, "spin_wheel", iso);
    const wheel = activeWheel(config, fresh, iso);
    const free = freeSpinState(fresh, now, wheel.cooldown_seconds);
    return {
      available: (free.free_spin_available || fresh.free_spin_balance > 0) && catalogAccess(config, fresh, "spin_wheel", iso).allowed,
      ...free,
      free_spin_balance: fresh.free_spin_balance,
      campaign: { campaign_key: wheel.campaign_key, title: wheel.title, cooldown_seconds: wheel.cooldown_seconds, segments: wheel.segments },
      fairness: {
        server_seed_hash: seed.server_seed_hash,
        client_seed: seed.client_seed,
        next_nonce: seed.next_nonce,
        ...seedTimes(seed),
        ...nextView(next),
      },
      revealed_seed: revealed,
    };
  });
}

const revealedView = (s: SeedRow) => ({
  server_seed: s.server_seed,
  server_seed_hash: s.server_seed_hash,
  client_seed: s.client_seed,
  nonces_used: s.next_nonce,
  revealed_at: s.revealed_at!,
  ...seedTimes(s),
});

/** Seeds revealed so far (newest first): what a player recomputes past spins with. */
export async function revealedSeeds(ctx: AppContext, telegramUserId: number, limit: number) {
  return (await revealedSeedRows(ctx.store, telegramUserId, limit)).map(revealedView);
}

/**
 * One spin: pays with the daily free spin if due, else one spin in hand; draws on the player's wheel campaign
 * (docs/messenger-admin-games.md), credits, records the campaign with the spin.
 */
export async function playWheel(ctx: AppContext, telegramUserId: number, requestId: string) {
  const config = await gamesConfig(ctx);
  return applyAction(
    ctx,
    { telegramUserId, requestId, action: "spin_wheel.play", inputs: {}, gameKey: "spin_wheel", sharing: "player rows" },
    async (player, { t, now }, taken) => {
      requireCatalogAccess(config, player, "spin_wheel", now);
      const wheel = activeWheel(config, player, now);
      const free = freeSpinState(player, new Date(now), wheel.cooldown_seconds);
      let paidWith: "daily_free_spin" | "free_spin_balance";
      if (free.free_spin_available) paidWith = "daily_free_spin";
      else if (player.free_spin_balance > 0) paidWith = "free_spin_balance";
      else {
        throw new AppError("game_cooldown", `No spin available: the next daily free spin is at ${free.next_free_spin_at}; buy a spin_play to play now`, {
          details: { available_at: free.next_free_spin_at, free_spin_balance: 0 },
          headers: { "retry-after": String(free.cooldown_seconds_remaining) },
        });
      }
      // The active pair's next nonce and the spin's id were taken beside the lock and the claim (the early statements
      // of applyAction): a refusal above or a replay rolls them back. A player who never read the status gets a
      // default pair here (both seeds the server's, committed_at = now); a client seed of the player's own is only
      // ever set through the status route's pre-committed seed.
      const { seed, nonce, spinId } = taken ?? (await takeNonce(t, (await createSeed(ctx, t, telegramUserId, now)).id));
      const segments = wheel.segments;
      const index = pickWeighted(
        segments.map((s) => s.weight),
        seed.server_seed,
        seed.client_seed,
        nonce,
      );
      const segment = segments[index]!;
      const spin = {
        telegram_user_id: telegramUserId,
        seed_id: seed.id,
        nonce,
        campaign_key: wheel.campaign_key,
        segment_index: index,
        paid_with: paidWith,
        created_at: now,
      };
      const answer = {
        spin: {
          id: spinId,
          campaign_key: wheel.campaign_key,
          segment_index: index,
          segment_label: segment.label,
          reward: segment.reward,
          paid_with: paidWith,
          fairness: { server_seed_hash: seed.server_seed_hash, client_seed: seed.client_seed, nonce, committed_at: seed.committed_at ?? seed.created_at },
          created_at: now,
        },
      };
      const count = { metric: "plays", label: "spin_wheel" } as const;
      // The answer is known now: the spin's row and the mission progress are writes nothing waits for, and the daily
      // spin's time is written with the balances' move; the ledger sends them as the engine does best.
      const riders = [insertSpinStatement(spin, spinId), observedStatement(telegramUserId, "spin_wheel.play")];
      const lastFreeSpinAt = paidWith === "daily_free_spin" ? now : undefined;
      return { ...creditOf(segment.reward, { freeSpins: paidWith === "free_spin_balance" ? 1 : 0 }), lastFreeSpinAt, count, riders, result: answer };
    },
    takeActiveNonce,
  );
}
