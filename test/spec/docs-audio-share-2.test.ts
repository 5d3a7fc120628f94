// Docs audit (second batch): docs/audio-share.md's lifetimes, parameter bounds and counting against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const B = "/api/public/audio-share-links";
const UA = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0" };

describe("docs/audio-share.md (second batch)", () => {
  // docs/audio-share.md:212-213 — expired links answer 410 for 90 days, then the prune job deletes them: 404
  test("expiry: 410, then 404 after the prune past 90 days", async () => {
    h = await openTestApp();
    const b = (await h.json(`${B}?track_url=/tracks/1&use_short=1&expires_in=60`)).body;
    h.clock.advanceSeconds(61);
    const e = await h.json(`/s/audio/${b.short_code}`);
    expect([e.status, e.body.error]).toEqual([410, "short_link_expired"]);
    expect(e.body.details.expires_at).toBe(b.expires_at);
    const qr = await h.request(`/s/audio/${b.short_code}/qr.png`);
    expect(qr.status).toBe(410);
    h.clock.advanceSeconds(89 * 86400);
    expect((await h.json(`/s/audio/${b.short_code}`)).status).toBe(410);
    h.clock.advanceSeconds(2 * 86400);
    await h.ctx.jobs.runNow("audio-share-prune");
    const gone = await h.json(`/s/audio/${b.short_code}`);
    expect([gone.status, gone.body.error]).toEqual([404, "short_link_not_found"]);
  });

  // docs/audio-share.md:98-104 — title ≤ 300, text ≤ 1000; expires_in 60 … 2592000
  test("build parameter bounds", async () => {
    h = await openTestApp();
    expect((await h.json(`${B}?track_url=/t&title=${"a".repeat(300)}`)).status).toBe(200);
    expect((await h.json(`${B}?track_url=/t&title=${"a".repeat(301)}`)).status).toBe(400);
    expect((await h.json(`${B}?track_url=/t&text=${"a".repeat(1000)}`)).status).toBe(200);
    expect((await h.json(`${B}?track_url=/t&text=${"a".repeat(1001)}`)).status).toBe(400);
    for (const [v, s] of [
      ["59", 400],
      ["60", 200],
      ["2592000", 200],
      ["2592001", 400],
    ] as const) {
      const r = await h.json(`${B}?track_url=/t&use_short=1&expires_in=${v}`);
      expect([v, r.status]).toEqual([v, s]);
    }
    const unk = await h.json(`${B}?track_url=/t&channels=x,myspace`);
    expect([unk.status, unk.body.error]).toEqual([400, "channel_unknown"]);
    expect(JSON.stringify(unk.body)).toContain("myspace");
    const none = await h.json(B);
    expect([none.status, none.body.error]).toEqual([400, "destination_invalid"]);
    const bare = await h.json(`${B}?track_url=/t&use_short`);
    expect(typeof bare.body.short_code).toBe("string");
    const off = await h.json(`${B}?track_url=/t&use_short=false`);
    expect(off.body.short_code).toBeNull();
  });

  // docs/audio-share.md:178 — batch channels as an array: at most 50
  test("batch channels array bound", async () => {
    h = await openTestApp();
    const fifty = Array.from({ length: 50 }, () => "x");
    expect((await h.json(`${B}/validate/batch`, jsonInit("POST", { defaults: { channels: fifty }, items: [{ track_url: "/t" }] }))).status).toBe(200);
    const r = await h.json(`${B}/validate/batch`, jsonInit("POST", { defaults: { channels: [...fifty, "x"] }, items: [{ track_url: "/t" }] }));
    expect([r.status, r.body.error]).toEqual([400, "invalid_payload"]);
    expect((await h.json(`${B}/validate/batch`, jsonInit("POST", { items: Array.from({ length: 100 }, () => ({ track_url: "/t" })) }))).status).toBe(200);
  });

  // docs/audio-share.md:445-455 — unique clicks once per client per link per UTC hour; track events count for the link
  test("click counting and track events per link", async () => {
    h = await openTestApp();
    const b = (await h.json(`${B}?track_url=/tracks/1&use_short=1`)).body;
    for (let i = 0; i < 3; i++) await h.request(`/s/audio/${b.short_code}`, { headers: UA });
    h.clock.advanceSeconds(3600);
    await h.request(`/s/audio/${b.short_code}`, { headers: UA });
    await h.request(`/s/audio/${b.short_code}`, { headers: {} });
    await h.json(`${B}/track`, jsonInit("POST", { event_type: "copy", destination_url: b.short_url, client_event_id: "c1" }));
    await h.json(`${B}/track`, jsonInit("POST", { event_type: "share", destination_url: "/tracks/1", client_event_id: "c2", short_code: b.short_code }));
    const s = (await h.json(`${B}/stats?code=${b.short_code}`)).body;
    expect(s.totals).toEqual({ clicks: 4, unique_clicks: 2, bot_hits: 1, head_hits: 0 });
    expect(s.hourly.map((x: any) => [x.hour, x.clicks, x.unique_clicks])).toEqual([
      ["2026-01-01T00:00:00Z", 3, 1],
      ["2026-01-01T01:00:00Z", 1, 1],
    ]);
    expect(s.track_events).toEqual({ count: 2, by_type: { copy: 1, share: 1 } });
    expect((await h.json(`${B}/stats?code=aaaaaaaaaaaaaaaa`)).status).toBe(404);
  });
});
