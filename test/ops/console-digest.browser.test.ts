import { expect, test } from "bun:test";
import { servedForBrowser } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow } from "../support/browser";
import { FakeClock } from "../support/clock";
import { formPost } from "../support/console";
import { createAdminToken } from "../support/partner";

// The 403 digest page in a signed-in browser (real headless Chromium, JavaScript off): reached by its header
// link, the trend chart loads with the session, it reads at 1280 px and at 390 px without horizontal scrolling,
// the window form changes the window, the add-rule form hides the scanner and the end form ends the rule, and
// the CSV export downloads with the browser's session. A post without the CSRF token is refused.

const PAGE = "/admin/console/403-digest";

let h: TestApp | undefined;
let token = "";

function record(app: TestApp, at: string, route: string, status: number, key: string | null, ip: string, n: number) {
  for (let i = 0; i < n; i++)
    app.ctx.requestLog.record({
      at,
      method: "GET",
      route,
      status,
      latencyUs: 90,
      partnerKeyId: key,
      clientIp: ip,
      requestId: `d_${at}_${route}_${i}`,
      errorCode: null,
    });
}

const { present, browser, base } = servedForBrowser("test/ops/console-digest.browser.test.ts", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-04-01T12:30:00.000Z") });
  token = await createAdminToken(h, "digest-browser");
  const nowHour = Date.parse("2026-04-01T12:00:00.000Z");
  const at = (back: number) => new Date(nowHour - back * 3_600_000 + 300_000).toISOString();
  for (let back = 30; back >= 0; back--) {
    record(h, at(back), "/api/partner/users/:id", 403, "hk_a", "198.51.100.7", 1);
    record(h, at(back), "/api/status", 200, null, "192.0.2.8", 3);
  }
  // A scanner on an admin path from one /24, two hours ago and one hour ago: a sustained spike and a new path.
  for (const back of [2, 1]) record(h, at(back), "/admin/backups/:file/a-rather-long-route-template-name", 403, null, "100.64.5.77", 40);
  await h.ctx.requestLog.flush();
  return h;
});

test.skipIf(!present)(
  "signed in: the header link opens the digest; chart, findings, window form, add and end a rule, CSV with the session",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base()}/admin/console`, { waitUntil: "load" });
    await page.fill("#token", token);
    await page.click("#sign-in");

    const [chart] = await Promise.all([
      page.waitForEvent("response", (r) => new URL(r.url()).pathname === "/admin/ops/403-digest/probe-trend.png"),
      page.click(`#console-nav a[href="${PAGE}"]`),
    ]);
    expect(new URL(page.url()).pathname).toBe(PAGE);
    expect(await page.locator("main h1").innerText()).toBe("403 digest");
    expect(await page.locator(`#console-nav a[aria-current="page"]`).getAttribute("href")).toBe(PAGE);
    // The chart is the digest's PNG, fetched by the browser with the session cookie.
    expect(chart.status()).toBe(200);
    expect(chart.headers()["content-type"]).toBe("image/png");
    expect(await page.locator("#finding-rows").innerText()).toContain("100.64.5.0/24");
    expect(await page.locator("#finding-rows").innerText()).toContain("not suppressed");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-403-digest-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-403-digest-390.png");

    // The window form (GET).
    await page.fill("input[name=hours]", "48");
    await page.selectOption("select[name=baseline_mode]", "same_hour_yesterday");
    await page.click("#apply");
    expect(new URL(page.url()).search).toBe("?hours=48&baseline_mode=same_hour_yesterday");
    expect(await page.locator("p.lead").innerText()).toContain("The last 48 hours");

    // Add a rule for the scanner's /24 with the form: it is listed, and the scanner's findings move to "hidden".
    await page.fill("#add-rule input[name=client_prefix]", "100.64.5.0/24");
    await page.fill("#add-rule input[name=reason]", "Known scanner <script>, blocked at the edge");
    await page.fill("#add-rule input[name=expires_in_days]", "3");
    await page.click("#add");
    expect(page.url()).toBe(`${base()}${PAGE}?done=added&rule=1`);
    expect(await page.locator("#done").innerText()).toBe("Rule #1 added.");
    expect(await page.locator("#rule-1").innerText()).toContain("Known scanner <script>, blocked at the edge");
    const hidden = await page.locator("#suppressed-rows").innerText();
    expect(hidden).toContain("hidden by rule #1");
    expect(hidden).toContain("100.64.5.0/24");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-403-digest-after-add-390.png");

    // The CSV export, downloaded with the browser's own session (its cookie jar).
    const csv = await page.request.get(`${base()}/admin/ops/403-digest/export.csv?hours=24`);
    expect(csv.status()).toBe(200);
    expect(csv.headers()["content-type"]).toContain("text/csv");
    expect(csv.headers()["content-disposition"]).toContain("attachment");
    expect((await csv.text()).split("\n")[0]).toStartWith("section,hour,dimension,value,kind");

    // A post without the CSRF token, with the browser's session cookie: refused, nothing ended.
    const session = (await page.context().cookies(`${base()}${PAGE}`)).find((c) => c.name === "herald_admin_session")!;
    expect((await formPost(h!, `${PAGE}/rules/1/end`, `herald_admin_session=${session.value}`, {})).status).toBe(403);
    expect(await page.locator("#rule-1").innerText()).toContain("active");

    // End it with the page's own form.
    await page.click("#end-1");
    expect(page.url()).toBe(`${base()}${PAGE}?done=ended&rule=1`);
    expect(await page.locator("#done").innerText()).toBe("Rule #1 ended now.");
    expect(await page.locator("#rule-1").innerText()).toContain("revoked");
    expect(await page.locator("#suppressed-rows-none").count()).toBe(1);
    await noHorizontalOverflow(page);
  },
  180_000,
);
