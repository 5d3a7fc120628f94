import { expect, test } from "bun:test";
import { servedForBrowser } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// The preflight page in a signed-in browser (real headless Chromium, JavaScript off): reached by its header
// link, it shows the change since yesterday's snapshot, the daily history and every guard, reads at 1280 px and
// at 390 px without horizontal scrolling, its compare form (GET) moves the comparison, and every export of the
// page downloads with the browser's session. The page has no POST form; a POST to it is not a route.

const PAGE = "/admin/console/preflight";

let h: TestApp | undefined;
let token = "";
let changed = "";

const { present, browser, base } = servedForBrowser("test/ops/console-preflight.browser.test.ts", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-04-01T09:00:00.000Z") });
  token = await createAdminToken(h, "preflight-browser");
  // Two days of snapshots by the real job; the first day's row of one field as a deploy would have left it.
  expect((await h.ctx.jobs.runNow("preflight-snapshot")).ok).toBe(true);
  const [row] = await h.ctx.store.all<{ section: string; field: string }>(
    "SELECT section, field FROM ops_preflight_snapshots WHERE value NOT IN ('set', 'unset') ORDER BY section, field LIMIT 1",
  );
  changed = `${row!.section}.${row!.field}`;
  await h.ctx.store.run(
    "UPDATE ops_preflight_snapshots SET value = 'before-<deploy>-with-a-rather-long-value-that-must-wrap-on-a-phone', fingerprint = 'aaaaaaaaaaaa' WHERE section = ? AND field = ?",
    [row!.section, row!.field],
  );
  h.clock.advance(86_400_000);
  expect((await h.ctx.jobs.runNow("preflight-snapshot")).ok).toBe(true);
  return h;
});

test.skipIf(!present)(
  "signed in: the header link opens the preflight page; delta, history, guards, compare form, exports with the session",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base()}${PAGE}`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=${encodeURIComponent(PAGE)}`);
    await page.fill("#token", token);
    await page.click("#sign-in");
    // Signed in, back on the page asked for; then reached again the way a person would, by its header link.
    await page.click('#console-nav a[href="/admin/ops/readiness"]');
    await page.click(`#console-nav a[href="${PAGE}"]`);
    expect(new URL(page.url()).pathname).toBe(PAGE);
    expect(await page.locator("main h1").innerText()).toBe("Preflight guards");
    expect(await page.locator(`#console-nav a[aria-current="page"]`).getAttribute("href")).toBe(PAGE);

    // The delta against yesterday names the field; the history shows today against yesterday.
    expect(await page.locator("#delta-counts").innerText()).toMatch(/^1 changed, 0 added, 0 removed, \d+ unchanged/);
    expect(await page.locator("#change-rows").innerText()).toContain("before-<deploy>");
    expect(await page.locator("#history-count").innerText()).toContain("2 of the last 30 days have a snapshot");
    const today = page.locator("#history-rows tbody tr").first();
    expect(await today.innerText()).toContain("2026-04-02");
    expect(await today.innerText()).toContain(changed);
    expect(await page.locator("#history-rows tbody tr").nth(1).innerText()).toContain("no snapshot the day before");
    expect(await page.locator("#guard-rows tbody tr").count()).toBeGreaterThan(5);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-preflight-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-preflight-390.png");

    // The compare form (GET): two days ago has no snapshot, and the page says so.
    await page.fill("input[name=day_offset]", "2");
    await page.fill("input[name=days]", "7");
    await page.click("#apply");
    expect(new URL(page.url()).search).toBe("?day_offset=2&days=7");
    expect(await page.locator("#delta-unavailable").innerText()).toContain("No snapshot was taken on 2026-03-31");
    expect(await page.locator("#history-count").innerText()).toContain("2 of the last 7 days have a snapshot");
    await noHorizontalOverflow(page);

    // Every export link of the page, fetched with the browser's own session (its cookie jar).
    const hrefs = await page
      .locator("#exports a")
      .evaluateAll((as) => as.map((a) => (a as unknown as { getAttribute(n: string): string }).getAttribute("href")));
    expect(hrefs).toHaveLength(9);
    for (const href of hrefs) {
      const r = await page.request.get(`${base()}${href}`);
      expect({ href, status: r.status() }).toEqual({ href, status: 200 });
      if (href.includes(".csv")) expect(r.headers()["content-type"], href).toContain("text/csv");
    }
    // Without the session the same export is refused.
    expect((await h!.request("/admin/ops/preflight-guards/history.csv")).status).toBe(403);
  },
  180_000,
);
