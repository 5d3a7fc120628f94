import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { foreignId } from "../db/columns";

/**
 * Short links. `code` is the public id (/s/audio/<code>, ≥ 80 random bits); every link expires. Signed links
 * carry an HMAC over code + expiry + destination that is checked on every resolve and redirect, so a row
 * altered outside the service (or a rotated key) never redirects.
 */
export const audioShareLinks = sqliteTable(
  "audio_share_links",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    code: text("code").notNull(),
    destinationUrl: text("destination_url").notNull(),
    source: text("source", { enum: ["track", "file"] }).notNull(),
    channel: text("channel"),
    title: text("title"),
    signed: integer("signed", { mode: "boolean" }).notNull(),
    signature: text("signature"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    revokeReason: text("revoke_reason"),
    revokedBy: text("revoked_by"),
  },
  (t) => [
    // Every redirect and resolve: WHERE code = ?
    uniqueIndex("audio_share_links_code_idx").on(t.code),
    // The prune job: WHERE expires_at < ?
    index("audio_share_links_expires_idx").on(t.expiresAt),
  ],
);

/** Redirect hits per link per UTC hour: human clicks (all and once per client), bot fetches and HEADs apart. */
export const audioShareLinkHits = sqliteTable(
  "audio_share_link_hits",
  {
    linkId: foreignId("link_id", () => audioShareLinks.id),
    hour: text("hour").notNull(),
    clicks: integer("clicks").notNull().default(0),
    uniqueClicks: integer("unique_clicks").notNull().default(0),
    botHits: integer("bot_hits").notNull().default(0),
    headHits: integer("head_hits").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.linkId, t.hour] })],
);

/**
 * Which clients already clicked a link in an hour: sha256(daily salt, IP, user agent) — never the raw IP. The
 * salt is derived from the signing key and the UTC day, so a hash cannot be brute-forced back to an IP, nor
 * linked across days. Rows older than two hours are pruned.
 */
export const audioShareClickSeen = sqliteTable(
  "audio_share_click_seen",
  {
    linkId: integer("link_id").notNull(),
    hour: text("hour").notNull(),
    clientHash: text("client_hash").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.linkId, t.hour, t.clientHash] }),
    // The prune job: WHERE hour < ? (the primary key leads with link_id: each batch would scan the table).
    index("audio_share_click_seen_hour_idx").on(t.hour),
  ],
);

/** Client-side share analytics (copy, share, open …) posted to /track; client_event_id dedupes retries. */
export const audioShareTrackEvents = sqliteTable(
  "audio_share_track_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    clientEventId: text("client_event_id").notNull(),
    eventType: text("event_type").notNull(),
    destinationUrl: text("destination_url").notNull(),
    linkId: integer("link_id"),
    channel: text("channel"),
    tokenId: integer("token_id"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    // Dedupe: WHERE client_event_id = ? AND created_at >= ? ORDER BY created_at
    index("audio_share_track_client_event_idx").on(t.clientEventId, t.createdAt),
    // Per-link stats: WHERE link_id = ? GROUP BY event_type; the prune's detach of expired links: WHERE link_id IN (…)
    index("audio_share_track_link_idx").on(t.linkId, t.eventType),
    // The prune job: WHERE created_at < ?
    index("audio_share_track_created_idx").on(t.createdAt),
  ],
);

/** Bearer tokens for /track, issued by operators; only the SHA-256 hash is stored. */
export const audioShareTrackTokens = sqliteTable(
  "audio_share_track_tokens",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull(),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by").notNull(),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("audio_share_track_tokens_hash_idx").on(t.tokenHash)],
);
