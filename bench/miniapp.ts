// miniapp: the players' page as a phone meets it (issue 51): from navigation to the first screen with the player's
// data on it (balances and the wheel drawn, #game shown), in Chromium at 390 px with the CPU 4× slower (the DevTools
// protocol's Emulation.setCPUThrottlingRate), cold (a fresh profile: nothing cached) and warm (the script cached under
// its hashed name, the page revalidated with a 304); and the page's JavaScript, gzipped. The baseline, in the same
// run and on the same throttled profile: a bare Bun.serve answering a static page that shows its first screen
// without any script or call — the least any page can take here. Budgets (#51, #73): first screen ≤ 1 s, script ≤ 50 KB
// gzipped. `--starts N` loads per case (default 5), cases alternating. Chromium runs with the flags this closed
// network needs (without them it tries Google's hosts) in a fresh profile (playwright makes one per launch).
import { gzipSync } from "node:zlib";
import { sign } from "@telegram-apps/init-data-node";
import { type Browser, chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_FLAGS } from "../test/support/browser";
import { freePort, heraldLaunch, HOST, median, progress, startHerald, tempDir, type Benchmark, type BenchReport } from "./support";

const BOT_TOKEN = "7000000001:AAE_bench-token_0123456789abcdefghij";
const CPU_SLOWDOWN = 4;
const BUDGET_MS = 1000;
const BUDGET_GZIP_BYTES = 50 * 1024;

/** The least a page can do: the same viewport, a first screen in the HTML itself. */
const BARE_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>bare</title></head><body><main id="game"><h1>Games</h1><p>Points 0</p></main></body></html>`;

interface Load {
  ms: number;
  /** To every section drawn (the page marks body[data-loaded]; a page without the mark drew everything at once). */
  wholeMs: number;
}

/**
 * One load: navigation start to `#game` visible (the first screen), and to every section drawn, on a page with the
 * CPU throttled; `cold` empties the cache first.
 */
async function timeLoad(browser: Browser, url: string, initData: string | null, cold: boolean): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true });
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: CPU_SLOWDOWN });
    if (initData !== null) {
      await page.addInitScript((data: string) => {
        const user = JSON.parse(new URLSearchParams(data).get("user") ?? "{}");
        (globalThis as unknown as { Telegram: unknown }).Telegram = { WebApp: { initData: data, initDataUnsafe: { user }, ready() {}, expand() {} } };
      }, initData);
    }
    if (!cold) {
      // Warm: one load fills the cache (the script under its hashed name), the measured one revalidates the page.
      await page.goto(url, { waitUntil: "load" });
      await page.locator("#game").waitFor({ state: "visible", timeout: 30_000 });
    }
    const started = performance.now();
    await page.goto(url, { waitUntil: "commit" });
    await page.locator("#game").waitFor({ state: "visible", timeout: 30_000 });
    const ms = performance.now() - started;
    await page.waitForFunction(
      () => {
        const d = (globalThis as unknown as { document: { body: { dataset: Record<string, string> }; getElementById(id: string): unknown } }).document;
        return d.body.dataset.loaded === "1" || d.getElementById("load-msg") === null;
      },
      undefined,
      { timeout: 30_000 },
    );
    return { ms, wholeMs: performance.now() - started };
  } finally {
    await context.close();
  }
}

const fmt = (xs: number[]) => `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;

const miniapp: Benchmark = {
  name: "miniapp",
  description: "the players' mini-app page: navigation → first screen with the player's data, Chromium at 390 px, CPU 4× slower; script size gzipped",
  async run(opts) {
    const starts = opts.starts ?? 5;
    const dir = tempDir("miniapp");
    const herald = await startHerald(dir.path, heraldLaunch(opts.herald), { MESSENGER_BOT_TOKEN: BOT_TOKEN });
    const barePort = await freePort();
    const bare = Bun.serve({
      hostname: HOST,
      port: barePort,
      fetch: () => new Response(BARE_PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }),
    });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
    });
    const errors: string[] = [];
    const cases = [
      {
        label: "bare static page (baseline), cold",
        url: `http://${HOST}:${barePort}/`,
        player: false,
        cold: true,
        times: [] as number[],
        whole: [] as number[],
      },
      { label: "herald /app, cold (nothing cached)", url: `${herald.baseUrl}/app`, player: true, cold: true, times: [] as number[], whole: [] as number[] },
      {
        label: "herald /app, warm (script cached, page 304)",
        url: `${herald.baseUrl}/app`,
        player: true,
        cold: false,
        times: [] as number[],
        whole: [] as number[],
      },
    ];
    let scriptBytes = 0;
    let gzipBytes = 0;
    try {
      const html = await (await fetch(`${herald.baseUrl}/app`)).text();
      const src = /<script src="([^"]+)"/.exec(html)?.[1];
      if (!src) throw new Error("/app names no script");
      const script = new Uint8Array(await (await fetch(herald.baseUrl + src)).arrayBuffer());
      scriptBytes = script.byteLength;
      gzipBytes = gzipSync(script, { level: 9 }).byteLength;
      for (let round = 1; round <= starts; round++) {
        for (const c of cases) {
          progress(`load ${round}/${starts}: ${c.label}`);
          // A new player each load: their first visit makes the player and the wheel's seed pair, as a newcomer's does.
          const initData = c.player ? sign({ user: { id: 900_000 + round * 10 + cases.indexOf(c), first_name: "Bench" } }, BOT_TOKEN, new Date()) : null;
          try {
            const load = await timeLoad(browser, c.url, initData, c.cold);
            c.times.push(load.ms);
            c.whole.push(load.wholeMs);
          } catch (err) {
            errors.push(`${c.label}: ${(err as Error).message}`);
          }
        }
      }
    } finally {
      await browser.close();
      bare.stop(true);
      await herald.stop();
      dir.remove();
    }
    const baseline = cases[0]!.times.length ? median(cases[0]!.times) : null;
    const summary = [
      `navigation → first screen (median of ${starts}, min–max), Chromium 390 px, CPU ${CPU_SLOWDOWN}× slower:`,
      ...cases.map(
        (c) =>
          `  ${c.label.padEnd(46)} ${c.times.length ? fmt(c.times) : "-"}${baseline && c.times.length && c !== cases[0] ? `, ${(median(c.times) - baseline).toFixed(0)} ms over the bare page; every section drawn ${fmt(c.whole)}` : ""}`,
      ),
      `budget (#51, #73): first screen ≤ ${BUDGET_MS} ms: cold ${cases[1]!.times.length && median(cases[1]!.times) <= BUDGET_MS ? "MET" : "NOT MET"}, warm ${cases[2]!.times.length && median(cases[2]!.times) <= BUDGET_MS ? "MET" : "NOT MET"}`,
      `the page's script: ${scriptBytes.toLocaleString("en-US")} bytes, ${gzipBytes.toLocaleString("en-US")} gzipped (budget ${BUDGET_GZIP_BYTES.toLocaleString("en-US")}: ${gzipBytes <= BUDGET_GZIP_BYTES ? "MET" : "NOT MET"})`,
    ];
    const report: BenchReport & { loads: unknown } = {
      benchmark: "miniapp",
      description: miniapp.description,
      results: [],
      notes: [
        "first screen = the player's balances and the wheel drawn (#game visible): the page, its script, and the catalog's and the wheel's calls to herald with the player's init data, sent at once with the three for the sections below (grid, missions, history); every section drawn = those too (the page marks body[data-loaded]; a page without the mark, as before issue 73, draws everything at once)",
        "each load in a fresh browser context (cold: empty cache); warm loads the page once in the context first; a new player per load",
        "herald and Chromium share the machine's cores; the CPU slowdown applies to the page's renderer only",
      ],
      summary,
      errors,
      loads: cases.map((c) => ({ case: c.label, median_ms: c.times.length ? median(c.times) : null, times_ms: c.times, whole_ms: c.whole })),
    };
    return report;
  },
};

export default miniapp;
