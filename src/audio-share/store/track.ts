import { apartTask } from "../../db/apart";
import { changed, type Dialect, type Queryable } from "../../db/port";
import type { RowOf } from "../../db/rows";
import type { audioShareTrackEvents, audioShareTrackTokens } from "../tables";

// /track's tables: the operators' bearer tokens (stored hashed) and the share events with their client_event_id
// dedupe window.

type TokenRow = RowOf<typeof audioShareTrackTokens>;
export type TrackTokenView = Omit<TokenRow, "token_hash">;
type EventRow = RowOf<typeof audioShareTrackEvents>;

const TOKEN_COLUMNS = "id, name, created_at, created_by, last_used_at, revoked_at";

export function liveTokenIdByHash(q: Queryable, tokenHash: string) {
  return q.get<Pick<TokenRow, "id">>("SELECT id FROM audio_share_track_tokens WHERE token_hash = ? AND revoked_at IS NULL", [tokenHash]);
}

export async function touchToken(q: Queryable, id: number, at: string): Promise<void> {
  await q.run("UPDATE audio_share_track_tokens SET last_used_at = ? WHERE id = ?", [at, id]);
}

export async function insertToken(t: Queryable, name: string, tokenHash: string, at: string, by: string): Promise<TrackTokenView> {
  const row = await t.get<TrackTokenView>(
    `INSERT INTO audio_share_track_tokens (name, token_hash, created_at, created_by) VALUES (?, ?, ?, ?) RETURNING ${TOKEN_COLUMNS}`,
    [name, tokenHash, at, by],
  );
  return row!;
}

/** A page of tokens, newest first, LIMIT `limit`: below id `before` (the previous page's last token) or from `offset`. */
export function tokensPage(q: Queryable, p: { before: number | null; limit: number; offset: number }): Promise<TrackTokenView[]> {
  if (p.before === null)
    return q.all<TrackTokenView>(`SELECT ${TOKEN_COLUMNS} FROM audio_share_track_tokens ORDER BY id DESC LIMIT ? OFFSET ?`, [p.limit, p.offset]);
  return q.all<TrackTokenView>(`SELECT ${TOKEN_COLUMNS} FROM audio_share_track_tokens WHERE id < ? ORDER BY id DESC LIMIT ?`, [p.before, p.limit]);
}

export function tokenById(q: Queryable, id: number): Promise<TrackTokenView | null> {
  return q.get<TrackTokenView>(`SELECT ${TOKEN_COLUMNS} FROM audio_share_track_tokens WHERE id = ?`, [id]);
}

/** Revokes a live token; false when it was revoked already. */
export async function revokeToken(t: Queryable, id: number, at: string): Promise<boolean> {
  return changed(t, "UPDATE audio_share_track_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [at, id]);
}

/** pg_advisory_xact_lock's first key for the dedupe locks ("audi" in ASCII); the second is the event id's hash. */
const TRACK_DEDUPE_LOCK_CLASS = 0x61_75_64_69;

/**
 * PostgreSQL: makes the transactions recording one client_event_id take turns (a transaction-scoped advisory lock
 * on the id's hash, released at commit), so that two instances receiving the same retry at once cannot both find
 * no earlier event and both record it. A unique index cannot say "once per dedupe window", hence the lock; SQLite
 * needs nothing, as its transactions hold the one write lock from BEGIN IMMEDIATE. (Two-key locks never meet the
 * one-key locks other code takes.)
 */
const SERIALIZE_EVENT_ID_POSTGRES = "SELECT pg_advisory_xact_lock(CAST(? AS integer), hashtext(?))";

export async function serializeEventId(t: Queryable, dialect: Dialect, clientEventId: string): Promise<void> {
  if (dialect === "postgres") await t.get(SERIALIZE_EVENT_ID_POSTGRES, [TRACK_DEDUPE_LOCK_CLASS, clientEventId]);
}

/** The first event with this client_event_id recorded after `since`, if any. */
export function firstEventSince(t: Queryable, clientEventId: string, since: string) {
  return t.get<Pick<EventRow, "id" | "created_at">>(
    "SELECT id, created_at FROM audio_share_track_events WHERE client_event_id = ? AND created_at > ? ORDER BY created_at ASC, id ASC LIMIT 1",
    [clientEventId, since],
  );
}

export type NewEvent = Omit<EventRow, "id">;

export async function insertEvent(t: Queryable, e: NewEvent): Promise<Pick<EventRow, "id" | "created_at">> {
  const row = await t.get<Pick<EventRow, "id" | "created_at">>(
    `INSERT INTO audio_share_track_events (client_event_id, event_type, destination_url, link_id, channel, token_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id, created_at`,
    [e.client_event_id, e.event_type, e.destination_url, e.link_id, e.channel, e.token_id, e.created_at],
  );
  return row!;
}

export function eventCountsOf(q: Queryable, linkId: number) {
  return q.all<{ event_type: string; n: number }>(
    "SELECT event_type, count(*) AS n FROM audio_share_track_events WHERE link_id = ? GROUP BY event_type ORDER BY event_type",
    [linkId],
  );
}

/**
 * eventCountsOf apart from the event loop (src/db/apart.ts): a link keeps its track events 90 days, every one of them
 * counted (the public stats held /healthz ~105 ms at 2,000,000 events of one link on SQLite before).
 */
export const eventCountsTask = apartTask("audio-share-event-counts", (q, a: { linkId: number }) => eventCountsOf(q, a.linkId));
