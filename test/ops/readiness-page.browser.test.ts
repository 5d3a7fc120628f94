import { expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { runBackup } from "../../src/ops/backups/backup";
import { eventLoopLag } from "../../src/ops/event-loop-lag";
import { PROBES, runSyntheticProbes } from "../../src/ops/readiness/probes";
import { insertProbeRuns } from "../../src/ops/readiness/store";
import { openTestApp, type TestApp } from "../support/app";
import { noHorizontalOverflow } from "../support/browser";
import { FakeClock } from "../support/clock";
import { testEngine } from "../support/engine";
import { createAdminToken } from "../support/partner";
import { servedForBrowser } from "../support/browser";
import { plantHour } from "./support";

// The readiness page in real headless Chromium, exactly as test/console/config-page.browser.test.ts does the config
// page: a real server on 127.0.0.1, JavaScript off; sign in through the form, see the planted data in each section
// at 1280 px and 390 px (no horizontal scroll), sign out, and the page then sends the browser back to the form.
// The data: a real probe run against the listening server plus a planted failing one, hourly request-log rollups,
// a job run that failed and one that succeeded, and two backups made by runBackup. On PostgreSQL Herald makes no
// backups of its own: there the backups section says where the database's own backups are, and the rest is the same.
// Skipped only when /usr/bin/chromium is absent (CI installs it: .ci/run).
// Screenshots go to a temp dir, or to OPS_SCREENSHOT_DIR when set (a person should look at them).

const NOW = "2026-04-01T12:00:00.000Z";
const onSqlite = testEngine() === "sqlite";

let h: TestApp | undefined;
let token = "";

const { present, browser, base } = servedForBrowser(
  "test/ops/readiness-page.browser.test.ts",
  async () => {
    h = await openTestApp({ clock: new FakeClock(NOW), env: { BACKUP_KEEP: "3" } });
    token = await createAdminToken(h, "browser-operator");
    return h;
  },
  plant,
);

const screenshot = (page: Page, name: string) => browser.screenshot(page, name);

/** The data each section must show. */
async function plant(t: TestApp): Promise<void> {
  // The event-loop sampler, as `herald serve` starts it (stopped at the end of the test).
  eventLoopLag(t.ctx).start();
  // A real run of every probe against this very server, then a later failing run of one of them.
  await runSyntheticProbes(t.ctx, base());
  t.clock.advance(60_000);
  await insertProbeRuns(t.ctx.store, [
    {
      run_id: "pr_00000000000000ff",
      at: t.clock.now().toISOString(),
      probe: "system_status",
      url: `${base()}/api/public/system-status`,
      status: 503,
      latency_ms: 41,
      had_data: 0,
      ok: 0,
      error: "HTTP 503 <script>alert(1)</script>",
    },
  ]);
  // 403 noise: 2 % over the last week, and an attack-like day 10 days ago (over the 5 % threshold for 14 and 30 days).
  for (let d = 0; d < 7; d++) await plantHour(t.ctx.store, `${new Date(Date.parse(NOW) - d * 86_400_000).toISOString().slice(0, 10)}T09`, 1000, 20);
  await plantHour(t.ctx.store, "2026-03-22T09", 1000, 900);
  t.ctx.jobs.register({
    name: "readiness-demo-failing",
    pattern: "0 */10 * * * *",
    description: "fails on purpose",
    run: () => Promise.reject(new Error("upstream said no")),
  });
  await t.ctx.jobs.runNow("readiness-demo-failing");
  await t.ctx.jobs.runNow("request-log-prune");
  if (onSqlite) await runBackup(t.ctx, { actor: { kind: "cli", user: "test" } });
  t.clock.advance(60_000);
  if (onSqlite) await runBackup(t.ctx, { actor: { kind: "cli", user: "test" } });
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();

test.skipIf(!present)(
  "sign in through the form, see every section of the readiness page at 1280 and 390 px, sign out, and the page refuses",
  async () => {
    const page = await browser.page();
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.goto(`${base()}/admin/ops/readiness`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=%2Fadmin%2Fops%2Freadiness`);
    await page.fill("#token", token);
    await page.click("#sign-in");
    expect(page.url()).toBe(`${base()}/admin/ops/readiness`);
    expect(await page.title()).toBe("Readiness · Herald");

    // (e) the summary: attention, for the failing probe, the noisy windows and the failing job.
    expect(await text(page, "#summary-state")).toBe("Attention");
    const reasons = await page.locator("#summary-reasons li").allInnerTexts();
    // The noise percentages move a little with the requests this test itself makes (the request log counts them).
    expect(reasons).toHaveLength(4);
    expect(reasons[0]).toBe("probe latest run failed: system_status");
    expect(reasons[1]).toMatch(/^403 noise over the threshold in the 14-day window \(1[23](\.\d+)? %\)$/);
    expect(reasons[2]).toMatch(/^403 noise over the threshold in the 30-day window \(1[23](\.\d+)? %\)$/);
    expect(reasons[3]).toBe("job latest run failed: readiness-demo-failing");

    // (a) probes: the latest row of each; the planted error is shown as text.
    expect(await page.locator("#probe-latest tbody tr").count()).toBe(PROBES.length);
    const failing = await text(page, "#probe-system_status");
    expect(failing).toContain("failed");
    expect(failing).toContain("503");
    expect(failing).toContain("41 ms");
    expect(failing).toContain("HTTP 503 <script>alert(1)</script>");
    expect(await text(page, "#probe-share_link_validate")).toContain("ok");
    expect(await text(page, "#probe-public_stats")).toContain("empty");
    // The last 24 h: the failing run and the two empty answers of the real run.
    expect(await page.locator("#probe-problems tbody tr").count()).toBe(3);

    // (b) 403 noise per window.
    expect(await page.locator("#noise-7 td").allInnerTexts()).toEqual(expect.arrayContaining(["7 days", "140", "within"]));
    expect(await text(page, "#noise-30")).toContain("over");

    // (c) jobs: every registered job; the failing one with its failure count.
    expect(await page.locator("#jobs tbody tr").count()).toBe((await h!.ctx.jobs.list()).length);
    const job = await text(page, "#job-readiness-demo-failing");
    expect(job).toContain("0 */10 * * * *");
    expect(job).toContain("failed");
    expect(job).toContain("2026-04-01 12:01:00 UTC");
    expect(await text(page, "#job-request-log-prune")).toContain("ok");

    // (d) backups: both, newest first, and BACKUP_KEEP; on PostgreSQL where the database's own backups are, and
    // no link to the backups list (which answers 409 there).
    if (onSqlite) {
      expect(await page.locator("#backups tbody tr").count()).toBe(2);
      expect(await page.locator("#backups tbody tr").first().innerText()).toContain("herald-2026-04-01T12-02-00-000Z.db");
      expect(await text(page, "#backups tbody tr:first-child")).toContain("ok");
      expect(await text(page, "#backup-keep")).toBe("3");
    } else {
      expect(await text(page, "#backups-not-applicable")).toMatch(/pg_dump.*pg_basebackup/);
      expect(await page.locator("#backups tbody tr").count()).toBe(0);
    }
    expect(await page.locator("#exports a").count()).toBe(onSqlite ? 6 : 5);

    // (f) the event loop: one row for this instance, its state whatever this machine's load makes it.
    expect(await page.locator("#event-loop-lag tbody tr").count()).toBe(1);
    expect(await text(page, "#event-loop-lag tbody td[data-label='State']")).toMatch(/^(ok|warn|bad)$/);
    expect(await text(page, "#event-loop-instance")).toBe(h!.ctx.instanceId);

    await noHorizontalOverflow(page);
    await screenshot(page, "readiness-1280.png");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload({ waitUntil: "load" });
    await noHorizontalOverflow(page);
    expect(await page.locator("#sign-out").isVisible()).toBe(true);
    expect(await page.locator("#summary-state").isVisible()).toBe(true);
    await screenshot(page, "readiness-390.png");

    // An export link opens with the session (the JSON one; the CSVs are downloads).
    await page.click("#exports a >> nth=0");
    expect(page.url()).toBe(`${base()}/admin/ops/readiness/403-noise/export.json?days=30&include_windows_meta=1`);
    expect(JSON.parse(await page.locator("body").innerText())).toMatchObject({ success: true, within_threshold: false });
    await page.goBack({ waitUntil: "load" });

    await page.click("#sign-out");
    expect(page.url()).toBe(`${base()}/admin/sign-in`);
    await page.goto(`${base()}/admin/ops/readiness`, { waitUntil: "load" });
    expect(page.url()).toBe(`${base()}/admin/sign-in?next=%2Fadmin%2Fops%2Freadiness`);
    eventLoopLag(h!.ctx).stop();
  },
  120_000,
);
