import { countOf, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { messengerAudienceGroups, messengerCatalogCampaigns, messengerWheelCampaigns } from "../config/tables";

// The games configuration's tables (messenger_audience_groups, messenger_catalog_campaigns,
// messenger_wheel_campaigns): the only SQL that touches them. Every write here runs in a transaction that also
// bumps the games_config version (src/messenger/config/cache.ts), so other instances drop their copy.

export type AudienceGroupRow = RowOf<typeof messengerAudienceGroups>;
export type CatalogCampaignRow = RowOf<typeof messengerCatalogCampaigns>;
export type WheelCampaignRow = RowOf<typeof messengerWheelCampaigns>;

// ---- what the player routes' cached copy is made of ----

export const allAudienceGroups = (q: Queryable) => q.all<AudienceGroupRow>("SELECT * FROM messenger_audience_groups");
export const enabledCatalogCampaigns = (q: Queryable) =>
  q.all<CatalogCampaignRow>("SELECT * FROM messenger_catalog_campaigns WHERE enabled = 1 ORDER BY starts_at, id");
export const enabledWheelCampaigns = (q: Queryable) =>
  q.all<WheelCampaignRow>("SELECT * FROM messenger_wheel_campaigns WHERE enabled = 1 ORDER BY starts_at DESC, campaign_key");

// ---- audience groups ----

export async function audienceGroupExists(q: Queryable, key: string): Promise<boolean> {
  return (await q.get("SELECT 1 AS one FROM messenger_audience_groups WHERE group_key = ?", [key])) !== null;
}

export const audienceGroupByKey = (q: Queryable, key: string) => q.get<AudienceGroupRow>("SELECT * FROM messenger_audience_groups WHERE group_key = ?", [key]);

/** Keys after `afterKey` (a keyset cursor; null for offset paging), by key. */
export const audienceGroupsPage = (q: Queryable, afterKey: string | null, limit: number, offset: number) =>
  q.all<AudienceGroupRow>("SELECT * FROM messenger_audience_groups WHERE CAST(? AS text) IS NULL OR group_key > ? ORDER BY group_key LIMIT ? OFFSET ?", [
    afterKey,
    afterKey,
    limit,
    offset,
  ]);

export const countAudienceGroups = (q: Queryable) => countOf(q, "SELECT COUNT(*) AS n FROM messenger_audience_groups");

export async function updateAudienceGroup(t: Queryable, key: string, title: string, rule: string): Promise<AudienceGroupRow> {
  return (await t.get<AudienceGroupRow>("UPDATE messenger_audience_groups SET title = ?, rule = ? WHERE group_key = ? RETURNING *", [title, rule, key]))!;
}

export async function insertAudienceGroup(t: Queryable, g: AudienceGroupRow): Promise<AudienceGroupRow> {
  return (await t.get<AudienceGroupRow>(
    "INSERT INTO messenger_audience_groups (group_key, title, rule, created_by, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *",
    [g.group_key, g.title, g.rule, g.created_by, g.created_at],
  ))!;
}

// ---- catalog campaigns ----

export const catalogCampaignById = (q: Queryable, id: number) => q.get<CatalogCampaignRow>("SELECT * FROM messenger_catalog_campaigns WHERE id = ?", [id]);

/** Latest start first; the cursor is the last row's [starts_at, id]; absent filters are NULL and switch themselves off. */
export const catalogCampaignsPage = (
  q: Queryable,
  f: { gameKey: string | null; includeDisabled: boolean; afterStart: string | null; afterId: number | null; limit: number; offset: number },
) =>
  q.all<CatalogCampaignRow>(
    `SELECT * FROM messenger_catalog_campaigns WHERE (CAST(? AS text) IS NULL OR game_key = ?) AND (enabled = 1 OR ? = 1)
       AND (CAST(? AS text) IS NULL OR starts_at < ? OR (starts_at = ? AND id < ?))
     ORDER BY starts_at DESC, id DESC LIMIT ? OFFSET ?`,
    [f.gameKey, f.gameKey, f.includeDisabled ? 1 : 0, f.afterStart, f.afterStart, f.afterStart, f.afterId ?? 0, f.limit, f.offset],
  );

/** A game's campaigns, newest first, disabled ones included (the catalog preview's admin view). */
export const catalogCampaignsOfGame = (q: Queryable, gameKey: string, limit: number) =>
  q.all<CatalogCampaignRow>("SELECT * FROM messenger_catalog_campaigns WHERE game_key = ? ORDER BY starts_at DESC, id DESC LIMIT ?", [gameKey, limit]);

/** The other enabled campaigns of one game and audience (a new window must not overlap theirs). */
export const otherEnabledCatalogCampaigns = (q: Queryable, gameKey: string, audienceGroup: string, exceptId: number) =>
  q.all<CatalogCampaignRow>("SELECT * FROM messenger_catalog_campaigns WHERE game_key = ? AND audience_group = ? AND enabled = 1 AND id <> ?", [
    gameKey,
    audienceGroup,
    exceptId,
  ]);

type CatalogFields = Pick<CatalogCampaignRow, "game_key" | "audience_group" | "title" | "starts_at" | "ends_at" | "enabled">;
const catalogArgs = (c: CatalogFields) => [c.game_key, c.audience_group, c.title, c.starts_at, c.ends_at, c.enabled];

export async function updateCatalogCampaign(t: Queryable, id: number, c: CatalogFields): Promise<CatalogCampaignRow> {
  return (await t.get<CatalogCampaignRow>(
    "UPDATE messenger_catalog_campaigns SET game_key = ?, audience_group = ?, title = ?, starts_at = ?, ends_at = ?, enabled = ? WHERE id = ? RETURNING *",
    [...catalogArgs(c), id],
  ))!;
}

export async function insertCatalogCampaign(t: Queryable, c: CatalogFields, createdBy: string, at: string): Promise<CatalogCampaignRow> {
  return (await t.get<CatalogCampaignRow>(
    `INSERT INTO messenger_catalog_campaigns (game_key, audience_group, title, starts_at, ends_at, enabled, created_by, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [...catalogArgs(c), createdBy, at],
  ))!;
}

// ---- wheel campaigns ----

export const wheelCampaignByKey = (q: Queryable, key: string) =>
  q.get<WheelCampaignRow>("SELECT * FROM messenger_wheel_campaigns WHERE campaign_key = ?", [key]);

/** Latest start first, then by key; the cursor is the last row's [starts_at, campaign_key]. */
export const wheelCampaignsPage = (
  q: Queryable,
  f: { includeDisabled: boolean; afterStart: string | null; afterKey: string | null; limit: number; offset: number },
) =>
  q.all<WheelCampaignRow>(
    `SELECT * FROM messenger_wheel_campaigns WHERE (enabled = 1 OR ? = 1)
       AND (CAST(? AS text) IS NULL OR starts_at < ? OR (starts_at = ? AND campaign_key > ?))
     ORDER BY starts_at DESC, campaign_key LIMIT ? OFFSET ?`,
    [f.includeDisabled ? 1 : 0, f.afterStart, f.afterStart, f.afterStart, f.afterKey ?? "", f.limit, f.offset],
  );

/** Every wheel campaign, newest first, disabled ones included (the catalog preview's admin view). */
export const newestWheelCampaigns = (q: Queryable, limit: number) =>
  q.all<WheelCampaignRow>("SELECT * FROM messenger_wheel_campaigns ORDER BY starts_at DESC, campaign_key LIMIT ?", [limit]);

export const otherEnabledWheelCampaigns = (q: Queryable, audienceGroup: string, exceptKey: string) =>
  q.all<WheelCampaignRow>("SELECT * FROM messenger_wheel_campaigns WHERE audience_group = ? AND enabled = 1 AND campaign_key <> ?", [audienceGroup, exceptKey]);

export async function wheelSegmentsText(q: Queryable, key: string): Promise<string | null> {
  return (await q.get<Pick<WheelCampaignRow, "segments">>("SELECT segments FROM messenger_wheel_campaigns WHERE campaign_key = ?", [key]))?.segments ?? null;
}

type WheelFields = Pick<WheelCampaignRow, "title" | "audience_group" | "starts_at" | "ends_at" | "cooldown_seconds" | "segments" | "enabled">;
const wheelArgs = (w: WheelFields) => [w.title, w.audience_group, w.starts_at, w.ends_at, w.cooldown_seconds, w.segments, w.enabled];

export async function updateWheelCampaign(t: Queryable, key: string, w: WheelFields): Promise<WheelCampaignRow> {
  return (await t.get<WheelCampaignRow>(
    `UPDATE messenger_wheel_campaigns SET title = ?, audience_group = ?, starts_at = ?, ends_at = ?, cooldown_seconds = ?, segments = ?, enabled = ?
     WHERE campaign_key = ? RETURNING *`,
    [...wheelArgs(w), key],
  ))!;
}

export async function insertWheelCampaign(t: Queryable, key: string, w: WheelFields, createdBy: string, at: string): Promise<WheelCampaignRow> {
  return (await t.get<WheelCampaignRow>(
    `INSERT INTO messenger_wheel_campaigns (title, audience_group, starts_at, ends_at, cooldown_seconds, segments, enabled, campaign_key, created_by, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [...wheelArgs(w), key, createdBy, at],
  ))!;
}
