import type { Param, Queryable } from "../../db/port";

// The hit recorder's flush (src/audio-share/hits.ts): in one transaction, claim each new client of a link-hour in
// audio_share_click_seen (ON CONFLICT DO NOTHING: the row is the claim, so a client counts once across every
// instance), then add the buffered counts to audio_share_link_hits with `count = count + excluded.count` — an
// increment, never a value read and written back — so several instances flushing the same link-hour stay exact.
// Rows go in (link, hour, client) order in both statements, so two instances' flushes lock rows in the same
// order and cannot deadlock each other.

export interface FlushBucket {
  linkId: number;
  hour: string;
  clicks: number;
  bot: number;
  head: number;
  /** Client hashes first seen by this instance in the hour: the database decides which are new. */
  candidates: string[];
}

/** Rows per statement: 3 or 6 parameters each, well under both engines' limits on bound parameters. */
const BATCH = 1000;

const byKey = (a: { linkId: number; hour: string }, b: { linkId: number; hour: string }) =>
  a.linkId - b.linkId || (a.hour < b.hour ? -1 : a.hour > b.hour ? 1 : 0);

export async function writeHits(t: Queryable, buckets: readonly FlushBucket[]): Promise<void> {
  const sorted = [...buckets].sort(byKey);
  const claims = sorted.flatMap((b) => [...new Set(b.candidates)].sort().map((hash) => [b.linkId, b.hour, hash] as const));
  const unique = new Map<string, number>();
  for (let i = 0; i < claims.length; i += BATCH) {
    const batch = claims.slice(i, i + BATCH);
    const won = await t.all<{ link_id: number; hour: string }>(
      `INSERT INTO audio_share_click_seen (link_id, hour, client_hash) VALUES ${batch.map(() => "(?, ?, ?)").join(", ")}
       ON CONFLICT (link_id, hour, client_hash) DO NOTHING RETURNING link_id, hour`,
      batch.flat() as Param[],
    );
    for (const w of won) unique.set(`${w.link_id} ${w.hour}`, (unique.get(`${w.link_id} ${w.hour}`) ?? 0) + 1);
  }
  for (let i = 0; i < sorted.length; i += BATCH) {
    const batch = sorted.slice(i, i + BATCH);
    await t.run(
      `INSERT INTO audio_share_link_hits (link_id, hour, clicks, unique_clicks, bot_hits, head_hits) VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?)").join(", ")}
       ON CONFLICT (link_id, hour) DO UPDATE SET clicks = audio_share_link_hits.clicks + excluded.clicks,
         unique_clicks = audio_share_link_hits.unique_clicks + excluded.unique_clicks, bot_hits = audio_share_link_hits.bot_hits + excluded.bot_hits,
         head_hits = audio_share_link_hits.head_hits + excluded.head_hits`,
      batch.flatMap((b) => [b.linkId, b.hour, b.clicks, unique.get(`${b.linkId} ${b.hour}`) ?? 0, b.bot, b.head]),
    );
  }
}
