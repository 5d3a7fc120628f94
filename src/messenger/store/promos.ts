import { changed, countOf, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerPromoClaims, messengerPromos, messengerSalutesRewards } from "../tables";

// Promo codes, their claims, and the salutes rewards paid once per partner user (messenger_promos,
// messenger_promo_claims, messenger_salutes_rewards): the only SQL that touches them. Every limit is held by the
// statement that spends it (a claim row's primary key, the cap in the UPDATE's WHERE), so claims racing on two
// instances cannot pass it.

export type PromoRow = RowOf<typeof messengerPromos>;
type ClaimRow = RowOf<typeof messengerPromoClaims>;
type SalutesRewardRow = RowOf<typeof messengerSalutesRewards>;

/** The new promo, or null when its code is taken. */
export const insertPromo = (t: Queryable, p: Omit<PromoRow, "claims">) =>
  t.get<PromoRow>(
    `INSERT INTO messenger_promos (code, reward_free_spins, reward_missiles, reward_points, reward_salutes, max_claims, claims, audience_group, expires_at, enabled, created_at)
     VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?) ON CONFLICT (code) DO NOTHING RETURNING *`,
    [p.code, p.reward_free_spins, p.reward_missiles, p.reward_points, p.reward_salutes, p.max_claims, p.audience_group, p.expires_at, p.enabled, p.created_at],
  );

/** The promo with its row lock held for the rest of `t` (an operator's update: its before and after are exact). */
export const lockPromo = (t: Queryable, code: string) => t.get<PromoRow>("UPDATE messenger_promos SET claims = claims WHERE code = ? RETURNING *", [code]);

/**
 * The operator's update. The new cap is checked against the claims in the statement itself: a claim that commits
 * between the caller's check and this write cannot leave claims above max_claims (null back: refused).
 */
export const updatePromo = (t: Queryable, code: string, p: Pick<PromoRow, "max_claims" | "audience_group" | "expires_at" | "enabled">) =>
  t.get<PromoRow>("UPDATE messenger_promos SET max_claims = ?, audience_group = ?, expires_at = ?, enabled = ? WHERE code = ? AND claims <= ? RETURNING *", [
    p.max_claims,
    p.audience_group,
    p.expires_at,
    p.enabled,
    code,
    p.max_claims,
  ]);

export const enabledPromo = (q: Queryable, code: string) => q.get<PromoRow>("SELECT * FROM messenger_promos WHERE code = ? AND enabled = 1", [code]);

/** Newest first, then by code; the cursor is the last row's [created_at, code]. */
export const promosPage = (
  q: Queryable,
  f: { includeDisabled: boolean; afterCreated: string | null; afterCode: string | null; limit: number; offset: number },
) =>
  q.all<PromoRow>(
    `SELECT * FROM messenger_promos WHERE (enabled = 1 OR ? = 1) AND (CAST(? AS text) IS NULL OR created_at < ? OR (created_at = ? AND code > ?))
     ORDER BY created_at DESC, code LIMIT ? OFFSET ?`,
    [f.includeDisabled ? 1 : 0, f.afterCreated, f.afterCreated, f.afterCreated, f.afterCode ?? "", f.limit, f.offset],
  );

/** The player's claim of a code: true when made now, false when the player had claimed it before. */
export async function insertClaim(t: Queryable, c: ClaimRow): Promise<boolean> {
  return changed(
    t,
    "INSERT INTO messenger_promo_claims (code, telegram_user_id, claimed_at) VALUES (?, ?, ?) ON CONFLICT (code, telegram_user_id) DO NOTHING",
    [c.code, c.telegram_user_id, c.claimed_at],
  );
}

/** Counts a claim against the cap, in the statement that checks it: false when the cap is reached. */
export async function countClaim(t: Queryable, code: string): Promise<boolean> {
  return changed(t, "UPDATE messenger_promos SET claims = claims + 1 WHERE code = ? AND claims < max_claims", [code]);
}

export const countClaimsOf = (q: Queryable, telegramUserId: number) =>
  countOf(q, "SELECT COUNT(*) AS n FROM messenger_promo_claims WHERE telegram_user_id = ?", [telegramUserId]);

type RewardKey = { partner: string; partnerUserId: number; rewardKey: string };

/** Claims a reward's salutes for a partner user: true when this call claimed it (false: paid before). */
export async function claimSalutesReward(t: Queryable, r: RewardKey & { telegramUserId: number; amount: string; at: string }): Promise<boolean> {
  return changed(
    t,
    `INSERT INTO messenger_salutes_rewards (partner, partner_user_id, reward_key, telegram_user_id, amount, paid_at)
     VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (partner, partner_user_id, reward_key) DO NOTHING`,
    [r.partner, r.partnerUserId, r.rewardKey, r.telegramUserId, r.amount, r.at],
  );
}

export async function setSalutesRewardEntry(t: Queryable, r: RewardKey, entryId: SalutesRewardRow["salutes_ledger_entry_id"]): Promise<void> {
  await t.run("UPDATE messenger_salutes_rewards SET salutes_ledger_entry_id = ? WHERE partner = ? AND partner_user_id = ? AND reward_key = ?", [
    entryId,
    r.partner,
    r.partnerUserId,
    r.rewardKey,
  ]);
}
