import { expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { Param } from "../../src/db/port";
import { servedForBrowser } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow } from "../support/browser";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// The link-inbox page in real headless Chromium, exactly as test/console/config-page.browser.test.ts does the config
// page: a real server on 127.0.0.1, JavaScript off; sign in through the form, see the planted data in each section
// at 1280 px and 390 px (no horizontal scroll), sign out, and the page then sends the browser back to the form.
// The data: a real probe run against the listening server plus a planted failing one, hourly request-log rollups,
// a job run that failed and one that succeeded, and a backup made by runBackup.
// Skipped only when /usr/bin/chromium is absent (CI installs it: .ci/run).
// Screenshots go to a temp dir, or to OPS_SCREENSHOT_DIR when set (a person should look at them).

const NOW = "2026-04-01T12:00:00.000Z";

let h: TestApp | undefined;
let token = "";

const { present, browser, base } = servedForBrowser("test/ops/link-page.browser.test.ts", async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  token = await createAdminToken(h, "browser-operator");
  await plant(h);
  return h;
});

const screenshot = (page: Page, name: string) => browser.screenshot(page, name);

async function plant(t: TestApp): Promise<void> {
  const ins = (...row: Param[]) =>
    t.ctx.store.run(
      "INSERT INTO ops_link_events (at, event, issue_id, target, url, attempt, status_code, status_code_family, skip_reason, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      row,
    );
  await ins("2026-04-01T08:00:00.000Z", "incident.opened", "incident:1", "slack", "https://hooks.slack.com/services/T***", 1, 200, "2xx", null, null);
  await ins(
    "2026-04-01T08:05:00.000Z",
    "incident.opened",
    "incident:1",
    "discord",
    "https://discord.com/api/webhooks/***",
    1,
    500,
    "5xx",
    null,
    "HTTP 500 <script>alert(1)</script>",
  );
  await ins("2026-04-01T08:10:00.000Z", "incident.updated", "incident:1", "slack", null, 0, null, null, "cooldown", null);
  await ins(
    "2026-04-01T09:00:00.000Z",
    "alert.fired",
    "alert:a-very-long-issue-identifier-that-must-wrap-on-a-phone-screen",
    "discord",
    "https://discord.com/api/webhooks/123456789012345678/averyveryverylongredactedtokenthatmustwrap***",
    2,
    null,
    "timeout",
    null,
    "timeout after 5000 ms",
  );
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();

test.skipIf(!present)(
  "sign in, see targets and events at 1280 and 390 px, filter with the form, sign out",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base()}/admin/ops/link-inbox`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=%2Fadmin%2Fops%2Flink-inbox`);
    await page.fill("#token", token);
    await page.click("#sign-in");
    expect(page.url()).toBe(`${base()}/admin/ops/link-inbox`);
    expect(await page.title()).toBe("Link inbox · Herald");

    const targets = await page.locator("#targets tbody tr").allInnerTexts();
    expect(targets).toHaveLength(2);
    expect(targets[0]).toContain("discord");
    expect(targets[0]).toContain("failing");
    expect(targets[1]).toContain("slack");
    expect(targets[1]).toContain("ok");
    expect(await page.locator("#event-rows tbody tr").count()).toBe(4);
    expect(await text(page, "#event-rows")).toContain("HTTP 500 <script>alert(1)</script>");
    expect(await text(page, "#events-count")).toContain("4 matching");
    await noHorizontalOverflow(page);
    await screenshot(page, "link-inbox-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload({ waitUntil: "load" });
    await noHorizontalOverflow(page);
    expect(await page.locator("#sign-out").isVisible()).toBe(true);
    await screenshot(page, "link-inbox-390.png");

    // The GET form filters, and the export links carry the same query.
    await page.selectOption("select[name=event]", "incident.opened");
    await page.click("#apply");
    expect(page.url()).toContain("event=incident.opened");
    expect(await page.locator("#event-rows tbody tr").count()).toBe(2);
    expect(await page.locator("#export-json").getAttribute("href")).toBe("/admin/ops/link-inbox/events/export.json?event=incident.opened");
    await page.click("#export-json");
    expect(JSON.parse(await page.locator("body").innerText())).toMatchObject({ success: true, total: 2 });
    await page.goBack({ waitUntil: "load" });

    // A bad filter typed into the form (a date without a zone): the page again, 400, the export's message above
    // the form and the typed value kept, not a raw JSON answer.
    await page.fill("input[name=at_from]", "2026-04-01T08:00:00");
    await page.click("#apply");
    expect(page.url()).toContain("at_from=2026-04-01T08%3A00%3A00");
    expect(await page.locator("#form-error").innerText()).toContain("query.at_from");
    expect(await page.locator("input[name=at_from]").inputValue()).toBe("2026-04-01T08:00:00");
    expect(await page.locator("#console-nav").count()).toBe(1);
    const bad = await page.goto(`${base()}/admin/ops/link-inbox?at_from=yesterday`, { waitUntil: "load" });
    expect(bad!.status()).toBe(400);
    expect(bad!.headers()["content-type"]).toContain("text/html");
    await noHorizontalOverflow(page);

    await page.goto(`${base()}/admin/ops/link-inbox`, { waitUntil: "load" });
    await page.click("#sign-out");
    expect(page.url()).toBe(`${base()}/admin/sign-in`);
    await page.goto(`${base()}/admin/ops/link-inbox`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=%2Fadmin%2Fops%2Flink-inbox`);
  },
  120_000,
);
