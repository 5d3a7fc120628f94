import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_FLAGS, chromiumPresent } from "../support/browser";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { insertSnapshots, iso, operator } from "./support";

// The status page in real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core), from a
// real server on 127.0.0.1, with JavaScript switched off (the page must work without it), at a desktop width
// (1280 px) and a phone's (390 px). Skipped only when /usr/bin/chromium is absent (CI installs it: .ci/run).
// Screenshots go to a temp dir, or to STATUS_SCREENSHOT_DIR when set (to look at them: a person should).

const present = chromiumPresent("test/status/page.browser.test.ts");

const T0 = "2026-03-10T12:00:00.000Z";
/** Monitoring began two days before T0: the 7, 30 and 90-day windows reach back before it. */
const BEGAN = iso(T0, -2 * 1440);
const GREY = "rgb(110, 119, 129)"; // --none

let h: TestApp | undefined;
let server: ReturnType<TestApp["app"]["listen"]> | undefined;
let context: BrowserContext | undefined;
let incidentId = 0;
const dirs: string[] = [];
const shots = process.env.STATUS_SCREENSHOT_DIR ?? "";

beforeAll(async () => {
  if (!present) return;
  h = await openTestApp({ clock: new FakeClock(T0) });
  // 30 hours ago a job failed for 30 minutes (jobs warn); otherwise all ok, a snapshot every 5 minutes.
  const failing = iso(T0, -1800);
  await insertSnapshots(h, BEGAN, T0, 5, (at) => (at >= failing && at < iso(failing, 30) ? { jobs: "warn", reliability: "warn" } : null));
  const admin = operator(h, await createAdminToken(h));
  // A past operator incident, resolved.
  h.clock.set(iso(T0, -600));
  const past = await admin.post("/admin/status/incidents", {
    title: "Slow webhook deliveries",
    message: "Deliveries to some receivers are delayed.",
    severity: "warn",
    components: ["webhooks"],
  });
  h.clock.set(iso(T0, -540));
  await admin.post(`/admin/status/incidents/${past.body.incident.id}/updates`, { state: "resolved", message: "The backlog is drained." });
  // The current one, with two updates after the first.
  h.clock.set(iso(T0, -45));
  const r = await admin.post("/admin/status/incidents", {
    title: "Partner API errors for some keys",
    message: "We are looking into 5xx answers on /api/partner/users.",
    severity: "bad",
    components: ["api"],
  });
  incidentId = r.body.incident.id;
  h.clock.set(iso(T0, -30));
  await admin.post(`/admin/status/incidents/${incidentId}/updates`, {
    state: "identified",
    message: "A bad index after the last migration <script>alert(1)</script>.",
  });
  h.clock.set(iso(T0, -10));
  await admin.post(`/admin/status/incidents/${incidentId}/updates`, { state: "monitoring", message: "Index rebuilt; watching the error rate." });
  h.clock.set(T0);
  server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  const profile = mkdtempSync(join(tmpdir(), "herald-chromium-"));
  dirs.push(profile);
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, javaScriptEnabled: false });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await server?.stop(true);
  await h?.close();
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

async function open(width: number): Promise<Page> {
  const page = context!.pages()[0] ?? (await context!.newPage());
  await page.setViewportSize({ width, height: 900 });
  const res = await page.goto(`http://127.0.0.1:${server!.server!.port}/status`, { waitUntil: "load" });
  expect(res?.status()).toBe(200);
  // Open every component's checks (a click on <summary> needs no JavaScript), so the tables are measured too.
  const closed = page.locator("details:not([open]) > summary");
  for (let i = 0, n = await closed.count(); i < n; i++) await closed.first().click();
  return page;
}

async function screenshot(page: Page, name: string): Promise<void> {
  const dir = shots || mkdtempSync(join(tmpdir(), "herald-shot-"));
  if (shots) mkdirSync(dir, { recursive: true });
  else dirs.push(dir);
  const file = join(dir, name);
  await page.screenshot({ path: file, fullPage: true });
  expect(statSync(file).size).toBeGreaterThan(1000);
  expect(readFileSync(file).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
}

for (const width of [1280, 390]) {
  test.skipIf(!present)(
    `${width} px: nothing overflows, the header lines up with the cards, not-configured checks are grey, uptime says since, the operator incident shows its updates`,
    async () => {
      const page = await open(width);
      // The operator's outage drives the headline while the checks are green.
      expect(await page.title()).toBe("Herald status: BAD");
      expect(await page.locator("#overall").innerText()).toContain("Outage reported: Partner API errors for some keys");

      const size = await page.evaluate(() => {
        const d = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
        return { scroll: d.document.documentElement.scrollWidth, inner: d.innerWidth };
      });
      expect(size.scroll).toBeLessThanOrEqual(size.inner);

      // The header is a card like the others: same left edge, same width.
      const header = (await page.locator("header.card").boundingBox())!;
      for (const id of ["#uptime", "#components", "#active-incidents"]) {
        const box = (await page.locator(id).boundingBox())!;
        expect(Math.abs(box.x - header.x)).toBeLessThan(0.5);
        expect(Math.abs(box.width - header.width)).toBeLessThan(0.5);
      }

      // No TOKEN_MINT: the chain checks and their component read "not configured", in grey.
      const row = page.locator("#check-freshness_holder_cache");
      expect(await row.innerText()).toContain("NOT CONFIGURED");
      expect(await row.innerText()).toContain("not configured: TOKEN_MINT is not set");
      expect(await row.locator(".tag").evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor)).toBe(GREY);
      const chain = page.locator("#component-chain_data .component-head .tag");
      expect(await chain.innerText()).toBe("NOT CONFIGURED");
      expect(await chain.evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor)).toBe(GREY);
      expect(await page.locator("#check-database").innerText()).toContain("OK");

      // Monitoring began two days ago: 24 h is a full window, the others say since when.
      const windows = await page.locator("dl.windows > div").allInnerTexts();
      expect(windows).toHaveLength(4);
      expect(windows[0]).not.toContain("since");
      for (const w of windows.slice(1)) expect(w).toContain("since 2026-03-08 12:00 UTC");
      expect(windows[0]).toMatch(/^24 h\n100%$/);
      expect(windows[1]).toMatch(/^7 d\n98\.96%\nsince/); // 30 of 2880 minutes degraded

      // The operator incident: visible, with the first message and both updates, newest first, escaped.
      const incident = page.locator(`#active-incidents #incident-${incidentId}`);
      expect(await incident.isVisible()).toBe(true);
      const states = await incident.locator(".update .state").allInnerTexts();
      expect(states.map((s) => s.toLowerCase())).toEqual(["monitoring", "identified", "investigating"]);
      const text = await incident.innerText();
      expect(text).toContain("Index rebuilt; watching the error rate.");
      expect(text).toContain("A bad index after the last migration <script>alert(1)</script>.");
      expect(text).toContain("affects API");
      expect(await page.locator("#incidents").innerText()).toContain("Resolved: Slow webhook deliveries");

      await screenshot(page, `status-${width}.png`);
      // The badge in the footer is a valid SVG the browser could draw.
      expect(
        await page.locator("footer img").evaluate((img) => {
          const i = img as unknown as { complete: boolean; naturalWidth: number };
          return i.complete ? i.naturalWidth : 0;
        }),
      ).toBeGreaterThan(0);
    },
    90_000,
  );
}

test.skipIf(!present)(
  "390 px: daily bars older than 30 days are hidden, the newest are drawn; tables stack instead of scrolling",
  async () => {
    const page = await open(390);
    const overall = page.locator("#uptime .bars .bar");
    expect(await overall.count()).toBe(90);
    const visible = await overall.evaluateAll((els) => els.filter((el) => (el as unknown as { offsetWidth: number }).offsetWidth > 0).length);
    expect(visible).toBe(30);
    const table = page.locator("#component-api table.checks");
    expect(await table.evaluate((el) => (globalThis as any).getComputedStyle(el).display)).toBe("block");
  },
  90_000,
);
