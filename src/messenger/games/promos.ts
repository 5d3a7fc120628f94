// One-time promo codes: made by an operator (audited), claimed once per player, up to a total cap, before an
// expiry, by an audience group. A claim is a game-ledger action, so its reward and the claim commit together.
import type { Static } from "elysia";
import type { AdminRequest } from "../../auth/admin-plugin";
import type { AppContext } from "../../context";
import { auditOperator } from "../../auth/audit";
import { AppError } from "../../http/errors/errors";
import { parseKeyPage } from "../../http/pagination";
import { AMOUNT_KINDS, reward as fullReward, inAudience, rewardOfRow } from "../catalog";
import { schemaView } from "../../http/schema-view";
import { requireAudienceGroup } from "../config/audiences";
import { type GamesConfig, gamesConfig } from "../config/cache";
import { adminListAnswer, badField, isoOrThrow, type PageInput, paged } from "../config/inputs";
import { type ActionScope, applyActionIn, creditOf, inOwnTx } from "../ledger";
import { countClaim, enabledPromo, insertClaim, insertPromo, lockPromo, type PromoRow, promosPage, updatePromo as updatePromoRow } from "../store/promos";
import { observeEvent } from "./mission-sources";
import { checkSalutesReward, paySalutes } from "./salutes-reward";
import { Promo, type PromoModel } from "./promos-model";

type NewPromo = Static<typeof PromoModel.createBody>;

const promoView = (p: PromoRow) => schemaView(Promo, p, { reward: rewardOfRow(p), enabled: p.enabled === 1 });

export async function createPromo(ctx: AppContext, admin: AdminRequest, input: NewPromo) {
  if (input.update) return updatePromo(ctx, admin, input);
  const expiresAt = typeof input.expires_at === "string" ? isoOrThrow(input.expires_at, "body.expires_at") : null;
  if (!input.reward) throw badField("body.reward", "is required when creating a promo");
  if (input.max_claims === undefined) throw badField("body.max_claims", "is required when creating a promo");
  const reward = input.reward;
  checkSalutesReward(ctx, reward.salutes);
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    await requireAudienceGroup(t, input.audience_group ?? "all", "body.audience_group");
    const row = await insertPromo(t, {
      code: input.code,
      reward_free_spins: reward.free_spins ?? 0,
      reward_missiles: reward.missiles ?? 0,
      reward_points: reward.points ?? 0,
      reward_salutes: reward.salutes ?? null,
      max_claims: input.max_claims!,
      audience_group: input.audience_group ?? "all",
      expires_at: expiresAt,
      enabled: input.enabled === false ? 0 : 1,
      created_at: now,
    });
    if (!row)
      throw new AppError("conflict", `A promo with code ${JSON.stringify(input.code)} already exists; send update: true to change its caps, expiry or state`, {
        details: [{ field: "body.code", problem: "already exists" }],
      });
    await auditOperator(t, admin, now, "messenger.promo.create", input.code, promoView(row));
    return { promo: promoView(row), created: true };
  });
}

const capBelowClaims = (code: string, maxClaims: number, claims: number) =>
  new AppError("promo_cap_below_claims", `body.max_claims: ${maxClaims} is below the ${claims} claims already made of ${code}`, {
    details: { field: "body.max_claims", claims, max_claims: maxClaims },
  });

/**
 * Changes an existing code's cap, expiry, audience group or enabled state (audited with the before and after). The
 * reward is fixed once created (players who claimed got it); a cap below the claims made is refused.
 */
async function updatePromo(ctx: AppContext, admin: AdminRequest, input: NewPromo) {
  const expiresAt = typeof input.expires_at === "string" ? isoOrThrow(input.expires_at, "body.expires_at") : input.expires_at;
  const now = ctx.clock.now().toISOString();
  return ctx.store.tx(async (t) => {
    const before = await lockPromo(t, input.code);
    if (!before)
      throw new AppError("promo_not_found", `body.code: no promo ${JSON.stringify(input.code)} to update`, {
        details: [{ field: "body.code", problem: "no such promo" }],
      });
    if (input.reward) {
      const [sent, stored] = [fullReward(input.reward), rewardOfRow(before)];
      const same = AMOUNT_KINDS.every((k) => sent[k] === stored[k]) && (input.reward.salutes ?? null) === before.reward_salutes;
      if (!same)
        throw new AppError("conflict", `body.reward: the reward of ${before.code} is fixed once created; create a new code for another reward`, {
          details: [{ field: "body.reward", problem: "cannot change after creation" }],
        });
    }
    if (input.max_claims !== undefined && input.max_claims < before.claims) throw capBelowClaims(before.code, input.max_claims, before.claims);
    if (input.audience_group !== undefined) await requireAudienceGroup(t, input.audience_group, "body.audience_group");
    const maxClaims = input.max_claims ?? before.max_claims;
    const row = await updatePromoRow(t, before.code, {
      max_claims: maxClaims,
      audience_group: input.audience_group ?? before.audience_group,
      expires_at: expiresAt === undefined ? before.expires_at : expiresAt,
      enabled: input.enabled === undefined ? before.enabled : input.enabled ? 1 : 0,
    });
    if (!row) throw capBelowClaims(before.code, maxClaims, before.claims);
    await auditOperator(t, admin, now, "messenger.promo.update", before.code, { before: promoView(before), after: promoView(row) });
    return { promo: promoView(row), created: false };
  });
}

export async function listPromos(ctx: AppContext, includeDisabled: boolean, input: PageInput = {}) {
  const page = parseKeyPage(input, ["text", "text"]);
  const [afterCreated, afterCode] = (page.after ?? [null, null]) as [string | null, string | null];
  const rows = await promosPage(ctx.store, { includeDisabled, afterCreated, afterCode, limit: page.limit + 1, offset: page.offset });
  const p = paged(rows.map(promoView), page, (row) => [row.created_at, row.code]);
  return adminListAnswer("promos", p, { include_disabled: includeDisabled });
}

export async function claimPromo(ctx: AppContext, telegramUserId: number, input: { request_id: string; code: string }) {
  const config = await gamesConfig(ctx);
  return inOwnTx(ctx, (s) => claimPromoIn(ctx, config, s, telegramUserId, input));
}

/** The claim inside the caller's transaction (a bot /start with a promo parameter); `config` read before it. */
export function claimPromoIn(ctx: AppContext, config: GamesConfig, s: ActionScope, telegramUserId: number, input: { request_id: string; code: string }) {
  return applyActionIn(
    s,
    { telegramUserId, requestId: input.request_id, action: "promo.claim", inputs: { code: input.code }, gameKey: null },
    async (player, scope) => {
      const { t, now } = scope;
      const promo = await enabledPromo(t, input.code);
      if (!promo) throw new AppError("promo_not_found", `No promo ${JSON.stringify(input.code)}`);
      if (promo.expires_at && promo.expires_at <= now)
        throw new AppError("promo_expired", `Promo ${promo.code} expired at ${promo.expires_at}`, { details: { expires_at: promo.expires_at } });
      if (!inAudience(player, promo.audience_group, config)) {
        throw new AppError("promo_not_eligible", `Promo ${promo.code} is for the ${promo.audience_group} audience group`, {
          details: { audience_group: promo.audience_group },
        });
      }
      if (!(await insertClaim(t, { code: promo.code, telegram_user_id: telegramUserId, claimed_at: now })))
        throw new AppError("promo_already_claimed", `This player already claimed ${promo.code}`);
      // The cap is enforced by the UPDATE's condition, so two claims racing for the last slot cannot both win.
      if (!(await countClaim(t, promo.code)))
        throw new AppError("promo_exhausted", `Promo ${promo.code} has been claimed ${promo.max_claims} times, its limit`, {
          details: { max_claims: promo.max_claims },
        });
      const reward = rewardOfRow(promo);
      await observeEvent(t, telegramUserId, "promo.claim");
      return {
        ...creditOf(reward),
        result: {
          promo: { code: promo.code, reward, claimed_at: now },
          salutes: await paySalutes(ctx, scope, player, promo.reward_salutes, "promo", promo.code),
        },
      };
    },
  );
}
