// GET /api/messenger/admin/games/catalog-preview: what a player — a real one, or a hypothetical one with a given
// link state — sees in the mini-app catalog and on the wheel now, and why: each campaign considered, whether its
// audience group and window matched, and each group's failed rule conditions. Read-only: it creates no player.
import type { AppContext } from "../../context";
import { GAMES, inAudience } from "../catalog";
import { type AudiencePlayer, BUILTIN_AUDIENCE_GROUPS, builtinMatches, failedConditions, isBuiltinGroup } from "../config/audience-rule";
import { type CatalogCampaignRow, gamesConfig, inWindow, type WheelCampaignRow } from "../config/cache";
import { catalogAccess } from "../config/campaigns";
import { activeWheel, expectedValue } from "../config/wheel-campaigns";
import { catalogOf } from "../games/games";
import { blankPlayer, getPlayer } from "../players";
import { catalogCampaignsOfGame, newestWheelCampaigns } from "../store/config";
import { ConsideredCampaign } from "../config/model";
import { schemaView } from "../../http/schema-view";

/** How many campaigns per game (and wheel campaigns) the admin view lists, newest first. */
const MAX_LISTED = 50;

export async function catalogPreview(ctx: AppContext, q: { telegram_user_id?: number; linked_user_id?: number; admin_view: boolean }) {
  const nowDate = ctx.clock.now();
  const now = nowDate.toISOString();
  const stored = q.telegram_user_id === undefined ? null : await getPlayer(ctx.store, q.telegram_user_id);
  let player = stored ?? blankPlayer({ telegramUserId: q.telegram_user_id ?? 0 }, now);
  if (q.linked_user_id !== undefined) player = { ...player, linked_user_id: q.linked_user_id === 0 ? null : q.linked_user_id };
  const config = await gamesConfig(ctx);
  const member = (group: string) => inAudience(player, group, config);

  const campaignsByGame = new Map<string, CatalogCampaignRow[]>();
  for (const g of GAMES)
    campaignsByGame.set(
      g.game_key,
      q.admin_view ? await catalogCampaignsOfGame(ctx.store, g.game_key, MAX_LISTED) : config.catalogCampaigns.filter((c) => c.game_key === g.game_key),
    );
  const catalog = catalogOf(config, player, nowDate);
  const referenced = new Set<string>(BUILTIN_AUDIENCE_GROUPS);
  /** What the preview says of every campaign it considered, catalog or wheel (its audience group is listed below). */
  const considered = (c: Pick<WheelCampaignRow, "title" | "audience_group" | "starts_at" | "ends_at" | "enabled">) => {
    referenced.add(c.audience_group);
    return schemaView(ConsideredCampaign, c, { enabled: c.enabled === 1, in_audience: member(c.audience_group), in_window: inWindow(c, now) });
  };
  const explain = GAMES.map((g) => {
    const access = catalogAccess(config, player, g.game_key, now);
    const campaigns = campaignsByGame.get(g.game_key)!.map((c) => ({ id: c.id, ...considered(c), matched: access.campaign?.id === c.id }));
    return {
      game_key: g.game_key,
      builtin_audience_group: g.audience_group,
      in_builtin_audience: member(g.audience_group),
      gated: access.gated,
      allowed: access.allowed,
      matched_campaign_id: access.campaign?.id ?? null,
      reason: access.reason,
      campaigns,
    };
  });

  const wheel = activeWheel(config, player, now);
  const wheelRows: Array<Pick<WheelCampaignRow, "campaign_key" | "title" | "audience_group" | "starts_at" | "ends_at" | "enabled">> = q.admin_view
    ? await newestWheelCampaigns(ctx.store, MAX_LISTED)
    : config.wheelCampaigns;
  const candidates = wheelRows.map((w) => ({ campaign_key: w.campaign_key, ...considered(w), applies: w.campaign_key === wheel.campaign_key }));

  const groupKeys = q.admin_view ? [...BUILTIN_AUDIENCE_GROUPS, ...[...config.groups.keys()].sort().slice(0, 200)] : [...referenced];
  const groups = groupKeys.map((key) => {
    const rule = config.groups.get(key);
    const failed = isBuiltinGroup(key)
      ? builtinMatches(key, player)
        ? []
        : [key]
      : rule
        ? failedConditions(rule, player as AudiencePlayer)
        : ["unknown_group"];
    return { group_key: key, builtin: isBuiltinGroup(key), member: failed.length === 0, failed_conditions: failed };
  });

  return {
    at: now,
    admin_view: q.admin_view,
    player: {
      telegram_user_id: q.telegram_user_id ?? null,
      exists: stored !== null,
      hypothetical: stored === null || q.linked_user_id !== undefined,
      is_premium: player.is_premium === 1,
      linked_user_id: player.linked_user_id === null ? null : String(player.linked_user_id),
      language_code: player.language_code,
      points_earned: player.points_earned,
      created_at: player.created_at,
    },
    games: catalog.games,
    explain,
    wheel: {
      campaign_key: wheel.campaign_key,
      title: wheel.title,
      source: wheel.source,
      cooldown_seconds: wheel.cooldown_seconds,
      expected_value: expectedValue(wheel.segments),
      candidates,
    },
    audience_groups: groups,
  };
}
