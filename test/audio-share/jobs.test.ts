import { afterEach, expect, test } from "bun:test";
import { pruneAudioShare } from "../../src/audio-share/jobs";
import type { TestApp } from "../support/app";
import { API, audioApp, BROWSER_UA, jsonPost, shortLink } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const count = async (table: string) => (await h.ctx.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
const counts = (...tables: string[]) => Promise.all(tables.map(count));

test("prune: click dedupe after 2 h, track events after 90 days, links and their stats 90 days after expiry", async () => {
  h = await audioApp();
  expect(h.ctx.jobs.has("audio-share-prune")).toBe(true);
  const old = await shortLink(h, { expires_in: 60 });
  const kept = await shortLink(h, { expires_in: 2_592_000 });
  await h.request(`/s/audio/${old.short_code}`, { headers: { "user-agent": BROWSER_UA } });
  await h.request(`/s/audio/${kept.short_code}`, { headers: { "user-agent": BROWSER_UA } });
  await h.json(`${API}/track`, jsonPost({ event_type: "copy", destination_url: old.short_url, client_event_id: "evt-prune-0001" }));
  await h.json(`${API}/stats?code=${old.short_code}`); // flushes the hits
  expect(await counts("audio_share_click_seen", "audio_share_link_hits", "audio_share_links", "audio_share_track_events")).toEqual([2, 2, 2, 1]);

  h.clock.advanceSeconds(3 * 3600);
  expect(await pruneAudioShare(h.ctx)).toEqual({ seen: 2, events: 0, hits: 0, links: 0 });

  h.clock.advanceSeconds(91 * 86_400);
  const run = await h.ctx.jobs.runNow("audio-share-prune");
  expect(run.ok).toBe(true);
  // The 30-day link expired 61 days ago: it stays (410, inspectable); the 60-second one is gone.
  expect(await counts("audio_share_link_hits", "audio_share_links", "audio_share_track_events")).toEqual([1, 1, 0]);
  expect((await h.json(`/s/audio/${kept.short_code}`)).status).toBe(410);
  expect((await h.json(`/s/audio/${old.short_code}`)).status).toBe(404);
});
