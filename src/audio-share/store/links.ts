import { type BatchBound, deleteInBatches, unfinished } from "../../db/batched-delete";
import { changed, type Queryable, type Store } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { audioShareLinkHits, audioShareLinks } from "../tables";

// audio_share_links and the reads of its hit counts: lookup by code (the redirect's, cached in short-links.ts),
// creation (the unique index on code is the claim: a collision is a UniqueViolation the caller retries),
// revocation (conditional, so of two operators one revokes), stats, health and pruning.

export type LinkRow = RowOf<typeof audioShareLinks>;
export type HitRow = Pick<RowOf<typeof audioShareLinkHits>, "hour" | "clicks" | "unique_clicks" | "bot_hits" | "head_hits">;

export function linkByCode(q: Queryable, code: string): Promise<LinkRow | null> {
  return q.get<LinkRow>("SELECT * FROM audio_share_links WHERE code = ?", [code]);
}

export type NewLink = Pick<LinkRow, "code" | "destination_url" | "source" | "channel" | "title" | "signed" | "signature" | "created_at" | "expires_at">;

/** The new row; throws UniqueViolation when the code is taken (by any instance). */
export async function insertLink(q: Queryable, l: NewLink): Promise<LinkRow> {
  const row = await q.get<LinkRow>(
    `INSERT INTO audio_share_links (code, destination_url, source, channel, title, signed, signature, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [l.code, l.destination_url, l.source, l.channel, l.title, l.signed, l.signature, l.created_at, l.expires_at],
  );
  return row!;
}

export function revocationOf(q: Queryable, id: number) {
  return q.get<Pick<LinkRow, "revoked_at" | "revoke_reason">>("SELECT revoked_at, revoke_reason FROM audio_share_links WHERE id = ?", [id]);
}

/** Revokes a live link; false when it was revoked already (by another request meanwhile, or before). */
export async function revoke(t: Queryable, id: number, at: string, reason: string, by: string): Promise<boolean> {
  return changed(t, "UPDATE audio_share_links SET revoked_at = ?, revoke_reason = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL", [at, reason, by, id]);
}

/** Every hit of the link, and its hours from `sinceHour` on, oldest first. */
export async function hitsOf(q: Queryable, linkId: number, sinceHour: string): Promise<{ totals: Omit<HitRow, "hour">; hourly: HitRow[] }> {
  const totals = await q.get<Omit<HitRow, "hour">>(
    `SELECT coalesce(sum(clicks), 0) AS clicks, coalesce(sum(unique_clicks), 0) AS unique_clicks, coalesce(sum(bot_hits), 0) AS bot_hits,
       coalesce(sum(head_hits), 0) AS head_hits
     FROM audio_share_link_hits WHERE link_id = ?`,
    [linkId],
  );
  const hourly = await q.all<HitRow>(
    "SELECT hour, clicks, unique_clicks, bot_hits, head_hits FROM audio_share_link_hits WHERE link_id = ? AND hour >= ? ORDER BY hour ASC",
    [linkId, sinceHour],
  );
  return { totals: totals ?? { clicks: 0, unique_clicks: 0, bot_hits: 0, head_hits: 0 }, hourly };
}

/**
 * The links stored, and those neither revoked nor expired at `now` (down audio_share_links_expires_idx), each counted
 * up to `cap` + 1 (more than `cap` means "at least that many"). For GET /health, which anyone may call: an exact count
 * would read every link kept, or every one of the last 30 days (a link lives 30 days at most).
 */
export async function linkCounts(q: Queryable, now: string, cap: number): Promise<{ total: number; active: number }> {
  const row = await q.get<{ total: number; active: number }>(
    `SELECT (SELECT count(*) FROM (SELECT 1 FROM audio_share_links LIMIT ?) capped) AS total,
       (SELECT count(*) FROM (SELECT 1 FROM audio_share_links WHERE expires_at > ? AND revoked_at IS NULL LIMIT ?) live) AS active`,
    [cap + 1, now, cap + 1],
  );
  return { total: Number(row?.total ?? 0), active: Number(row?.active ?? 0) };
}

/**
 * The prune job's deletes, each in bounded batches (src/db/batched-delete.ts), each down its index: click dedupe rows
 * before `seenBefore`, track events before `eventsBefore`, and links that expired before `linksBefore` with their
 * hits, a batch of links and their hits in one transaction (their track events keep their counts but lose the
 * link). `done: false` when a time bound left rows for the next run.
 */
export async function prune(store: Store, seenBefore: string, eventsBefore: string, linksBefore: string, bound: BatchBound = {}) {
  const seen = await deleteInBatches(store, { table: "audio_share_click_seen", where: "hour < ?", params: [seenBefore], ...bound });
  const events = await deleteInBatches(store, { table: "audio_share_track_events", where: "created_at < ?", params: [eventsBefore], ...bound });
  const links = await deleteInBatches(store, {
    table: "audio_share_links",
    key: "id",
    where: "expires_at < ?",
    params: [linksBefore],
    children: [
      { table: "audio_share_track_events", column: "link_id", action: "detach" },
      { table: "audio_share_link_hits", column: "link_id" },
    ],
    ...bound,
  });
  const hits = links.children.audio_share_link_hits ?? 0;
  return { seen: seen.deleted, events: events.deleted, hits, links: links.deleted, ...unfinished(seen, events, links) };
}
