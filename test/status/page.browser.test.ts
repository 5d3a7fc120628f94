import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { createTestApp, type TestApp } from "../support/app";

// The status page in real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core), from a
// real server on 127.0.0.1, with JavaScript switched off: the page must be readable without it. Skipped only
// when /usr/bin/chromium is absent (CI installs it: see .ci/run).

const CHROMIUM = "/usr/bin/chromium";
const present = existsSync(CHROMIUM);
if (!present) console.warn(`SKIPPED test/status/page.browser.test.ts: ${CHROMIUM} is absent (apt-get install -y chromium)`);

const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let h: TestApp | undefined;
const dirs: string[] = [];
afterEach(() => {
  h?.close();
  h = undefined;
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

test.skipIf(!present)(
  "Chromium renders /status without JavaScript, shows the bad check as BAD, and the screenshot is a PNG",
  async () => {
    h = createTestApp();
    // A real bad check: a migration "not applied" makes the database check bad.
    h.ctx.db.sqlite.exec("DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)");
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    // A fresh profile per run (Playwright takes the user data dir as launchPersistentContext's argument).
    const profile = mkdtempSync(join(tmpdir(), "herald-chromium-"));
    const shots = mkdtempSync(join(tmpdir(), "herald-shot-"));
    dirs.push(profile, shots);
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const res = await page.goto(`http://127.0.0.1:${server.server!.port}/status`, { waitUntil: "load" });
      expect(res?.status()).toBe(200);
      expect(await page.title()).toBe("Herald status: BAD");
      expect(await page.locator("#overall").innerText()).toContain("Outage");
      const row = await page.locator("#check-database").innerText();
      expect(row).toContain("database");
      expect(row).toContain("BAD");
      expect(row).toContain("migrations behind");
      // Other checks still read as fine, as words (colour is never the only signal).
      expect(await page.locator("#check-webhooks").innerText()).toContain("OK");
      // The badge in the footer is a valid SVG the browser could draw.
      expect(await page.locator("footer img").evaluate((img) => { const i = img as unknown as { complete: boolean; naturalWidth: number }; return i.complete ? i.naturalWidth : 0; })).toBeGreaterThan(0);
      const file = join(shots, "status.png");
      await page.screenshot({ path: file, fullPage: true });
      expect(statSync(file).size).toBeGreaterThan(1000);
      expect(readFileSync(file).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    } finally {
      await context.close();
      await server.stop(true);
    }
  },
  90_000,
);
