// The spin wheel: availability (daily free spin + spins in hand), the provably-fair draw and its ledger entry.
import type { Database } from "bun:sqlite";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { requireCatalogAccess, catalogAccess } from "../config/campaigns";
import { activeWheel } from "../config/wheel-campaigns";
import { WHEEL_CAMPAIGN } from "../catalog";
import { bump } from "../counters";
import { newClientSeed, newServerSeed, pickWeighted, seedHash } from "./fair";
import { applyAction } from "../ledger";
import { observeEvent } from "./mission-sources";
import type { PlayerRow } from "../players";
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

interface SeedRow {
  id: number;
  server_seed: string;
  server_seed_hash: string;
  client_seed: string;
  next_nonce: number;
  created_at: string;
  revealed_at: string | null;
  /** Null only in rows made before commitments were recorded: those were committed at created_at. */
  committed_at: string | null;
}

const activeSeed = (db: Database, telegramUserId: number) =>
  db.query<SeedRow, [number]>("SELECT * FROM messenger_seeds WHERE telegram_user_id = ? AND status = 'active' ORDER BY id DESC LIMIT 1").get(telegramUserId);

const insertSeed = (db: Database, telegramUserId: number, serverSeed: string, clientSeed: string, committedAt: string, now: string) =>
  db
    .query<SeedRow, [number, string, string, string, string, string]>(
      "INSERT INTO messenger_seeds (telegram_user_id, server_seed, server_seed_hash, client_seed, next_nonce, status, created_at, committed_at) VALUES (?, ?, ?, ?, 0, 'active', ?, ?) RETURNING *",
    )
    .get(telegramUserId, serverSeed, seedHash(serverSeed), clientSeed, now, committedAt)!;

/** A default pair, server seed and client seed both the server's: made when a player has none yet. */
function createSeed(ctx: AppContext, db: Database, telegramUserId: number, now: string): SeedRow {
  return insertSeed(db, telegramUserId, newServerSeed(ctx.rng), newClientSeed(ctx.rng), now, now);
}

/** When the pair's hash was first published, and when its client seed was set. */
const seedTimes = (s: SeedRow) => ({ committed_at: s.committed_at ?? s.created_at, client_seed_set_at: s.created_at });

const STATUS_ROUTE = "POST /api/messenger/games/spin-wheel/status";

/**
 * The wheel's status, with the active pair and the hash of the NEXT server seed (committed now if there is none).
 * With `clientSeed`, the pair rotates first: the current server seed is revealed (so every spin made with it can
 * be recomputed) and the next server seed — committed in an earlier answer, never in this one — becomes active
 * with the player's client seed; a new next seed is committed and its hash shown.
 */
export function wheelStatus(ctx: AppContext, player: PlayerRow, clientSeed: string | undefined, expectedNextHash?: string) {
  const db = ctx.db.sqlite;
  return db
    .transaction(() => {
      const now = ctx.clock.now();
      const iso = now.toISOString();
      const uid = player.telegram_user_id;
      let seed = activeSeed(db, uid);
      let revealed: ReturnType<typeof revealedView> | null = null;
      if (clientSeed !== undefined) {
        const committed = takeCommitmentOrThrow(db, uid, "spin_wheel", STATUS_ROUTE, expectedNextHash);
        if (seed) {
          db.query("UPDATE messenger_seeds SET status = 'revealed', revealed_at = ? WHERE id = ?").run(iso, seed.id);
          revealed = revealedView({ ...seed, revealed_at: iso });
        }
        seed = insertSeed(db, uid, committed.server_seed, clientSeed, committed.committed_at, iso);
      } else if (!seed) {
        seed = createSeed(ctx, db, uid, iso);
      }
      const next = ensureCommitment(ctx, db, uid, "spin_wheel", iso);
      const fresh = db.query<PlayerRow, [number]>("SELECT * FROM messenger_players WHERE telegram_user_id = ?").get(player.telegram_user_id)!;
      const wheel = activeWheel(db, fresh, iso);
      const free = freeSpinState(fresh, now, wheel.cooldown_seconds);
      return {
        available: (free.free_spin_available || fresh.free_spin_balance > 0) && catalogAccess(db, fresh, "spin_wheel", iso).allowed,
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
    })
    .immediate();
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
export function revealedSeeds(ctx: AppContext, telegramUserId: number, limit: number) {
  return ctx.db.sqlite
    .query<SeedRow, [number, number]>("SELECT * FROM messenger_seeds WHERE telegram_user_id = ? AND status = 'revealed' ORDER BY id DESC LIMIT ?")
    .all(telegramUserId, limit)
    .map(revealedView);
}

/**
 * One spin: pays with the daily free spin if due, else one spin in hand; draws on the player's wheel campaign
 * (docs/messenger-admin-games.md), credits, records the campaign with the spin.
 */
export function playWheel(ctx: AppContext, telegramUserId: number, requestId: string) {
  return applyAction(ctx, { telegramUserId, requestId, action: "spin_wheel.play", inputs: {}, gameKey: "spin_wheel" }, (player, db, now) => {
    requireCatalogAccess(db, player, "spin_wheel", now);
    const wheel = activeWheel(db, player, now);
    const nowDate = new Date(now);
    const free = freeSpinState(player, nowDate, wheel.cooldown_seconds);
    let paidWith: "daily_free_spin" | "free_spin_balance";
    if (free.free_spin_available) {
      paidWith = "daily_free_spin";
      db.query("UPDATE messenger_players SET last_free_spin_at = ? WHERE telegram_user_id = ?").run(now, telegramUserId);
    } else if (player.free_spin_balance > 0) {
      paidWith = "free_spin_balance";
    } else {
      throw new AppError("game_cooldown", `No spin available: the next daily free spin is at ${free.next_free_spin_at}; buy a spin_play to play now`, {
        details: { available_at: free.next_free_spin_at, free_spin_balance: 0 },
        headers: { "retry-after": String(free.cooldown_seconds_remaining) },
      });
    }
    // A player who never read the status gets a default pair here (both seeds the server's, committed_at = now);
    // a client seed of the player's own is only ever set through the status route's pre-committed seed.
    const seed = activeSeed(db, telegramUserId) ?? createSeed(ctx, db, telegramUserId, now);
    const nonce = seed.next_nonce;
    db.query("UPDATE messenger_seeds SET next_nonce = next_nonce + 1 WHERE id = ?").run(seed.id);
    const segments = wheel.segments;
    const index = pickWeighted(
      segments.map((s) => s.weight),
      seed.server_seed,
      seed.client_seed,
      nonce,
    );
    const segment = segments[index]!;
    const spin = db
      .query<{ id: number }, [number, number, number, string, number, string, string]>(
        "INSERT INTO messenger_spins (telegram_user_id, seed_id, nonce, campaign_key, segment_index, paid_with, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
      )
      .get(telegramUserId, seed.id, nonce, wheel.campaign_key, index, paidWith, now)!;
    bump(db, ctx.clock, "plays", "spin_wheel");
    observeEvent(db, telegramUserId, "spin_wheel.play");
    return {
      deltas: {
        freeSpins: segment.reward.free_spins - (paidWith === "free_spin_balance" ? 1 : 0),
        missiles: segment.reward.missiles,
        points: segment.reward.points,
      },
      earnedPoints: segment.reward.points,
      result: {
        spin: {
          id: spin.id,
          campaign_key: wheel.campaign_key,
          segment_index: index,
          segment_label: segment.label,
          reward: segment.reward,
          paid_with: paidWith,
          fairness: { server_seed_hash: seed.server_seed_hash, client_seed: seed.client_seed, nonce, committed_at: seed.committed_at ?? seed.created_at },
          created_at: now,
        },
      },
    };
  });
}
