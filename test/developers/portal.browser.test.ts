import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { PORTAL_PAGES, pagePath } from "../../src/developers/portal-pages";
import { openTestApp, type TestApp } from "../support/app";
import { chromiumPresent, noHorizontalOverflow, OperatorBrowser } from "../support/browser";
import { REPO_ROOT } from "../support/process";

// The developer portal in real headless Chromium (test/support/browser.ts) against a served Herald on 127.0.0.1:
// every page at 390 px and at 1280 px has no horizontal scroll and passes axe-core (the pinned devDependency, its
// default rules: WCAG 2 A/AA and best practices) with 0 violations; with JavaScript off, as the pages need none, the
// navigation works by keyboard and mouse, nothing is refused by the page's Content-Security-Policy and no request
// leaves 127.0.0.1. Screenshots go to OPS_SCREENSHOT_DIR (or a temp dir).

const FILE = "test/developers/portal.browser.test.ts";
const present = chromiumPresent(FILE);
const AXE = readFileSync(join(REPO_ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");
const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 1280, height: 900 },
];

let h: TestApp | undefined;
// axe runs in the page (JavaScript on, evaluated by the browser's own protocol, which a page's CSP does not govern);
// the pages themselves are looked at with JavaScript off, as a person whose browser runs no script sees them.
const axeBrowser = new OperatorBrowser();
const plainBrowser = new OperatorBrowser();
const refused: string[] = [];
const outside: string[] = [];
const base = () => `http://127.0.0.1:${h!.app.server!.port}`;

beforeAll(async () => {
  if (!present) return;
  h = await openTestApp();
  h.app.listen({ hostname: "127.0.0.1", port: 0 });
  for (const [browser, javaScript] of [
    [axeBrowser, true],
    [plainBrowser, false],
  ] as const) {
    const context = await browser.launch({ javaScript });
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === "127.0.0.1" || url.protocol === "data:") return route.continue();
      outside.push(url.href);
      return route.abort();
    });
    context.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) refused.push(m.text());
    });
  }
}, 120_000);

afterAll(async () => {
  await axeBrowser.close();
  await plainBrowser.close();
  await h?.app.server?.stop(true);
  await h?.close();
});

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = (await page.evaluate("axe.run(document).then((r) => ({ violations: r.violations, passes: r.passes.length }))")) as {
    violations: AxeViolation[];
    passes: number;
  };
  // Not vacuous: axe ran its rules on the page (color contrast, landmarks, headings, link names …) and they passed.
  expect(result.passes).toBeGreaterThan(15);
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
}

test.skipIf(!present)(
  "every page, at 390 px and at 1280 px: no horizontal scroll and 0 axe-core violations",
  async () => {
    const page = await axeBrowser.page();
    let runs = 0;
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      for (const p of PORTAL_PAGES) {
        const res = await page.goto(base() + pagePath(p.slug), { waitUntil: "load" });
        expect([p.slug, res!.status()]).toEqual([p.slug, 200]);
        expect(await page.locator("h1").innerText()).toBe(p.title);
        await noHorizontalOverflow(page);
        expect([p.slug, viewport.width, await axeViolations(page)]).toEqual([p.slug, viewport.width, []]);
        runs++;
      }
    }
    expect(runs).toBe(PORTAL_PAGES.length * 2);
    expect(refused).toEqual([]);
    expect(outside).toEqual([]);
  },
  300_000,
);

test.skipIf(!present)(
  "with JavaScript off: the navigation is visible at 390 px, marks the page shown, and each of its links opens its page",
  async () => {
    const page = await plainBrowser.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base()}/`, { waitUntil: "load" });
    await page.click("#link-developer_portal");
    expect(new URL(page.url()).pathname).toBe("/developers");
    await plainBrowser.screenshot(page, "portal-index-390.png");
    const nav = page.getByRole("navigation", { name: "Developer portal" });
    expect(await nav.isVisible()).toBe(true);
    for (const p of PORTAL_PAGES) {
      await nav.getByRole("link", { name: p.title, exact: true }).click();
      expect([p.slug, new URL(page.url()).pathname]).toEqual([p.slug, pagePath(p.slug)]);
      expect(await nav.locator('[aria-current="page"]').innerText()).toBe(p.title);
      await noHorizontalOverflow(page);
    }
    await plainBrowser.screenshot(page, "portal-changelog-390.png");
    // By keyboard: the first Tab reaches the skip link, which moves to the text.
    await page.goto(`${base()}/developers/signing`, { waitUntil: "load" });
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to the text");
    await page.keyboard.press("Enter");
    // The fragment navigation commits after the key's events: wait for it (bounded), then check it.
    await page.waitForFunction('location.hash === "#content"', undefined, { timeout: 5_000 }).catch(() => {});
    expect(new URL(page.url()).hash).toBe("#content");
    // A heading link of another page lands on its heading.
    await page.goto(`${base()}/developers/signing#3-the-canonical-string`, { waitUntil: "load" });
    expect(await page.locator('[id="3-the-canonical-string"]').isVisible()).toBe(true);
    await page.setViewportSize({ width: 1280, height: 900 });
    await plainBrowser.screenshot(page, "portal-signing-1280.png");

    expect(refused).toEqual([]);
    expect(outside).toEqual([]);
  },
  120_000,
);
