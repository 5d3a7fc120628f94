// Catalog campaigns (GET/POST /api/messenger/admin/games/catalog-campaigns): which audience may launch which game,
// and when. A game with no enabled campaign is open to its built-in audience; a game with one or more is
// launchable only by a player inside one that is active now — the others still see it in the catalog, marked
// unavailable with the reason (docs/messenger-admin-games.md "Catalog campaigns").
import type { Static } from "elysia";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors/errors";
import { parseKeyPage } from "../../http/pagination";
import { inAudience } from "../catalog";
import type { AudiencePlayer } from "./audience-rule";
import { requireAudienceGroup } from "./audiences";
import { catalogCampaignById, catalogCampaignsPage, insertCatalogCampaign, otherEnabledCatalogCampaigns, updateCatalogCampaign } from "../store/config";
import { type CatalogCampaignRow, type GamesConfig, inWindow, windowsOverlap, writeGamesConfig } from "./cache";
import { adminListAnswer, badField, isoOrThrow, type PageInput, paged } from "./inputs";
import { CatalogCampaign, type GamesConfigModel } from "./model";
import { schemaView } from "../../http/schema-view";

export const campaignView = (c: CatalogCampaignRow, nowIso: string) =>
  schemaView(CatalogCampaign, c, { enabled: c.enabled === 1, active_now: c.enabled === 1 && inWindow(c, nowIso) });

export interface CampaignAccess {
  /** The game has at least one enabled campaign, so only campaign audiences may launch it. */
  gated: boolean;
  allowed: boolean;
  /** The campaign that lets this player in (the latest started, when several do). */
  campaign: CatalogCampaignRow | null;
  reason: string | null;
}

/** Whether this player may launch the game now, from the loaded configuration (no query). */
export function catalogAccess(config: GamesConfig, player: AudiencePlayer, gameKey: string, nowIso: string): CampaignAccess {
  const campaigns = config.catalogCampaigns.filter((c) => c.game_key === gameKey);
  if (campaigns.length === 0) return { gated: false, allowed: true, campaign: null, reason: null };
  const mine = campaigns.filter((c) => inAudience(player, c.audience_group, config));
  const active = mine.filter((c) => inWindow(c, nowIso)).sort((a, b) => (a.starts_at < b.starts_at ? 1 : -1));
  if (active[0]) return { gated: true, allowed: true, campaign: active[0], reason: null };
  const next = mine.filter((c) => c.starts_at > nowIso)[0];
  const reason = next
    ? `opens for you at ${next.starts_at} (campaign ${JSON.stringify(next.title)})`
    : `limited to campaigns for the audience groups ${[...new Set(campaigns.map((c) => c.audience_group))].join(", ")}; none is open to you now`;
  return { gated: true, allowed: false, campaign: null, reason };
}

/** The launch check of a gated game's play routes: 403 game_not_in_campaign with the reason. */
export function requireCatalogAccess(config: GamesConfig, player: AudiencePlayer, gameKey: string, nowIso: string): void {
  const access = catalogAccess(config, player, gameKey, nowIso);
  if (!access.allowed)
    throw new AppError("game_not_in_campaign", `${gameKey} is not open to this player now: ${access.reason}`, {
      details: { game_key: gameKey, reason: access.reason },
    });
}

export async function listCatalogCampaigns(ctx: AppContext, filter: { game_key?: string; include_disabled: boolean }, input: PageInput) {
  const now = ctx.clock.now().toISOString();
  const page = parseKeyPage(input, ["text", "integer"]);
  const [afterStart, afterId] = page.after ?? [null, null];
  const rows = await catalogCampaignsPage(ctx.store, {
    gameKey: filter.game_key ?? null,
    includeDisabled: filter.include_disabled,
    afterStart: afterStart as string | null,
    afterId: afterId as number | null,
    limit: page.limit + 1,
    offset: page.offset,
  });
  const p = paged(
    rows.map((r) => campaignView(r, now)),
    page,
    (c) => [c.starts_at, c.id],
  );
  return adminListAnswer("campaigns", p, { game_key: filter.game_key ?? null, include_disabled: filter.include_disabled });
}

/** The enabled campaigns of `others` whose window overlaps `c`'s: 409 campaign_overlap naming them. */
export function refuseOverlap<T extends { starts_at: string; ends_at: string | null }>(
  c: { starts_at: string; ends_at: string | null },
  others: T[],
  describe: (o: T) => Record<string, unknown>,
  what: string,
): void {
  const conflicting = others.filter((o) => windowsOverlap(c, o));
  if (conflicting.length === 0) return;
  throw new AppError(
    "campaign_overlap",
    `body.starts_at/body.ends_at: the window ${c.starts_at} – ${c.ends_at ?? "open"} overlaps ${conflicting.length} enabled ${what} for the same audience group`,
    { details: { field: "body.starts_at", conflicting: conflicting.slice(0, 20).map(describe) } },
  );
}

/**
 * A saved campaign's window and state, catalog or wheel: the fields sent checked, the others kept (a new campaign
 * starts now, open-ended and enabled).
 */
export function campaignWindowOrThrow(
  input: { starts_at?: string; ends_at?: string | null; enabled?: boolean },
  before: { starts_at: string; ends_at: string | null; enabled: number } | null,
  now: string,
) {
  const starts_at = input.starts_at !== undefined ? isoOrThrow(input.starts_at, "body.starts_at") : (before?.starts_at ?? now);
  const ends_at = input.ends_at !== undefined ? (input.ends_at === null ? null : isoOrThrow(input.ends_at, "body.ends_at")) : (before?.ends_at ?? null);
  if (ends_at !== null && ends_at <= starts_at) throw badField("body.ends_at", `must be after starts_at (${starts_at})`);
  return { starts_at, ends_at, enabled: input.enabled !== undefined ? (input.enabled ? 1 : 0) : (before?.enabled ?? 1) };
}

export async function saveCatalogCampaign(ctx: AppContext, admin: AdminRequest, input: Static<typeof GamesConfigModel.campaignBody>) {
  const audit = { action: "messenger.catalog_campaign", target: (c: CatalogCampaignRow) => String(c.id), view: campaignView };
  const { view, created } = await writeGamesConfig(ctx, admin, audit, async (t, now) => {
    const before = input.id === undefined ? null : await catalogCampaignById(t, input.id);
    if (input.id !== undefined && !before)
      throw new AppError("campaign_not_found", `body.id: no catalog campaign ${input.id}`, { details: [{ field: "body.id", problem: "no such campaign" }] });
    for (const field of ["game_key", "audience_group", "title"] as const)
      if (!before && input[field] === undefined) throw badField(`body.${field}`, "is required when creating a campaign (no id)");
    const next = {
      game_key: input.game_key ?? before!.game_key,
      audience_group: input.audience_group ?? before!.audience_group,
      title: input.title ?? before!.title,
      ...campaignWindowOrThrow(input, before, now),
    };
    await requireAudienceGroup(t, next.audience_group, "body.audience_group");
    if (next.enabled === 1) {
      const others = await otherEnabledCatalogCampaigns(t, next.game_key, next.audience_group, before?.id ?? 0);
      refuseOverlap(next, others, (o) => campaignView(o, now), "catalog campaign(s) of this game");
    }
    return { before, row: before ? await updateCatalogCampaign(t, before.id, next) : await insertCatalogCampaign(t, next, actorLabel(admin.actor), now) };
  });
  return { campaign: view, created };
}
