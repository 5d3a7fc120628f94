import { afterAll, beforeAll, expect, test } from "bun:test";
import jsQR from "jsqr";
import type { Page } from "playwright-core";
import { PNG } from "pngjs";
import { jsonInit, type TestApp } from "../support/app";
import { chromiumPresent, noHorizontalOverflow, OperatorBrowser, signIn } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { openMessengerApp, initDataFor, tmaPost } from "./support";

// The messenger console page in real headless Chromium (JavaScript off), as an operator meets it: sign in through
// the form, click "Messenger" in the console header, read the chart and tables at 1280 px and 390 px without
// horizontal scrolling, choose a day range with the GET form, switch a mission off with its button and see the
// result; the mini-app's QR code decodes to its address; a form post without the csrf_token is refused. Skipped only when /usr/bin/chromium is absent.
// Screenshots: a temp dir, or OPS_SCREENSHOT_DIR.

const present = chromiumPresent("test/messenger/console-page.browser.test.ts");
const NOW = "2026-04-01T12:00:00.000Z";
const DAY_MS = 86_400_000;
const MINI_APP = "https://play.example.com/app";

let h: TestApp | undefined;
let server: ReturnType<TestApp["app"]["listen"]> | undefined;
const browser = new OperatorBrowser();
let token = "";
const base = () => `http://127.0.0.1:${server!.server!.port}`;

/** Two weeks of daily free spins by one to five players a day, then campaigns and missions. */
async function seed(app: TestApp) {
  const bearer = { authorization: `Bearer ${token}` };
  let seq = 0;
  app.clock.set(new Date(Date.parse(NOW) - 13 * DAY_MS));
  for (let d = 0; d < 14; d++) {
    for (let id = 1; id <= (d % 5) + 1; id++) {
      const res = await app.json("/api/messenger/games/spin-wheel/play", tmaPost(initDataFor(app, { id }), { request_id: `browser-${++seq}` }));
      expect(res.status).toBe(200);
    }
    if (d < 13) app.clock.advance(DAY_MS);
  }
  const at = (days: number) => new Date(Date.parse(NOW) + days * DAY_MS).toISOString();
  const post = (path: string, body: unknown) => app.json(path, jsonInit("POST", body, bearer));
  for (const body of [
    { game_key: "recon_grid", audience_group: "premium", title: "Recon grid for Telegram Premium players <beta>", starts_at: at(-2), ends_at: at(12) },
    { game_key: "spin_wheel", audience_group: "linked", title: "Linked players' wheel week", starts_at: at(3), ends_at: at(10) },
  ])
    expect((await post("/api/messenger/admin/games/catalog-campaigns", body)).status).toBe(200);
  for (const body of [
    {
      mission_key: "spin-5",
      title: "Spin five times",
      event_type: "spin_wheel.play",
      target: 5,
      reward: { points: 100, missiles: 2 },
      daily_cap: 4,
      per_minute_cap: 2,
    },
    {
      mission_key: "quiz-3",
      title: "Answer three quizzes in the weekly trivia channel",
      event_type: "quiz.answer",
      progress_source: "self_reported",
      target: 3,
      reward: { points: 300 },
      daily_cap: 3,
      per_minute_cap: 1,
    },
  ])
    expect((await post("/api/messenger/admin/missions", body)).status).toBe(200);
}

beforeAll(async () => {
  if (!present) return;
  h = await openMessengerApp({ clock: new FakeClock(NOW), env: { MESSENGER_MINI_APP_URL: MINI_APP } });
  token = await createAdminToken(h, "on-call");
  await seed(h);
  server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  await browser.launch();
}, 120_000);

afterAll(async () => {
  await browser.close();
  await server?.stop(true);
  await h?.close();
});

const text = (page: Page, selector: string) => page.locator(selector).innerText();

test.skipIf(!present)(
  "sign in, click Messenger in the header, read it at 1280 and 390 px, choose a range, switch a mission off",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, base(), token);
    await page.click('#console-nav a[href="/admin/console/messenger"]');
    expect(page.url()).toBe(`${base()}/admin/console/messenger`);
    expect(await page.title()).toBe("Messenger · Herald");
    expect(await page.locator('#console-nav a[aria-current="page"]').innerText()).toBe("Messenger");

    // Fourteen days of spins by 1–5 players: 1+2+3+4+5+1+2+3+4+5+1+2+3+4 = 40 plays by 5 players.
    expect(await text(page, "#total-plays")).toBe("40");
    expect(await text(page, "#total-players")).toBe("5");
    expect(await page.locator("#overview-chart").isVisible()).toBe(true);
    expect(await page.locator("#overview-chart rect").count()).toBeGreaterThanOrEqual(28);
    // The numbers per day sit in a closed <details>; a click opens it (no JavaScript needed).
    expect(await page.locator("#day-rows").isVisible()).toBe(false);
    await page.click("#per-day summary");
    expect(await page.locator("#day-rows tbody tr").count()).toBe(30);
    expect(await text(page, "#day-rows tbody tr:last-child")).toContain("2026-04-01");
    expect(await text(page, "#campaign-rows")).toContain("Recon grid for Telegram Premium players <beta>");
    expect(await text(page, "#mission-quiz-3")).toContain("self-reported");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "messenger-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload({ waitUntil: "load" });
    await page.click("#per-day summary");
    await noHorizontalOverflow(page);
    expect(await page.locator("#overview-chart").isVisible()).toBe(true);
    await browser.screenshot(page, "messenger-390.png");

    // The mini-app's address, and a QR code that a real decoder reads back to it from the rendered page.
    expect(await page.locator("#mini-app-url").getAttribute("href")).toBe(MINI_APP);
    const shot = PNG.sync.read(await page.locator("#mini-app svg").screenshot());
    expect(jsQR(new Uint8ClampedArray(shot.data), shot.width, shot.height)?.data).toBe(MINI_APP);

    // The range form (GET): seven days.
    await page.fill("#days", "7");
    await page.click("#range-submit");
    expect(page.url()).toBe(`${base()}/admin/console/messenger?days=7`);
    expect(await text(page, "#overview h2")).toBe("Overview, 2026-03-26 to 2026-04-01");
    expect(await text(page, "#total-plays")).toBe(String(3 + 4 + 5 + 1 + 2 + 3 + 4));

    // Switch a mission off with its button: back on the page, the result shown, the mission inactive.
    await page.click("#toggle-spin-5");
    expect(page.url()).toBe(`${base()}/admin/console/messenger?days=7&done=deactivated&mission=spin-5`);
    expect(await text(page, "#done")).toBe("Mission spin-5 deactivated.");
    expect(await text(page, "#mission-spin-5")).toContain("inactive");
    expect(await page.locator("#toggle-spin-5").innerText()).toBe("Activate");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "messenger-done-390.png");

    // The same form posted with this browser's session but without the csrf_token is refused, and changes nothing.
    const cookie = (await browser.context!.cookies()).find((c) => c.name === "herald_admin_session")!;
    const forged = await fetch(`${base()}/admin/console/messenger/missions/quiz-3/state`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: `herald_admin_session=${cookie.value}` },
      body: "active=0&revision=1",
    });
    expect(forged.status).toBe(403);
    await page.reload({ waitUntil: "load" });
    expect(await text(page, "#mission-quiz-3")).toContain("active");
    expect(await text(page, "#mission-quiz-3")).not.toContain("inactive");
  },
  120_000,
);
