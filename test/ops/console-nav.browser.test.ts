import { expect, test } from "bun:test";
import { CONSOLE_NAV } from "../../src/console/frame";
import { servedForBrowser } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow } from "../support/browser";
import { createAdminToken, createKey } from "../support/partner";
import { applyAlertTransitions } from "../../src/ops/alerts/state";
import { FakeClock } from "../support/clock";
import { testEngine } from "../support/engine";
import { operator } from "../status/support";
import { plantAlertRun } from "./support";

// Every operator area is reachable from the console header in a signed-in browser (real headless Chromium,
// JavaScript off): sign in once, then click each header link in turn — each opens its page (200, HTML, its own
// link marked as the current one) and reads at 390 px without horizontal scrolling. A screenshot per page at
// 390 px and one at 1280 px go to OPS_SCREENSHOT_DIR (or a temp dir) for a person to look at. Then three forms are
// used as a person would (take a backup, silence the firing alert, rotate a key): their CSRF token comes from
// the page, and the result is on the page they lead back to.

let h: TestApp | undefined;
let token = "";

const { present, browser, base } = servedForBrowser("test/ops/console-nav.browser.test.ts", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-04-01T12:00:00.000Z") });
  token = await createAdminToken(h, "console-nav");
  // Something on most pages: a partner key, an open incident, a firing alert, 403 traffic for the digest.
  await createKey(h, { partner: "Acme Corp." });
  await operator(h, token).post("/admin/status/incidents", {
    title: "Webhook deliveries delayed for partners in the EU region",
    message: "Queued.",
    severity: "warn",
    components: ["webhooks"],
  });
  await plantAlertRun(h.ctx.store, {
    runId: "ar_nav",
    at: "2026-04-01T12:00:00.000Z",
    source: "digest",
    name: "403_spike",
    status: "warn",
    value: "129",
    details: JSON.stringify({ summary: "route /api/partner/users/:id: 129 403s in 2 consecutive hours against a rolling_24h baseline of 2" }),
  });
  await applyAlertTransitions(h.ctx);
  for (let i = 0; i < 40; i++) {
    h.ctx.requestLog.record({
      at: "2026-04-01T11:10:00.000Z",
      method: "GET",
      route: "/admin/backups",
      status: 403,
      latencyUs: 90,
      partnerKeyId: null,
      clientIp: "100.64.5.77",
      requestId: `nav_${i}`,
      errorCode: "forbidden",
    });
  }
  await h.ctx.requestLog.flush();
  return h;
});

test.skipIf(!present)(
  "signed in, every header link opens its area's page, marked current, readable at 390 px",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base()}/admin/console`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=${encodeURIComponent("/admin/console")}`);
    await page.fill("#token", token);
    await page.click("#sign-in");
    // The console's own address lands on the readiness page, the first area.
    expect(page.url()).toBe(`${base()}${CONSOLE_NAV[0]![0]}`);

    const seen: string[] = [];
    for (const [href, label] of CONSOLE_NAV) {
      const [response] = await Promise.all([
        page.waitForEvent("response", (r) => new URL(r.url()).pathname === href),
        page.click(`#console-nav a[href="${href}"]`),
      ]);
      expect(response.status(), href).toBe(200);
      expect(response.headers()["content-type"], href).toContain("text/html");
      expect(new URL(page.url()).pathname, label).toBe(href);
      expect(await page.locator(`#console-nav a[aria-current="page"]`).getAttribute("href"), href).toBe(href);
      expect((await page.locator("main h1").first().innerText()).length, href).toBeGreaterThan(0);
      await noHorizontalOverflow(page);
      await browser.screenshot(page, `console${href.replaceAll("/", "-")}-390.png`);
      seen.push(href);
    }
    expect(seen).toHaveLength(CONSOLE_NAV.length);

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base()}${CONSOLE_NAV[1]![0]}`, { waitUntil: "load" });
    expect(await page.locator("#console-nav a").count()).toBe(CONSOLE_NAV.length);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-header-1280.png");

    // Forms, as a person uses them (JavaScript off: plain HTML forms). A backup is the SQLite file's (VACUUM INTO);
    // on PostgreSQL the backups page has no form and says where the database's own backups are.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base()}/admin/console/backups`, { waitUntil: "load" });
    if (testEngine() === "sqlite") {
      await page.click("#run");
      expect(page.url()).toContain("/admin/console/backups?done=made&backup=herald-");
      expect(await page.locator("#done").innerText()).toContain("made and checked");
      expect(await page.locator("#backup-rows tbody tr").count()).toBe(1);
      await noHorizontalOverflow(page);
      await browser.screenshot(page, "console-backups-after-run-390.png");
    } else {
      expect(await page.locator("#run").count()).toBe(0);
      expect(await page.locator("#backups-not-applicable").innerText()).toContain("pg_dump");
    }

    await page.goto(`${base()}/admin/console/alerts`, { waitUntil: "load" });
    await page.click("#firing-rows a:text('Silence…')");
    expect(await page.locator("input[name=matcher]").inputValue()).toBe("digest:403_spike");
    await page.fill("input[name=reason]", "Known scanner, blocked at the edge");
    await page.click("#silence");
    expect(page.url()).toMatch(/\/admin\/console\/alerts\?done=silenced&silence=\d+$/);
    expect(await page.locator("#silence-rows").innerText()).toContain("Known scanner, blocked at the edge");
    expect(await page.locator("#firing-rows").innerText()).toContain("by admin:console-nav");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-alerts-after-silence-390.png");

    await page.goto(`${base()}/admin/console/partners`, { waitUntil: "load" });
    await page.locator("details.act summary:text('Rotate')").first().click();
    await page.locator("button:text('Rotate secret')").first().click();
    expect(await page.locator("#secret").inputValue()).toMatch(/^hsk_live_/);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "console-partners-secret-390.png");
  },
  180_000,
);
