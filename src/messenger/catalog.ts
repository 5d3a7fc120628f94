// The games, items and the default wheel campaign the mini-app offers (docs/messenger.md). Operators limit who sees
// a game and replace the wheel's segments with campaigns, and add audience groups (docs/messenger-admin-games.md);
// the built-in wheel campaign is what a player outside every wheel campaign spins.
import { type AudiencePlayer, type BuiltinAudienceGroup, builtinMatches, isBuiltinGroup, ruleMatches } from "./config/audience-rule";
import type { GamesConfig, StoredSegment } from "./config/cache";
import type { Reward } from "./model";
import type { Static } from "elysia";

export type RewardSpec = Static<typeof Reward>;
export const AMOUNT_KINDS = ["free_spins", "missiles", "points"] as const satisfies ReadonlyArray<keyof RewardSpec>;

export const reward = (r: Partial<RewardSpec>): RewardSpec => ({ free_spins: r.free_spins ?? 0, missiles: r.missiles ?? 0, points: r.points ?? 0 });

/** What a promo's or a mission's row pays in balances (its reward_* columns). */
export const rewardOfRow = (r: { reward_free_spins: number; reward_missiles: number; reward_points: number }): RewardSpec => ({
  free_spins: r.reward_free_spins,
  missiles: r.reward_missiles,
  points: r.reward_points,
});

/**
 * The default wheel campaign: one daily free spin (cooldown from the last free spin), then bought or won spins.
 * Frozen: past spins are recomputed from these weights (test/messenger/wheel-default-pinned.test.ts writes them
 * out); a new wheel is a new campaign, never an edit here.
 */
export const WHEEL_CAMPAIGN = {
  campaign_key: "wheel-default",
  title: "Daily wheel",
  cooldown_seconds: 86_400,
  segments: [
    { label: "10 points", weight: 40, reward: reward({ points: 10 }) },
    { label: "25 points", weight: 25, reward: reward({ points: 25 }) },
    { label: "100 points", weight: 5, reward: reward({ points: 100 }) },
    { label: "2 missiles", weight: 15, reward: reward({ missiles: 2 }) },
    { label: "Free spin", weight: 10, reward: reward({ free_spins: 1 }) },
    { label: "Try again", weight: 5, reward: reward({}) },
  ] satisfies StoredSegment[],
} as const;

/**
 * Whether the player is in the group: a built-in one, or an operator group whose rule is read from the games
 * configuration the caller loaded (src/messenger/config/cache.ts; no query per call). An unknown group holds
 * nobody; the admin routes refuse to name one.
 */
export function inAudience(p: AudiencePlayer, group: string, config: GamesConfig): boolean {
  if (isBuiltinGroup(group)) return builtinMatches(group, p);
  const rule = config.groups.get(group);
  return rule !== undefined && ruleMatches(rule, p);
}

/** Items the player buys with game points (POST /api/messenger/games/items/purchase; missiles also via recon-grid/purchase). */
export const ITEMS = {
  spin_play: { item_key: "spin_play", title: "Wheel spin", price_points: 50, grants: reward({ free_spins: 1 }) },
  missile: { item_key: "missile", title: "Recon missile", price_points: 20, grants: reward({ missiles: 1 }) },
} as const;
export type ItemKey = keyof typeof ITEMS;

/**
 * The welcome gift: once per player, during their first days, opened with POST
 * /api/messenger/games/welcome-gift/open. Without it a newcomer holds nothing but the daily free spin, whose
 * segments pay missiles 15 % of the time, so the recon grid would be out of reach on day one; five missiles reveal
 * five cells, and 50 points buy a spin or two more missiles. Its points count as earned, like a promo's.
 */
export const WELCOME_GIFT = {
  reward: reward({ missiles: 5, points: 50 }),
  open_for_seconds: 7 * 86_400,
} as const;

/** Recon grid: 5×5 cells; the layout holds these rewards (the rest empty), shuffled by the provably-fair draw. */
export const GRID_SIZE = 25;
export const GRID_PRIZES: RewardSpec[] = [
  reward({ points: 150 }),
  reward({ points: 50 }),
  reward({ points: 50 }),
  reward({ points: 20 }),
  reward({ points: 20 }),
  reward({ points: 20 }),
  reward({ free_spins: 1 }),
  reward({ free_spins: 1 }),
  reward({ missiles: 2 }),
  reward({ missiles: 2 }),
];
export const GRID_CELLS: RewardSpec[] = [...GRID_PRIZES, ...Array.from({ length: GRID_SIZE - GRID_PRIZES.length }, () => reward({}))];

export interface GameDef {
  game_key: "spin_wheel" | "recon_grid";
  title: string;
  audience_group: BuiltinAudienceGroup;
  cost: { kind: "free_spin" | "missile"; amount: number; note: string };
}

export const GAMES: GameDef[] = [
  {
    game_key: "spin_wheel",
    title: "Spin wheel",
    audience_group: "all",
    cost: { kind: "free_spin", amount: 1, note: "one daily free spin, then one spin from free_spin_balance per play" },
  },
  {
    game_key: "recon_grid",
    title: "Recon grid",
    audience_group: "all",
    cost: { kind: "missile", amount: 1, note: "starting a grid is free; each reveal costs one missile" },
  },
];
