// One-time promo codes: made by an operator (audited), claimed once per player, up to a total cap, before an
// expiry, by an audience group. A claim is a game-ledger action, so its reward and the claim commit together.
import type { AdminRequest } from "../../auth/admin-plugin";
import { writeAudit } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { requireAudienceGroup } from "../config/audiences";
import { badField, isoOrThrow, type PageInput, pageFrom, paged } from "../config/inputs";
import { inAudience } from "../catalog";
import { applyAction } from "../ledger";
import { observeEvent } from "./mission-sources";
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
  /** true: change an existing code (caps, expiry, audience, enabled); without it an existing code is 409 conflict. */
  update?: boolean;
  reward?: { free_spins?: number; missiles?: number; points?: number; salutes?: string };
  max_claims?: number;
  audience_group?: string;
  /** null (on update): no expiry any more. */
  expires_at?: string | null;
  enabled?: boolean;
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

/** POST /api/messenger/admin/games/promos: creates a code, or with update: true changes one. */
export function createPromo(ctx: AppContext, admin: AdminRequest, input: NewPromo) {
  if (input.update) return updatePromo(ctx, admin, input);
  const db = ctx.db.sqlite;
  const expiresAt = typeof input.expires_at === "string" ? isoOrThrow(input.expires_at, "body.expires_at") : null;
  if (!input.reward) throw badField("body.reward", "is required when creating a promo");
  if (input.max_claims === undefined) throw badField("body.max_claims", "is required when creating a promo");
  const reward = input.reward;
  return db
    .transaction(() => {
      const now = ctx.clock.now().toISOString();
      requireAudienceGroup(db, input.audience_group ?? "all", "body.audience_group");
      const row = db
        .query<PromoRow, Array<string | number | null>>(
          `INSERT INTO messenger_promos (code, reward_free_spins, reward_missiles, reward_points, reward_salutes, max_claims, claims, audience_group, expires_at, enabled, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?) ON CONFLICT (code) DO NOTHING RETURNING *`,
        )
        .get(
          input.code,
          reward.free_spins ?? 0,
          reward.missiles ?? 0,
          reward.points ?? 0,
          reward.salutes ?? null,
          input.max_claims!,
          input.audience_group ?? "all",
          expiresAt,
          input.enabled === false ? 0 : 1,
          now,
        );
      if (!row)
        throw new AppError(
          "conflict",
          `A promo with code ${JSON.stringify(input.code)} already exists; send update: true to change its caps, expiry or state`,
          {
            details: [{ field: "body.code", problem: "already exists" }],
          },
        );
      writeAudit(db, {
        at: now,
        actor: admin.actor,
        action: "messenger.promo.create",
        target: input.code,
        details: promoView(row),
        requestId: admin.requestId,
      });
      return { promo: promoView(row), created: true };
    })
    .immediate();
}

/**
 * Changes an existing code's cap, expiry, audience group or enabled state (audited with the before and after). The
 * reward is fixed once created (players who claimed got it); a cap below the claims made is refused.
 */
function updatePromo(ctx: AppContext, admin: AdminRequest, input: NewPromo) {
  const db = ctx.db.sqlite;
  const expiresAt = typeof input.expires_at === "string" ? isoOrThrow(input.expires_at, "body.expires_at") : input.expires_at;
  return db
    .transaction(() => {
      const now = ctx.clock.now().toISOString();
      const before = db.query<PromoRow, [string]>("SELECT * FROM messenger_promos WHERE code = ?").get(input.code);
      if (!before)
        throw new AppError("promo_not_found", `body.code: no promo ${JSON.stringify(input.code)} to update`, {
          details: [{ field: "body.code", problem: "no such promo" }],
        });
      if (input.reward) {
        const r = input.reward;
        const same =
          (r.free_spins ?? 0) === before.reward_free_spins &&
          (r.missiles ?? 0) === before.reward_missiles &&
          (r.points ?? 0) === before.reward_points &&
          (r.salutes ?? null) === before.reward_salutes;
        if (!same)
          throw new AppError("conflict", `body.reward: the reward of ${before.code} is fixed once created; create a new code for another reward`, {
            details: [{ field: "body.reward", problem: "cannot change after creation" }],
          });
      }
      if (input.max_claims !== undefined && input.max_claims < before.claims)
        throw new AppError(
          "promo_cap_below_claims",
          `body.max_claims: ${input.max_claims} is below the ${before.claims} claims already made of ${before.code}`,
          {
            details: { field: "body.max_claims", claims: before.claims, max_claims: input.max_claims },
          },
        );
      if (input.audience_group !== undefined) requireAudienceGroup(db, input.audience_group, "body.audience_group");
      const row = db
        .query<PromoRow, Array<string | number | null>>(
          "UPDATE messenger_promos SET max_claims = ?, audience_group = ?, expires_at = ?, enabled = ? WHERE code = ? RETURNING *",
        )
        .get(
          input.max_claims ?? before.max_claims,
          input.audience_group ?? before.audience_group,
          expiresAt === undefined ? before.expires_at : expiresAt,
          input.enabled === undefined ? before.enabled : input.enabled ? 1 : 0,
          before.code,
        )!;
      writeAudit(db, {
        at: now,
        actor: admin.actor,
        action: "messenger.promo.update",
        target: before.code,
        details: { before: promoView(before), after: promoView(row) },
        requestId: admin.requestId,
      });
      return { promo: promoView(row), created: false };
    })
    .immediate();
}

/**
 * Promos, enabled ones unless includeDisabled, newest first, then by code; a cursor holds the last row's
 * [created_at, code].
 */
export function listPromos(ctx: AppContext, includeDisabled: boolean, input: PageInput = {}) {
  const page = pageFrom(input, ["text", "text"]);
  const [afterCreated, afterCode] = (page.after ?? [null, null]) as [string | null, string | null];
  const rows = ctx.db.sqlite
    .query<PromoRow, [number, string | null, string | null, number, number]>(
      `SELECT * FROM messenger_promos WHERE (enabled = 1 OR ?1 = 1) AND (?2 IS NULL OR created_at < ?2 OR (created_at = ?2 AND code > ?3))
       ORDER BY created_at DESC, code LIMIT ?4 OFFSET ?5`,
    )
    .all(includeDisabled ? 1 : 0, afterCreated, afterCode, page.limit + 1, page.offset);
  const p = paged(rows.map(promoView), page, (row) => [row.created_at, row.code]);
  return { promos: p.items, count: p.count, pagination: p.pagination, query: { ...p.query, include_disabled: includeDisabled } };
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
      if (!inAudience(player, promo.audience_group, db, now)) {
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
      observeEvent(db, telegramUserId, "promo.claim");
      return {
        deltas: { freeSpins: reward.free_spins, missiles: reward.missiles, points: reward.points },
        earnedPoints: reward.points,
        result: {
          promo: { code: promo.code, reward, claimed_at: now },
          salutes: paySalutes(ctx, db, player, {
            amount: promo.reward_salutes,
            idempotencyKey: `messenger:promo:${promo.code}:${telegramUserId}`,
            reason: "messenger_promo",
            rewardKey: `promo:${promo.code}`,
          }),
        },
      };
    },
  );
}
