// What the operator pages' browser tests share: Debian's /usr/bin/chromium driven by playwright-core (as
// test/status/page.browser.test.ts), a throwaway profile, JavaScript off (the pages need none), screenshots into
// a temp dir or OPS_SCREENSHOT_DIR (a person should look at them), and the no-horizontal-scroll check.
import { afterAll, beforeAll, expect } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import type { TestApp } from "./app";
import { reportSkipped } from "./skipped";

export const CHROMIUM = "/usr/bin/chromium";

/** What Chromium needs on this closed network (without them it tries Google's hosts and waits on them); the benchmarks use them too. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Whether Chromium is here; when not, the named test file is reported skipped (test/support/skipped.ts; CI installs it). */
export function chromiumPresent(testFile: string): boolean {
  const present = existsSync(CHROMIUM);
  if (!present) reportSkipped(testFile, `${CHROMIUM} is absent (apt-get install -y chromium)`);
  return present;
}

export class OperatorBrowser {
  context: BrowserContext | undefined;
  private readonly dirs: string[] = [];
  private readonly shots = process.env.OPS_SCREENSHOT_DIR ?? "";

  /** `javaScript`: on for the pages that run a script (the players' mini-app); the console's pages need none. */
  async launch(opts: { javaScript?: boolean } = {}): Promise<BrowserContext> {
    const profile = mkdtempSync(join(tmpdir(), "herald-chromium-"));
    this.dirs.push(profile);
    this.context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      javaScriptEnabled: opts.javaScript ?? false,
    });
    return this.context;
  }

  async page(): Promise<Page> {
    return this.context!.pages()[0] ?? (await this.context!.newPage());
  }

  /** A full-page PNG screenshot that must exist and be a PNG. */
  async screenshot(page: Page, name: string): Promise<void> {
    const dir = this.shots || mkdtempSync(join(tmpdir(), "herald-shot-"));
    if (this.shots) mkdirSync(dir, { recursive: true });
    else this.dirs.push(dir);
    const file = join(dir, name);
    await page.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(1000);
    expect(readFileSync(file).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  }

  async close(): Promise<void> {
    await this.context?.close();
    while (this.dirs.length) rmSync(this.dirs.pop()!, { recursive: true, force: true });
  }
}

/** The page is no wider than the viewport (no horizontal scroll). */
export async function noHorizontalOverflow(page: Page): Promise<void> {
  const size = await page.evaluate(() => {
    const d = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
    return { scroll: d.document.documentElement.scrollWidth, inner: d.innerWidth };
  });
  expect(size.scroll).toBeLessThanOrEqual(size.inner);
}

/** Signs in through the real sign-in form (JavaScript off) with an admin token; the form sends the browser on. */
export async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/admin/sign-in`, { waitUntil: "load" });
  await page.fill("#token", token);
  await page.click("#sign-in");
}

/**
 * The frame of a browser test file: when Chromium is present, before all its tests `open` opens (and seeds)
 * the app, which is then served on 127.0.0.1 (and `served` plants what needs the server) to a launched browser;
 * after them all three are closed. `present` is for test.skipIf, `base()` the served origin, `app()` the app.
 */
export function servedForBrowser(file: string, open: () => Promise<TestApp>, served?: (app: TestApp) => Promise<void>, opts: { javaScript?: boolean } = {}) {
  const present = chromiumPresent(file);
  const browser = new OperatorBrowser();
  let app: TestApp | undefined;
  let server: ReturnType<TestApp["app"]["listen"]> | undefined;
  beforeAll(async () => {
    if (!present) return;
    app = await open();
    server = app.app.listen({ hostname: "127.0.0.1", port: 0 });
    await served?.(app);
    await browser.launch(opts);
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server?.stop(true);
    await app?.close();
  });
  return { present, browser, base: () => `http://127.0.0.1:${server!.server!.port}`, app: () => app! };
}
