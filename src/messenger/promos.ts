// One-time promo codes: made by an operator (audited), claimed once per player, up to a total cap, before an
// expiry, by an audience group. A claim is a game-ledger action, so its reward and the claim commit together.
import type { AdminRequest } from "../auth/admin-plugin";
import { writeAudit } from "../auth/audit";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { inAudience } from "./catalog";
import { applyAction } from "./ledger";
import { paySalutes } from "./salutes-reward";

interface PromoRow {
  code: string;
  reward_free_spins: number;
  reward_missiles: number;
  reward_points: number;
  reward_salutes: string | null;
  max_claims: number;
  claims: number;
  audience_group: string;
  expires_at: string | null;
  enabled: number;
  created_at: string;
}

export interface NewPromo {
  code: string;
  reward: { free_spins?: number; missiles?: number; points?: number; salutes?: string };
  max_claims: number;
  audience_group?: string;
  expires_at?: string;
}

const promoView = (p: PromoRow) => ({
  code: p.code,
  reward: { free_spins: p.reward_free_spins, missiles: p.reward_missiles, points: p.reward_points },
  reward_salutes: p.reward_salutes,
  max_claims: p.max_claims,
  claims: p.claims,
  audience_group: p.audience_group,
  expires_at: p.expires_at,
  enabled: p.enabled === 1,
  created_at: p.created_at,
});

export function createPromo(ctx: AppContext, admin: AdminRequest, input: NewPromo) {
  const db = ctx.db.sqlite;
  if (input.expires_at !== undefined && Number.isNaN(Date.parse(input.expires_at))) {
    throw new AppError("invalid_payload", "expires_at must be an ISO 8601 time", {
      details: [{ field: "body.expires_at", problem: "must be an ISO 8601 time" }],
    });
  }
  return db
    .transaction(() => {
      const now = ctx.clock.now().toISOString();
      const row = db
        .query<PromoRow, Array<string | number | null>>(
          `INSERT INTO messenger_promos (code, reward_free_spins, reward_missiles, reward_points, reward_salutes, max_claims, claims, audience_group, expires_at, enabled, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, 1, ?) ON CONFLICT (code) DO NOTHING RETURNING *`,
        )
        .get(
          input.code,
          input.reward.free_spins ?? 0,
          input.reward.missiles ?? 0,
          input.reward.points ?? 0,
          input.reward.salutes ?? null,
          input.max_claims,
          input.audience_group ?? "all",
          input.expires_at ? new Date(input.expires_at).toISOString() : null,
          now,
        );
      if (!row) throw new AppError("conflict", `A promo with code ${JSON.stringify(input.code)} already exists`);
      writeAudit(db, {
        at: now,
        actor: admin.actor,
        action: "messenger.promo.create",
        target: input.code,
        details: promoView(row),
        requestId: admin.requestId,
      });
      return { promo: promoView(row) };
    })
    .immediate();
}

export function listPromos(ctx: AppContext, includeDisabled: boolean) {
  const rows = ctx.db.sqlite
    .query<PromoRow, [number]>("SELECT * FROM messenger_promos WHERE enabled = 1 OR ? = 1 ORDER BY created_at DESC, code LIMIT 500")
    .all(includeDisabled ? 1 : 0);
  return { promos: rows.map(promoView), count: rows.length };
}

/** Claims a promo for the player; the same request id replays, a second claim of the code is refused. */
export function claimPromo(ctx: AppContext, telegramUserId: number, input: { request_id: string; code: string }) {
  return applyAction(
    ctx,
    { telegramUserId, requestId: input.request_id, action: "promo.claim", inputs: { code: input.code }, gameKey: null },
    (player, db, now) => {
      const promo = db.query<PromoRow, [string]>("SELECT * FROM messenger_promos WHERE code = ? AND enabled = 1").get(input.code);
      if (!promo) throw new AppError("promo_not_found", `No promo ${JSON.stringify(input.code)}`);
      if (promo.expires_at && promo.expires_at <= now)
        throw new AppError("promo_expired", `Promo ${promo.code} expired at ${promo.expires_at}`, { details: { expires_at: promo.expires_at } });
      if (!inAudience(player, promo.audience_group)) {
        throw new AppError("promo_not_eligible", `Promo ${promo.code} is for the ${promo.audience_group} audience group`, {
          details: { audience_group: promo.audience_group },
        });
      }
      const claimed = db
        .query("INSERT INTO messenger_promo_claims (code, telegram_user_id, claimed_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
        .run(promo.code, telegramUserId, now).changes;
      if (claimed === 0) throw new AppError("promo_already_claimed", `This player already claimed ${promo.code}`);
      // The cap is enforced by the UPDATE's condition, so two claims racing for the last slot cannot both win.
      const counted = db.query("UPDATE messenger_promos SET claims = claims + 1 WHERE code = ? AND claims < max_claims").run(promo.code).changes;
      if (counted === 0)
        throw new AppError("promo_exhausted", `Promo ${promo.code} has been claimed ${promo.max_claims} times, its limit`, {
          details: { max_claims: promo.max_claims },
        });
      const reward = { free_spins: promo.reward_free_spins, missiles: promo.reward_missiles, points: promo.reward_points };
      return {
        deltas: { freeSpins: reward.free_spins, missiles: reward.missiles, points: reward.points },
        earnedPoints: reward.points,
        result: {
          promo: { code: promo.code, reward, claimed_at: now },
          salutes: paySalutes(ctx, db, player, promo.reward_salutes, `messenger:promo:${promo.code}:${telegramUserId}`, "messenger_promo"),
        },
      };
    },
  );
}
