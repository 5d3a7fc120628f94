// lighthouse: the players' pages as Lighthouse 12.2.3 scores them (issue 73: ≥ 95 in Performance, Accessibility and
// Best Practices), in Debian's Chromium with Lighthouse's mobile emulation (a mid-range phone's 412 px screen, its CPU
// 4× slower, a slow 4G network, simulated). Three pages: /app as Telegram opens it for a new player (a stand-in for
// window.Telegram.WebApp with init data signed for the bot, set before the page's script runs, as Telegram's script
// would be), /app/fairness with a real spin's revealed values in its fragment (the verdict drawn), and /app in a
// plain browser (no Telegram: the page says where to open it). `--starts N` runs per page (default 5); medians.
// A benchmark, not a test: scores move with the machine's load.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "@telegram-apps/init-data-node";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import puppeteer, { type Browser } from "puppeteer-core";
import { CHROMIUM, CHROMIUM_FLAGS as FLAGS } from "../test/support/browser";
import { heraldLaunch, median, progress, startHerald, tempDir, type Benchmark, type BenchReport } from "./support";

const BOT_TOKEN = "7000000001:AAE_bench-token_0123456789abcdefghij";
const TARGET = 95;
const CATEGORIES = ["performance", "accessibility", "best-practices"] as const;
const METRICS = { fcp: "first-contentful-paint", lcp: "largest-contentful-paint", tbt: "total-blocking-time", cls: "cumulative-layout-shift" } as const;

interface Run {
  scores: Record<(typeof CATEGORIES)[number], number>;
  metrics: Record<keyof typeof METRICS, number>;
  failing: string[];
}

const initDataFor = (id: number) => sign({ user: { id, first_name: "Bench", language_code: "en" } }, BOT_TOKEN, new Date());

/** One Lighthouse run of `url` in a fresh tab; `initData` set as Telegram's WebApp before the page's first script. */
async function audit(browser: Browser, port: number, url: string, initData: string | null): Promise<Run> {
  const page = await browser.newPage();
  try {
    if (initData !== null) {
      await page.evaluateOnNewDocument((data: string) => {
        const user = JSON.parse(new URLSearchParams(data).get("user") ?? "{}");
        (globalThis as unknown as { Telegram: unknown }).Telegram = {
          WebApp: { initData: data, initDataUnsafe: { user }, colorScheme: "light", ready() {}, expand() {} },
        };
      }, initData);
    }
    const result = await lighthouse(url, { port, output: "json", logLevel: "error", onlyCategories: [...CATEGORIES] }, undefined, page);
    if (!result) throw new Error(`lighthouse gave no result for ${url}`);
    const lhr = result.lhr;
    if (lhr.runtimeError) throw new Error(`${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
    const scores = Object.fromEntries(CATEGORIES.map((c) => [c, Math.round((lhr.categories[c]?.score ?? 0) * 100)])) as Run["scores"];
    const metrics = Object.fromEntries(Object.entries(METRICS).map(([k, id]) => [k, lhr.audits[id]?.numericValue ?? Number.NaN])) as Run["metrics"];
    // The audits that cost points, for the notes: what to look at when a score drops.
    const failing = CATEGORIES.flatMap((c) =>
      (lhr.categories[c]?.auditRefs ?? [])
        .filter((ref) => ref.weight > 0 && (lhr.audits[ref.id]?.score ?? 1) < 0.9)
        .map((ref) => `${c}: ${ref.id} (${lhr.audits[ref.id]?.displayValue ?? lhr.audits[ref.id]?.score})`),
    );
    return { scores, metrics, failing };
  } finally {
    await page.close();
  }
}

/** A real spin of a new player, revealed (the seed pair rotated), as the fragment the mini-app's check link carries. */
async function revealedSpin(baseUrl: string): Promise<string> {
  const init = initDataFor(990_001);
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${baseUrl}/api/messenger/games/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `tma ${init}` },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, any>;
  };
  const status = await call("spin-wheel/status", {});
  const played = await call("spin-wheel/play", { request_id: "bench-spin" });
  const rotated = await call("spin-wheel/status", { client_seed: "bench-rotate", next_server_seed_hash: status.fairness.next_server_seed_hash });
  const seed = rotated.revealed_seed;
  return new URLSearchParams({
    game: "wheel",
    server_seed: seed.server_seed,
    hash: seed.server_seed_hash,
    client_seed: seed.client_seed,
    nonce: String(played.spin.fairness.nonce),
    weights: status.campaign.segments.map((s: { weight: number }) => s.weight).join(","),
    labels: status.campaign.segments.map((s: { label: string }) => s.label).join(" | "),
    shown: String(played.spin.segment_index),
    lang: "en",
  }).toString();
}

const lighthouseBench: Benchmark = {
  name: "lighthouse",
  description: `Lighthouse 12.2.3 (mobile emulation, Debian's Chromium): Performance, Accessibility, Best Practices of /app and /app/fairness; target ≥ ${TARGET}`,
  async run(opts) {
    const runs = opts.starts ?? 5;
    const dir = tempDir("lighthouse");
    const profile = mkdtempSync(join(tmpdir(), "herald-lighthouse-"));
    const herald = await startHerald(dir.path, heraldLaunch(opts.herald), { MESSENGER_BOT_TOKEN: BOT_TOKEN });
    const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, userDataDir: profile, chromeFlags: FLAGS });
    const browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${chrome.port}` });
    const errors: string[] = [];
    const notes = new Set<string>();
    const cases = [
      { label: "/app, a new player in Telegram", path: "/app", player: true, runs: [] as Run[] },
      { label: "/app/fairness, a revealed spin", path: "/app/fairness", player: false, runs: [] as Run[] },
      { label: "/app, a plain browser", path: "/app", player: false, runs: [] as Run[] },
    ];
    try {
      cases[1]!.path = `/app/fairness#${await revealedSpin(herald.baseUrl)}`;
      for (let round = 1; round <= runs; round++) {
        for (const [i, c] of cases.entries()) {
          progress(`lighthouse ${round}/${runs}: ${c.label}`);
          try {
            const run = await audit(browser, chrome.port, herald.baseUrl + c.path, c.player ? initDataFor(900_000 + round * 10 + i) : null);
            c.runs.push(run);
            for (const f of run.failing) notes.add(`${c.label}: ${f}`);
          } catch (err) {
            errors.push(`${c.label}: ${(err as Error).message}`);
          }
        }
      }
    } finally {
      await browser.disconnect();
      await chrome.kill();
      await herald.stop();
      dir.remove();
      rmSync(profile, { recursive: true, force: true });
    }
    const med = (xs: number[]) => (xs.length ? median(xs) : Number.NaN);
    const summary = [
      `Lighthouse 12.2.3, mobile emulation (simulated slow 4G, CPU 4× slower), median of ${runs} runs (min–max):`,
      ...cases.map((c) => {
        const part = (cat: (typeof CATEGORIES)[number]) => {
          const xs = c.runs.map((r) => r.scores[cat]);
          return `${cat} ${med(xs)} (${Math.min(...xs)}–${Math.max(...xs)})`;
        };
        const m = (k: keyof typeof METRICS) => med(c.runs.map((r) => r.metrics[k]));
        return `  ${c.label.padEnd(34)} ${CATEGORIES.map(part).join(", ")}; FCP ${m("fcp").toFixed(0)} ms, LCP ${m("lcp").toFixed(0)} ms, TBT ${m("tbt").toFixed(0)} ms, CLS ${m("cls").toFixed(3)}`;
      }),
      `target ≥ ${TARGET} in each category on each page (medians): ${
        cases.every((c) => c.runs.length && CATEGORIES.every((cat) => med(c.runs.map((r) => r.scores[cat])) >= TARGET)) ? "MET" : "NOT MET"
      }`,
    ];
    const report: BenchReport & { runs: unknown } = {
      benchmark: "lighthouse",
      description: lighthouseBench.description,
      results: [],
      notes: notes.size ? [...notes].map((n) => `costs points: ${n}`) : ["no audit with weight scored below 0.9 on any page"],
      summary,
      errors,
      runs: cases.map((c) => ({ case: c.label, path: c.path.split("#")[0], runs: c.runs })),
    };
    return report;
  },
};

export default lighthouseBench;
