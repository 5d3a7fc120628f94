import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { openMessengerApp, initDataFor, tmaPost } from "./support";
import {
  BROWSER_ACCEPT,
  badgesOf,
  csrfOf,
  currentNavOf,
  exportLinksOf,
  formOf,
  hrefOf,
  signedInCookie,
  tableOf,
  textById,
  textOf,
  titleOf,
} from "../support/console";

// GET /admin/console/messenger and its mission form without a browser: who may see it, that its figures are the
// overview route's (seeded by real plays through the mini-app routes), that planted titles are escaped, the
// campaigns and missions tables, the export links with the session cookie, the form's CSRF rule and refusals,
// and the page of a deployment without a bot token. The browser test is console-page.browser.test.ts.

const PAGE = "/admin/console/messenger";
const NOW = "2026-04-01T12:00:00.000Z";
const PLANT = "<script>alert(1)</script>";
let h: TestApp;
let token: string;

beforeEach(async () => {
  h = await openMessengerApp({ clock: new FakeClock(NOW) });
  token = await createAdminToken(h, "ops");
});
afterEach(async () => {
  await h.close();
});

const bearer = () => ({ authorization: `Bearer ${token}` });
const adminPost = (path: string, body: unknown) => h.json(path, jsonInit("POST", body, bearer()));
let seq = 0;
const spin = (id: number) => h.json("/api/messenger/games/spin-wheel/play", tmaPost(initDataFor(h, { id }), { request_id: `console-${++seq}` }));

const pageAs = async (cookie: string, query = "") => {
  const res = await h.request(`${PAGE}${query}`, { headers: { cookie } });
  return { status: res.status, html: await res.text() };
};
/** A row of the campaigns or missions table by its position or id: its cells by column, and its HTML. */
const rowOf = (html: string, table: string, which: number | string) => {
  const rows = tableOf(html, table);
  return (typeof which === "number" ? rows[which] : rows.find((r) => r.id === which))!;
};

/** Yesterday players 1 and 2 take their daily free spin; today player 1 spins again. */
async function seedPlays() {
  h.clock.advanceSeconds(-86_400);
  for (const id of [1, 2]) expect((await spin(id)).status).toBe(200);
  h.clock.advanceSeconds(86_400);
  expect((await spin(1)).status).toBe(200);
}

async function seedConfig() {
  const day = 86_400_000;
  const at = (offsetDays: number) => new Date(Date.parse(NOW) + offsetDays * day).toISOString();
  for (const body of [
    { game_key: "recon_grid", audience_group: "premium", title: `Grid for premium ${PLANT}`, starts_at: at(-1), ends_at: at(10) },
    { game_key: "spin_wheel", audience_group: "linked", title: "Linked wheel week", starts_at: at(3), ends_at: at(10) },
    { game_key: "recon_grid", audience_group: "linked", title: "Last month's grid", starts_at: at(-30), ends_at: at(-20) },
  ]) {
    const res = await adminPost("/api/messenger/admin/games/catalog-campaigns", body);
    expect(res.status).toBe(200);
  }
  const wheel = await adminPost("/api/messenger/admin/games/wheel-campaigns", {
    campaign_key: "spring-wheel",
    title: "Spring wheel",
    audience_group: "premium",
    starts_at: at(5),
    cooldown_seconds: 3600,
    segments: [{ label: "10 points", weight: 1, reward: { points: 10 } }],
  });
  expect(wheel.status).toBe(200);
  for (const body of [
    {
      mission_key: "spin-5",
      title: `Spin five times ${PLANT}`,
      event_type: "spin_wheel.play",
      target: 5,
      reward: { points: 100, missiles: 2 },
      daily_cap: 4,
      per_minute_cap: 2,
    },
    {
      mission_key: "quiz-3",
      title: "Answer three quizzes",
      event_type: "quiz.answer",
      progress_source: "self_reported",
      target: 3,
      reward: { points: 300 },
      daily_cap: 3,
      per_minute_cap: 1,
    },
  ]) {
    expect((await adminPost("/api/messenger/admin/missions", body)).status).toBe(200);
  }
}

describe("GET /admin/console/messenger", () => {
  test("unsigned → 303 to the sign-in page; a wrong bearer token → 403; the admin token → 200 HTML", async () => {
    const unsigned = await h.request(PAGE, { headers: { accept: BROWSER_ACCEPT } });
    expect(unsigned.status).toBe(303);
    expect(unsigned.headers.get("location")).toBe("/admin/sign-in?next=%2Fadmin%2Fconsole%2Fmessenger");
    expect((await h.request(PAGE, { headers: { authorization: "Bearer hat_wrong-wrong-wrong-wrong" } })).status).toBe(403);
    const res = await h.request(PAGE, { headers: bearer() });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    const html = await res.text();
    expect(titleOf(html)).toBe("Messenger · Herald");
    expect(currentNavOf(html)).toBe(PAGE);
    expect(hrefOf(html, "Messenger")).toBe(PAGE);
    for (const id of ["overview", "overview-chart", "day-rows", "game-rows", "campaigns", "missions", "exports"]) expect(html).toContain(`id="${id}"`);
    expect(html).toContain("As of 2026-04-01 12:00:00 UTC; all times UTC.");
    // No JavaScript anywhere; a bearer page has no CSRF token to print.
    expect(html).not.toContain("<script");
    expect(html).not.toContain('name="csrf_token"');
    expect(textById(html, "missions-none")).toBe("None.");
    expect(textById(html, "campaigns-none")).toBe("None.");
    expect(textById(html, "mini-app-unset")).toContain("MESSENGER_MINI_APP_URL is unset: the bot's replies carry no button to the mini-app.");
  });

  test("with MESSENGER_MINI_APP_URL: the mini-app's address as a link and its QR code, inline SVG (the browser test decodes it)", async () => {
    const page = "https://play.example.com/app?from=console";
    const app = await openMessengerApp({ clock: new FakeClock(NOW), env: { MESSENGER_MINI_APP_URL: page } });
    try {
      const adminToken = await createAdminToken(app, "ops");
      const html = await (await app.request(PAGE, { headers: { authorization: `Bearer ${adminToken}` } })).text();
      expect(html).toContain(`<a id="mini-app-url" href="https://play.example.com/app?from=console">`);
      const section = html.slice(html.indexOf('<section id="mini-app">'), html.indexOf("</section>", html.indexOf('<section id="mini-app">')));
      expect(section).toContain('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ');
      expect(section).toContain("<path");
      expect(section).not.toContain("mini-app-unset");
      expect(html).not.toContain("<script");
    } finally {
      await app.close();
    }
  });

  test("the figures are the overview route's, per day and in total; the chart has a title, a description and a bar per non-zero day", async () => {
    await seedPlays();
    const cookie = await signedInCookie(h, token);
    const { status, html } = await pageAs(cookie, "?days=7");
    expect(status).toBe(200);
    const api = await h.json("/api/messenger/admin/games/overview?days=7", { headers: bearer() });
    const t = api.body.total;
    expect([t.plays, t.players]).toEqual([3, 2]);
    expect(textById(html, "total-plays")).toBe(String(t.plays));
    expect(textById(html, "total-players")).toBe(String(t.players));
    expect(textById(html, "total-credits")).toBe(t.payout_points_value.toLocaleString("en-US"));
    expect(html).toContain("Overview, 2026-03-26 to 2026-04-01");
    // The per-day table: seven rows, yesterday two plays by two players, today one.
    const rows = tableOf(html, "day-rows").map((r) => r.cells);
    expect(rows.map((r) => r.Day)).toEqual(t.series.map((p: { day: string }) => p.day));
    expect(rows.map((r) => [Number(r.Plays), Number(r.Players), Number(r["Credits (points value)"])])).toEqual(
      t.series.map((p: { plays: number; players: number; payout_points_value: number }) => [p.plays, p.players, p.payout_points_value]),
    );
    expect([rows.at(-2)!.Plays, rows.at(-2)!.Players]).toEqual(["2", "2"]);
    expect([rows.at(-1)!.Plays, rows.at(-1)!.Players]).toEqual(["1", "1"]);
    // The chart: accessible, inline, a bar per non-zero day and metric, each with its number.
    const svg = /<svg id="overview-chart"[\s\S]*?<\/svg>/.exec(html)![0];
    expect(svg).toContain('role="img" aria-labelledby="chart-title chart-desc"');
    expect(textById(svg, "chart-title")).toBe("Plays, players and credits per day, 2026-03-26 to 2026-04-01");
    expect(textById(svg, "chart-desc")).toStartWith(
      "Bars per UTC day from 2026-03-26 to 2026-04-01 (7 days). Plays: 3 in all, most on 2026-03-31 (2); Players: most on 2026-03-31 (2)",
    );
    // Each bar's tooltip.
    const tips = [...svg.matchAll(/<title>([\s\S]*?)<\/title>/g)].map((m) => textOf(m[1]!));
    expect(tips).toContain("2026-03-31: 2 plays");
    expect(tips).toContain("2026-04-01: 1 player");
    const credited = t.series.filter((p: { payout_points_value: number }) => p.payout_points_value > 0).length;
    expect((svg.match(/<rect /g) ?? []).length).toBe(2 + 2 + credited);
    // Per game.
    const wheel = api.body.games.find((g: { game_key: string }) => g.game_key === "spin_wheel");
    expect(rowOf(html, "game-rows", "game-spin_wheel").cells).toMatchObject({ Game: "spin_wheel", Plays: String(wheel.plays), Players: String(wheel.players) });
  });

  test("the day range: default 30 days, bounded 1–90 (the form's field too); outside it the house's 400 invalid_query", async () => {
    const cookie = await signedInCookie(h, token);
    const plain = await pageAs(cookie);
    expect(plain.html).toContain('name="days" min="1" max="90" step="1" required value="30"');
    expect(tableOf(plain.html, "day-rows")).toHaveLength(30);
    const one = await pageAs(cookie, "?days=1");
    expect([one.status, tableOf(one.html, "day-rows").length]).toEqual([200, 1]);
    for (const bad of ["0", "91", "abc", "7.5", "-3", PLANT]) {
      const res = await h.json(`${PAGE}?days=${encodeURIComponent(bad)}`, { headers: { cookie } });
      expect([res.status, res.body.error]).toEqual([400, "invalid_query"]);
      expect(res.body.message).toContain("days");
    }
  });

  test("campaigns running and scheduled, missions with source and caps; planted titles are escaped", async () => {
    await seedConfig();
    const cookie = await signedInCookie(h, token);
    const { html } = await pageAs(cookie);
    expect(html).not.toContain(PLANT);
    expect(html).toContain("Grid for premium &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("Spin five times &lt;script&gt;alert(1)&lt;/script&gt;");
    // Active first, then the scheduled ones by start; the ended campaign is not listed.
    expect(tableOf(html, "campaign-rows").map((r) => r.cells.Campaign)).toEqual([`Grid for premium ${PLANT}`, "Linked wheel week", "Spring wheel"]);
    expect(textById(html, "campaign-rows")).not.toContain("Last month");
    const grid = rowOf(html, "campaign-rows", 0);
    expect(grid.cells).toMatchObject({ Audience: "premium", Window: "2026-03-31 12:00 → 2026-04-11 12:00", State: "active" });
    expect(badgesOf(grid.html)).toEqual([{ kind: "ok", text: "active" }]);
    const wheel = rowOf(html, "campaign-rows", 2);
    expect(wheel.cells).toMatchObject({
      Kind: "wheel spring-wheel",
      Game: "spin_wheel",
      Audience: "premium",
      Window: "2026-04-06 12:00 → open-ended",
      State: "scheduled",
    });
    expect(badgesOf(wheel.html)).toEqual([{ kind: "warn", text: "scheduled" }]);
    expect(textById(html, "default-wheel")).toContain("wheel-default");

    const spin5 = rowOf(html, "mission-rows", "mission-spin-5");
    expect(spin5.cells).toMatchObject({ "Progress source": "server", Caps: "4 a day, 2 a minute", Reward: "100 points, 2 missiles", State: "active" });
    expect(badgesOf(spin5.html)).toEqual([
      { kind: "ok", text: "server" },
      { kind: "ok", text: "active" },
    ]);
    const quiz = rowOf(html, "mission-rows", "mission-quiz-3");
    expect(quiz.cells).toMatchObject({ "Progress source": "self-reported", Caps: "3 a day, 1 a minute" });
    expect(badgesOf(quiz.html)[0]).toEqual({ kind: "warn", text: "self-reported" });
  });

  test("amounts read as words: a mission paying one of each says 1 point, 1 free spin, 1 missile (never 1 points)", async () => {
    const mission = { mission_key: "first-play", title: "First play", event_type: "spin_wheel.play", target: 1, daily_cap: 1, per_minute_cap: 1 };
    expect((await adminPost("/api/messenger/admin/missions", { ...mission, reward: { points: 1, free_spins: 1, missiles: 1 } })).status).toBe(200);
    const html = await (await h.request(PAGE, { headers: bearer() })).text();
    expect(rowOf(html, "mission-rows", "mission-first-play").cells.Reward).toBe("1 point, 1 free spin, 1 missile");
    expect(html).not.toMatch(/\b1 (points|free spins|missiles)\b/);
    expect(textById(html, "total-purchases")).toBe("0 (0 points spent)");
  });

  test("every export link answers 200 with the session cookie (and still with the bearer token); without either 403", async () => {
    await seedPlays();
    await seedConfig();
    const cookie = await signedInCookie(h, token);
    const { html } = await pageAs(cookie, "?days=14");
    const links = exportLinksOf(html);
    expect(links.length).toBe(17);
    expect(links).toContain("/api/messenger/admin/games/overview/export?format=csv&days=14");
    for (const href of links) {
      const res = await h.request(href, { headers: { cookie } });
      expect([href, res.status]).toEqual([href, 200]);
      await res.arrayBuffer();
    }
    const csv = await h.request("/api/messenger/admin/games/overview/export?format=csv&days=14", { headers: { cookie } });
    expect(csv.headers.get("content-type")).toStartWith("text/csv");
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="messenger-games-overview-2026-03-19-2026-04-01.csv"');
    expect((await csv.text()).split("\r\n")[0]).toStartWith("row_type,game_key,day,plays,players");
    // The fold still runs before the numbers are read when the session asks.
    const json = await h.json("/api/messenger/admin/games/overview?days=14", { headers: { cookie } });
    expect(json.body.total.plays).toBe(3);
    expect((await h.request(links[0]!, { headers: bearer() })).status).toBe(200);
    expect((await h.request(links[0]!)).status).toBe(403);
    // A mutation with the cookie still needs X-CSRF-Token; and the POST routes stay bearer-only.
    const post = await h.request("/api/messenger/admin/missions", jsonInit("POST", { mission_key: "x" }, { cookie }));
    expect(post.status).toBe(403);
  });
});

describe("POST /admin/console/messenger/missions/:mission_key/state", () => {
  const form = (cookie: string, key: string, fields: Record<string, string>) =>
    h.request(`${PAGE}/missions/${key}/state`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, accept: "text/html,application/xhtml+xml" },
      body: new URLSearchParams(fields).toString(),
    });
  const missionOf = async (key: string) => {
    const list = await h.json("/api/messenger/admin/missions", { headers: bearer() });
    return list.body.missions.find((m: { mission_key: string }) => m.mission_key === key);
  };

  test("deactivate with the page's csrf_token: 303 back with the result shown, the mission inactive and audited", async () => {
    await seedConfig();
    const cookie = await signedInCookie(h, token);
    const { html } = await pageAs(cookie, "?days=7");
    const csrf = csrfOf(html);
    expect(formOf(html, `${PAGE}/missions/spin-5/state`)).toEqual({ csrf_token: csrf, active: "0", revision: "1", days: "7" });

    // No token, a wrong token: 403, nothing changed.
    expect((await form(cookie, "spin-5", { active: "0", revision: "1" })).status).toBe(403);
    expect((await form(cookie, "spin-5", { csrf_token: "x".repeat(43), active: "0", revision: "1" })).status).toBe(403);
    expect((await missionOf("spin-5")).active).toBe(true);

    const res = await form(cookie, "spin-5", { csrf_token: csrf, active: "0", revision: "1", days: "7" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${PAGE}?days=7&done=deactivated&mission=spin-5`);
    const m = await missionOf("spin-5");
    expect([m.active, m.revision]).toEqual([false, 2]);
    const audit = await h.ctx.store.all<{ actor: string }>("SELECT actor FROM admin_audit WHERE action = 'messenger.mission.deactivate'");
    expect(audit.length).toBe(1);
    expect(audit[0]!.actor).toContain("ops");

    const after = await pageAs(cookie, "?days=7&done=deactivated&mission=spin-5");
    expect(textById(after.html, "done")).toBe("Mission spin-5 deactivated.");
    const inactive = rowOf(after.html, "mission-rows", "mission-spin-5");
    expect(inactive.cells.State).toBe("inactive");
    expect(badgesOf(inactive.html)).toContainEqual({ kind: "", text: "inactive" });
    expect(after.html).toContain('id="toggle-spin-5" aria-label="Activate mission spin-5">Activate</button>');
    // Only our own words are shown for done; a planted one is ignored.
    expect((await pageAs(cookie, `?done=${encodeURIComponent(PLANT)}&mission=spin-5`)).html).not.toContain('id="done"');
  });

  test("refusals re-render the page with an error a person can act on: stale revision 409, unknown mission 404, bad fields 400", async () => {
    await seedConfig();
    const cookie = await signedInCookie(h, token);
    const csrf = csrfOf((await pageAs(cookie)).html);
    // Someone else changed the mission since the page was read.
    const patched = await h.json("/api/messenger/admin/missions/spin-5", {
      method: "PATCH",
      headers: { ...bearer(), "content-type": "application/json", "x-expected-revision": "1" },
      body: JSON.stringify({ title: "Spin five" }),
    });
    expect(patched.status).toBe(200);
    const stale = await form(cookie, "spin-5", { csrf_token: csrf, active: "0", revision: "1" });
    expect(stale.status).toBe(409);
    expect(stale.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const staleHtml = await stale.text();
    expect(textById(staleHtml, "form-error")).toContain("is at revision 2, not 1");
    expect((await missionOf("spin-5")).active).toBe(true);

    const unknown = await form(cookie, "nope", { csrf_token: csrf, active: "0" });
    expect(unknown.status).toBe(404);
    expect(textById(await unknown.text(), "form-error")).toContain('No mission "nope"');

    for (const fields of [{ active: "2" }, { active: "0", revision: "abc" }] as Array<Record<string, string>>) {
      const bad = await form(cookie, "spin-5", { csrf_token: csrf, ...fields });
      expect(bad.status).toBe(400);
      expect(textById(await bad.text(), "form-error")).toBeTruthy();
    }
    expect((await missionOf("spin-5")).active).toBe(true);

    // Already in that state: nothing changes, and the page says so.
    const same = await form(cookie, "spin-5", { csrf_token: csrf, active: "1" });
    expect(same.headers.get("location")).toBe(`${PAGE}?days=30&done=unchanged&mission=spin-5`);
  });

  test("with the bearer token no csrf_token is needed", async () => {
    await seedConfig();
    const res = await h.request(`${PAGE}/missions/quiz-3/state`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...bearer() },
      body: new URLSearchParams({ active: "0" }).toString(),
    });
    expect(res.status).toBe(303);
    expect((await missionOf("quiz-3")).active).toBe(false);
  });
});

describe("without MESSENGER_BOT_TOKEN", () => {
  test("the page says the bot is not configured (200 HTML, not the routes' JSON 503); the form refuses with the same words", async () => {
    const bare = await openTestApp({ clock: new FakeClock(NOW) });
    try {
      const adminToken = await createAdminToken(bare, "ops");
      const cookie = await signedInCookie(bare, adminToken);
      const res = await bare.request(PAGE, { headers: { cookie } });
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain("The Telegram bot is not configured (MESSENGER_BOT_TOKEN is unset).");
      expect(html).not.toContain('id="overview"');
      const api = await bare.json("/api/messenger/admin/games/overview", { headers: { cookie } });
      expect([api.status, api.body.error]).toEqual([503, "messenger_not_configured"]);
      const post = await bare.request(`${PAGE}/missions/spin-5/state`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie, accept: "text/html" },
        body: new URLSearchParams({ csrf_token: csrfOf(html), active: "0" }).toString(),
      });
      expect(post.status).toBe(503);
      expect(textById(await post.text(), "form-error")).toContain("the Telegram bot is not configured");
      // A script (no text/html in Accept) gets the JSON envelope of the same refusal.
      const script = await bare.json(`${PAGE}/missions/spin-5/state`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({ csrf_token: csrfOf(html), active: "0" }).toString(),
      });
      expect([script.status, script.body.error]).toEqual([503, "messenger_not_configured"]);
    } finally {
      await bare.close();
    }
  });
});
