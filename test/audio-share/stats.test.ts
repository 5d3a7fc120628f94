import { afterEach, describe, expect, test } from "bun:test";
import { classifyHit, hitRecorder } from "../../src/audio-share/hits";
import type { TestApp } from "../support/app";
import { API, audioApp, BROWSER_UA, expectChecksum, shortLink } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

const hit = (code: string, opts: { ua?: string | null; ip?: string; method?: string } = {}) => {
  const headers: Record<string, string> = { "x-forwarded-for": opts.ip ?? "198.51.100.7" };
  if (opts.ua !== null) headers["user-agent"] = opts.ua ?? BROWSER_UA;
  return h.request(`/s/audio/${code}`, { method: opts.method ?? "GET", headers });
};
const stats = async (code: string, hours?: number) => (await h.json(`${API}/stats?code=${code}${hours ? `&hours=${hours}` : ""}`)).body;

describe("redirect hits", () => {
  test("a person's clicks: every GET in clicks, once per client per link per hour in unique_clicks", async () => {
    h = await audioApp({ TRUST_PROXY: "1" });
    const link = await shortLink(h);
    for (let i = 0; i < 3; i++) await hit(link.short_code);
    await hit(link.short_code, { ip: "198.51.100.8" });
    await hit(link.short_code, { ua: BROWSER_UA + " Firefox" });
    const s = await stats(link.short_code);
    expect(s.totals).toEqual({ clicks: 5, unique_clicks: 3, bot_hits: 0, head_hits: 0 });
    h.clock.advanceSeconds(3600);
    await hit(link.short_code);
    const later = await stats(link.short_code);
    expect(later.totals).toEqual({ clicks: 6, unique_clicks: 4, bot_hits: 0, head_hits: 0 });
    expect(later.hourly).toEqual([
      { hour: "2026-01-01T00:00:00Z", clicks: 5, unique_clicks: 3, bot_hits: 0, head_hits: 0 },
      { hour: "2026-01-01T01:00:00Z", clicks: 1, unique_clicks: 1, bot_hits: 0, head_hits: 0 },
    ]);
  });

  test("HEAD requests and bots / link-preview fetchers are counted apart, never as clicks", async () => {
    h = await audioApp({ TRUST_PROXY: "1" });
    const link = await shortLink(h);
    const head = await hit(link.short_code, { method: "HEAD" });
    expect([head.status, head.headers.get("location")]).toEqual([302, "http://localhost:3000/tracks/42"]);
    for (const ua of [
      "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
      "facebookexternalhit/1.1",
      "TelegramBot (like TwitterBot)",
      "WhatsApp/2.23",
      "Mozilla/5.0 (compatible; Discordbot/2.0)",
      "curl/8.5.0",
      null,
    ]) {
      const r = await hit(link.short_code, { ua });
      expect(r.status).toBe(302);
    }
    expect((await stats(link.short_code)).totals).toEqual({ clicks: 0, unique_clicks: 0, bot_hits: 7, head_hits: 1 });
  });

  test("classification", () => {
    expect(classifyHit("HEAD", BROWSER_UA)).toBe("head");
    expect(classifyHit("GET", BROWSER_UA)).toBe("click");
    expect(classifyHit("GET", "")).toBe("bot");
    expect(classifyHit("GET", "Googlebot/2.1")).toBe("bot");
    expect(classifyHit("GET", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148")).toBe("click");
  });

  test("the raw IP is never stored: only a salted hash that changes with the UTC day", async () => {
    h = await audioApp({ TRUST_PROXY: "1" });
    const link = await shortLink(h);
    await hit(link.short_code, { ip: "198.51.100.77" });
    h.clock.advanceSeconds(86_400);
    await hit(link.short_code, { ip: "198.51.100.77" });
    await hitRecorder(h.ctx).flush();
    const seen = (await h.ctx.store.all("SELECT * FROM audio_share_click_seen ORDER BY hour")) as Array<{ client_hash: string }>;
    expect(seen).toHaveLength(2);
    expect(seen[0]!.client_hash).toMatch(/^[0-9a-f]{32}$/);
    expect(seen[0]!.client_hash).not.toBe(seen[1]!.client_hash);
    const dump = JSON.stringify([
      ...(await h.ctx.store.all("SELECT * FROM audio_share_click_seen")),
      ...(await h.ctx.store.all("SELECT * FROM audio_share_link_hits")),
    ]);
    expect(dump).not.toContain("198.51.100.77");
  });

  test("dead links count nothing; hits are buffered until stats (or the timer) write them", async () => {
    h = await audioApp();
    const link = await shortLink(h, { expires_in: 60 });
    await hit(link.short_code);
    expect(hitRecorder(h.ctx).pending).toBe(1);
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM audio_share_link_hits")).toEqual({ n: 0 });
    h.clock.advanceSeconds(60);
    expect((await hit(link.short_code)).status).toBe(410);
    const s = await stats(link.short_code);
    expect(s).toMatchObject({ state: "expired", totals: { clicks: 1, unique_clicks: 1, bot_hits: 0, head_hits: 0 } });
    expect(hitRecorder(h.ctx).pending).toBe(0);
  });
  test("a failed write keeps the hits and adds them to those that arrive before the next write", async () => {
    h = await audioApp({ TRUST_PROXY: "1" });
    const link = await shortLink(h);
    await hit(link.short_code);
    await hit(link.short_code, { ip: "198.51.100.8" });
    await h.ctx.store.run("ALTER TABLE audio_share_link_hits RENAME TO hits_away");
    expect(await hitRecorder(h.ctx).flush()).toBe(0);
    await hit(link.short_code);
    await hit(link.short_code, { ip: "198.51.100.9" });
    await hit(link.short_code, { method: "HEAD" });
    await h.ctx.store.run("ALTER TABLE hits_away RENAME TO audio_share_link_hits");
    expect(await hitRecorder(h.ctx).flush()).toBe(1);
    expect((await stats(link.short_code)).totals).toEqual({ clicks: 4, unique_clicks: 3, bot_hits: 0, head_hits: 1 });
  });

  test("a client with a huge User-Agent is still one unique click, and its agent is not kept", async () => {
    h = await audioApp({ TRUST_PROXY: "1" });
    const link = await shortLink(h);
    const ua = `${BROWSER_UA} ${"x".repeat(4000)}`;
    for (let i = 0; i < 3; i++) await hit(link.short_code, { ua });
    await hit(link.short_code, { ua: `${ua}y` });
    expect((await stats(link.short_code)).totals).toEqual({ clicks: 4, unique_clicks: 2, bot_hits: 0, head_hits: 0 });
  });
});

describe("GET /stats", () => {
  test("shape, window, checksum; unknown and malformed codes", async () => {
    h = await audioApp();
    const link = await shortLink(h);
    await hit(link.short_code);
    h.clock.advanceSeconds(5 * 3600);
    await hit(link.short_code);
    const res = await h.request(`${API}/stats?code=${link.short_code}&hours=2`);
    const body = await expectChecksum(res);
    expect(body).toMatchObject({
      success: true,
      short_code: link.short_code,
      state: "active",
      window_hours: 2,
      totals: { clicks: 2 },
      track_events: { count: 0, by_type: {} },
    });
    expect(body.hourly.map((x: any) => x.hour)).toEqual(["2026-01-01T05:00:00Z"]);
    expect((await h.json(`${API}/stats?code=aaaaaaaaaaaaaaaa`)).body.error).toBe("short_link_not_found");
    expect((await h.json(`${API}/stats`)).body.error).toBe("invalid_query");
    expect((await h.json(`${API}/stats?code=${link.short_code}&hours=0`)).body.error).toBe("invalid_query");
    expect((await h.json(`${API}/stats?code=${link.short_code}&hours=721`)).body.error).toBe("invalid_query");
  });
});
