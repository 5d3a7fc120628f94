import { afterEach, describe, expect, test } from "bun:test";
import { hitRecorder } from "../../src/audio-share/hits";
import { base32 } from "../../src/auth/random-codes";
import type { TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";
import { anotherInstance, API, audioApp, BROWSER_UA, type Instance, jsonPost, shortLink } from "./support";

// Two instances over ONE database (the SQLite file, or with HERALD_TEST_ENGINE=postgres one PostgreSQL
// database), each with its own context, store, link cache and hit buffer — as two `herald serve` behind a load
// balancer. What must hold: click counts stay exact (each instance adds its own increments; a client counts once
// whichever instances it reached), short codes stay unique, a track event id is recorded once, a link is revoked
// (and audited) once.

let h: TestApp | undefined;
let b: Instance | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
  await h?.close();
  h = undefined;
});

type Door = { request(path: string, init?: RequestInit): Promise<Response> };
const hit = (door: Door, code: string, ip: string, method = "GET") =>
  door.request(`/s/audio/${code}`, { method, headers: { "x-forwarded-for": ip, "user-agent": BROWSER_UA } });

describe("two instances on one database", () => {
  test("click counts are exact: both instances' buffered increments add up, flushed at once, and a client counts once", async () => {
    h = await audioApp({ TRUST_PROXY: "1" });
    b = await anotherInstance(h, { env: { TRUST_PROXY: "1" } });
    const link = await shortLink(h);
    // The same three clients reach both instances; a fourth reaches only B. HEADs on both.
    for (const door of [h, b]) {
      for (let round = 0; round < 2; round++)
        for (const ip of ["198.51.100.1", "198.51.100.2", "198.51.100.3"]) expect((await hit(door, link.short_code, ip)).status).toBe(302);
      await hit(door, link.short_code, "198.51.100.1", "HEAD");
    }
    await hit(b, link.short_code, "198.51.100.4");
    expect([hitRecorder(h.ctx).pending, hitRecorder(b.ctx).pending]).toEqual([1, 1]);
    // Both flush the same link-hour at the same moment, several times over.
    for (let i = 0; i < 3; i++) {
      await Promise.all([hitRecorder(h.ctx).flush(), hitRecorder(b.ctx).flush()]);
      await Promise.all([hit(h, link.short_code, "198.51.100.1"), hit(b, link.short_code, "198.51.100.2")]);
    }
    await Promise.all([hitRecorder(h.ctx).flush(), hitRecorder(b.ctx).flush()]);
    // Clicks: 6 + 6 + 1, then 3 rounds of 2. Unique: four clients in the hour, whichever instance saw them first.
    const want = { clicks: 19, unique_clicks: 4, bot_hits: 0, head_hits: 2 };
    expect((await h.json(`${API}/stats?code=${link.short_code}`)).body.totals).toEqual(want);
    expect((await b.json(`${API}/stats?code=${link.short_code}`)).body.totals).toEqual(want);
    expect((await h.ctx.store.all("SELECT count(*) AS n FROM audio_share_click_seen"))[0]).toEqual({ n: 4 });
  });

  test("short codes are claimed by the unique index: the same random draw on two instances still gives two links", async () => {
    h = await audioApp();
    // B draws the same codes as A (the same seed): its first insert collides and it draws again.
    b = await anotherInstance(h, { seed: "herald-test" });
    const fromA = await shortLink(h, { track_url: "/tracks/1" });
    // The codes B draws, recorded: its first is A's code, so its insert met the unique index and it drew again.
    const drawn: string[] = [];
    const bytes = b.ctx.rng.bytes.bind(b.ctx.rng);
    b.ctx.rng.bytes = (n: number) => {
      const out = bytes(n);
      if (n === 10) drawn.push(base32(out));
      return out;
    };
    const fromB = (await b.json(`${API}?use_short=1&track_url=/tracks/2`)).body as { short_code: string };
    expect(drawn).toEqual([fromA.short_code, fromB.short_code]);
    expect(fromB.short_code).toMatch(/^[a-z2-7]{16}$/);
    expect(fromB.short_code).not.toBe(fromA.short_code);
    const rows = await h.ctx.store.all<{ code: string; destination_url: string }>("SELECT code, destination_url FROM audio_share_links ORDER BY id");
    expect(rows.map((r) => [r.code, r.destination_url])).toEqual([
      [fromA.short_code, "http://localhost:3000/tracks/1"],
      [fromB.short_code, "http://localhost:3000/tracks/2"],
    ]);
    expect((await b.request(`/s/audio/${fromA.short_code}`)).headers.get("location")).toBe("http://localhost:3000/tracks/1");
    expect((await h.request(`/s/audio/${fromB.short_code}`)).headers.get("location")).toBe("http://localhost:3000/tracks/2");
  });

  test("one client_event_id sent to both instances at once is recorded once", async () => {
    h = await audioApp();
    b = await anotherInstance(h);
    const body = { event_type: "copy", destination_url: "/tracks/42", client_event_id: "evt-both-0001" };
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => ((i % 2 === 0 ? h! : b!) as Door).request(`${API}/track`, jsonPost(body)).then((r) => r.json() as Promise<any>)),
    );
    expect(answers.filter((a) => a.recorded === true)).toHaveLength(1);
    expect(answers.filter((a) => a.duplicate === true)).toHaveLength(5);
    expect(new Set(answers.map((a) => a.event_id)).size).toBe(1);
    expect(await h.ctx.store.all("SELECT client_event_id FROM audio_share_track_events")).toEqual([{ client_event_id: "evt-both-0001" }]);
  });

  test("a link revoked on both instances at once is revoked and audited once", async () => {
    h = await audioApp();
    b = await anotherInstance(h);
    const link = await shortLink(h);
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const revoke = (door: Door, reason: string) =>
      door.request("/admin/ops/audio-share-revocations/revoke", jsonPost({ short_code: link.short_code, reason }, auth)).then((r) => r.json() as Promise<any>);
    const [x, y] = await Promise.all([revoke(h, "from a"), revoke(b, "from b")]);
    expect([x.already_revoked, y.already_revoked].sort()).toEqual([false, true]);
    const winner = x.already_revoked ? y : x;
    expect(x.reason).toBe(winner.reason);
    expect(y.reason).toBe(winner.reason);
    expect(await h.ctx.store.all("SELECT target FROM admin_audit WHERE action = 'audio_share_link.revoke'")).toEqual([{ target: link.short_code }]);
    // Each instance's cache is its own: the one that revoked forgot the link; the other reads it again after its
    // cache's second (here: it had never cached it).
    expect((await b.request(`/s/audio/${link.short_code}`)).status).toBe(410);
    expect((await h.request(`/s/audio/${link.short_code}`)).status).toBe(410);
  });
});
