import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { madeBy } from "../../db/columns";

// The operator's games configuration that the player routes read (src/messenger/config/): audience groups,
// catalog campaigns and wheel campaigns.

/**
 * Operator-made audience groups, beside the built-in `all`, `premium`, `linked` and `unlinked`: a rule over the
 * player (JSON: premium, linked, language codes, points earned, listed Telegram user ids…), documented in
 * docs/messenger-admin.md. Campaigns, promos and missions name a group by its key.
 */
export const messengerAudienceGroups = sqliteTable("messenger_audience_groups", {
  groupKey: text("group_key").primaryKey(),
  title: text("title").notNull(),
  rule: text("rule").notNull(),
  ...madeBy(),
});

/** Which audience sees a game, and when: a game with campaigns is launchable only inside an active one. */
export const messengerCatalogCampaigns = sqliteTable(
  "messenger_catalog_campaigns",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    gameKey: text("game_key").notNull(),
    audienceGroup: text("audience_group").notNull(),
    title: text("title").notNull(),
    startsAt: text("starts_at").notNull(),
    /** Null: open-ended. */
    endsAt: text("ends_at"),
    enabled: integer("enabled").notNull().default(1),
    ...madeBy(),
  },
  (t) => [index("messenger_catalog_campaigns_game_idx").on(t.gameKey, t.startsAt)],
);

/** Operator-made wheel campaigns: segments (label, weight, reward) as JSON, for an audience and a window. */
export const messengerWheelCampaigns = sqliteTable("messenger_wheel_campaigns", {
  campaignKey: text("campaign_key").primaryKey(),
  title: text("title").notNull(),
  audienceGroup: text("audience_group").notNull(),
  startsAt: text("starts_at").notNull(),
  endsAt: text("ends_at"),
  cooldownSeconds: integer("cooldown_seconds").notNull(),
  segments: text("segments").notNull(),
  enabled: integer("enabled").notNull().default(1),
  ...madeBy(),
});
