// docs: the API reference as a reader meets it (issue 74), in Chromium at 1280 px with the CPU 4× slower (the DevTools
// protocol's Emulation.setCPUThrottlingRate), each load timed in the page from navigation start (performance.now()) to:
// - "first operation": the first operation shown at all — an entry of the page's own list of operations
//   (`[data-operation]`, src/http/openapi/reference-index.ts), an operation of Scalar's sidebar, or an operation's
//   heading (`.operation-title`), whichever is drawn first;
// - "Scalar": the first operation Scalar itself draws (its sidebar entry or heading): the interactive reference ready;
// - on a deep link to an operation (`#tag/partner/POST/api/partner/users`, a link from before issue 74, so that the
//   same address works before and after): that operation's heading drawn by Scalar.
// Cold (a fresh context: nothing cached) and warm (the page loaded once in the context first: the 4 MB bundle
// cached). The baseline, alternated with them in the same run: herald's /status (server-rendered, no script) to its
// heading; and the developer portal, /developers, to its heading when it serves a page (a 404 leaves the case out).
// Each load also records its first contentful paint and the API documents it fetched. Budget (#74): the first
// operation ≤ 1.5 s cold. `--starts N` loads per case (default 5), cases alternating.
import { type Browser, chromium } from "playwright-core";
import { CHROMIUM } from "../test/support/browser";
import { heraldLaunch, median, progress, startHerald, tempDir, type Benchmark, type BenchReport } from "./support";

const CPU_SLOWDOWN = 4;
const BUDGET_MS = 1500;
/** The whole reference took 76–92 s to finish on a busy machine before issue 74: a load is given up after this. */
const LOAD_TIMEOUT_MS = 300_000;

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
/** Scalar's operations: a sidebar entry (its id names the method) or the heading of an operation's section. */
const SCALAR_OPERATION = [".operation-title", ...METHODS.map((m) => `li[data-sidebar-id*="/${m}/"] > a`)].join(", ");
const FIRST_OPERATION = `[data-operation], ${SCALAR_OPERATION}`;

/** The marks a load waits for, by name: the first element matching the selector laid out with text. */
type Marks = Record<string, string>;

interface Case {
  label: string;
  path: string;
  marks: Marks;
  cold: boolean;
  times: Record<string, number[]>;
  fcps: number[];
  /** The API documents the page fetched (path → bytes on the wire), from the last load. */
  documents: Record<string, number>;
}

interface Timing {
  marks: Record<string, number>;
  fcp: number | null;
  wallMs: number;
  documents: Record<string, number>;
}

/** The few browser globals the in-page code uses (the project's TypeScript has no DOM library). */
interface PageGlobals {
  __bench: { marks: Record<string, number>; pending: number; fcp: number | null };
  document: { querySelectorAll(s: string): ArrayLike<{ textContent: string | null; getBoundingClientRect(): { height: number } }> };
  requestAnimationFrame(fn: () => void): number;
  MutationObserver: new (fn: () => void) => { observe(target: unknown, opts: Record<string, boolean>): void; disconnect(): void };
  PerformanceObserver: new (
    fn: (list: { getEntries(): Array<{ name: string; startTime: number }> }) => void,
  ) => { observe(opts: Record<string, unknown>): void };
  performance: { now(): number; getEntriesByType(type: string): Array<{ name: string; encodedBodySize: number }> };
}

/**
 * Runs in the page before its own scripts: notes the first contentful paint and, for each mark, the frame in which an
 * element matching its selector is first laid out with text, in ms since the navigation began (performance.now()). A
 * MutationObserver checks after each batch of DOM changes (a few querySelectorAll: cheap beside what Scalar does).
 */
function watchFor(marks: Record<string, string>): void {
  const w = globalThis as unknown as PageGlobals;
  const bench: PageGlobals["__bench"] = { marks: {}, pending: Object.keys(marks).length, fcp: null };
  w.__bench = bench;
  new w.PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name === "first-contentful-paint") bench.fcp = e.startTime;
  }).observe({ type: "paint", buffered: true });
  const seen = new Set<string>();
  const shown = (selector: string) => {
    const all = w.document.querySelectorAll(selector);
    for (let i = 0; i < all.length; i++) if (all[i]!.getBoundingClientRect().height > 0 && all[i]!.textContent?.trim()) return true;
    return false;
  };
  const observer = new w.MutationObserver(() => {
    for (const [name, selector] of Object.entries(marks)) {
      if (seen.has(name) || !shown(selector)) continue;
      // Found in this batch: the time of the next frame, when it is painted.
      seen.add(name);
      w.requestAnimationFrame(() => {
        bench.marks[name] = w.performance.now();
        if (--bench.pending === 0) observer.disconnect();
      });
    }
  });
  observer.observe(w.document, { childList: true, subtree: true, characterData: true });
}

export async function timeLoad(browser: Browser, url: string, marks: Marks, cold: boolean): Promise<Timing> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: CPU_SLOWDOWN });
    await page.addInitScript(watchFor, marks);
    const waitAll = () =>
      page.waitForFunction(() => (globalThis as unknown as PageGlobals).__bench.pending === 0, undefined, { timeout: LOAD_TIMEOUT_MS, polling: 250 });
    if (!cold) {
      // Warm: one load fills the cache (the bundle under its ETag, a day's max-age), the measured one reuses it.
      await page.goto(url, { waitUntil: "commit" });
      await waitAll();
    }
    const started = performance.now();
    await page.goto(url, { waitUntil: "commit" });
    await waitAll();
    const wallMs = performance.now() - started;
    const got = await page.evaluate(() => {
      const w = globalThis as unknown as PageGlobals;
      const documents: Record<string, number> = {};
      for (const e of w.performance.getEntriesByType("resource")) {
        const path = new URL(e.name).pathname;
        if (path.startsWith("/api/openapi")) documents[path] = e.encodedBodySize;
      }
      return { marks: w.__bench.marks, fcp: w.__bench.fcp, documents };
    });
    return { ...got, wallMs };
  } finally {
    await context.close();
  }
}

const fmt = (xs: number[] | undefined) => (xs?.length ? `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})` : "-");

const docs: Benchmark = {
  name: "docs",
  description:
    "the API reference (/api/docs) and the developer portal: navigation → first operation shown / Scalar's first operation, Chromium 1280 px, CPU 4× slower; /status as the baseline",
  async run(opts) {
    const starts = opts.starts ?? 5;
    const dir = tempDir("docs");
    const launch = heraldLaunch(opts.herald);
    // The reference fetches its documents from the public group, limited per IP: off, as for the other benchmarks. The
    // messenger configured, so that every route is in the documents, as a deployment with the mini-app has them.
    const herald = await startHerald(dir.path, launch, {
      RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
      MESSENGER_BOT_TOKEN: "7000000001:AAE_bench-token_0123456789abcdefghij",
      MESSENGER_WEBHOOK_SECRET: "bench-webhook-secret-0123456789",
    });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update"],
    });
    const mk = (label: string, path: string, marks: Marks, cold: boolean): Case => ({ label, path, marks, cold, times: {}, fcps: [], documents: {} });
    const reference = { "first operation": FIRST_OPERATION, Scalar: SCALAR_OPERATION };
    const cases = [
      mk("/status (baseline), cold", "/status", { heading: "h1" }, true),
      mk("/api/docs, cold (nothing cached)", "/api/docs", reference, true),
      mk("/api/docs, warm (bundle cached)", "/api/docs", reference, false),
      mk(
        "/api/docs#tag/partner/POST/api/partner/users, cold",
        "/api/docs#tag/partner/POST/api/partner/users",
        { ...reference, "that operation": ".operation-title" },
        true,
      ),
    ];
    const notes = [
      "first operation = the page's own list of operations, Scalar's sidebar or an operation's heading, whichever is drawn first; Scalar = Scalar's first operation (sidebar entry or heading); that operation = the deep link's operation heading; each laid out with text, timed in the page at the next animation frame from navigation start; first paint = first-contentful-paint",
      "each load in a fresh browser context (cold: empty cache); warm loads the page once in the context first",
      "herald and Chromium share the machine's cores; the CPU slowdown applies to the page's renderer only",
      `herald: ${launch.mode}`,
    ];
    if (launch.warning) notes.push(launch.warning);
    const errors: string[] = [];
    try {
      const portal = await fetch(`${herald.baseUrl}/developers`);
      const portalType = portal.headers.get("content-type") ?? "";
      await portal.arrayBuffer();
      if (portal.status === 200 && portalType.startsWith("text/html")) cases.push(mk("/developers (portal), cold", "/developers", { heading: "h1" }, true));
      else notes.push(`/developers answered ${portal.status} ${portalType}: no portal page to time`);
      for (let round = 1; round <= starts; round++) {
        for (const c of cases) {
          progress(`load ${round}/${starts}: ${c.label}`);
          try {
            const t = await timeLoad(browser, herald.baseUrl + c.path, c.marks, c.cold);
            for (const [name, ms] of Object.entries(t.marks)) (c.times[name] ??= []).push(ms);
            if (t.fcp !== null) c.fcps.push(t.fcp);
            c.documents = t.documents;
            const marks = Object.entries(t.marks).map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`);
            progress(`  ${marks.join(", ")} (first paint ${t.fcp?.toFixed(0) ?? "-"} ms, wall ${t.wallMs.toFixed(0)} ms)`);
          } catch (err) {
            errors.push(`${c.label}: ${(err as Error).message.split("\n")[0]}`);
          }
        }
      }
    } finally {
      await browser.close();
      await herald.stop();
      dir.remove();
    }
    const baselineTimes = cases[0]!.times.heading;
    const baseline = baselineTimes?.length ? median(baselineTimes) : null;
    const first = cases[1]!.times["first operation"];
    const summary = [
      `navigation → drawn (median of ${starts}, min–max), Chromium 1280 px, CPU ${CPU_SLOWDOWN}× slower:`,
      ...cases.flatMap((c) => [
        `  ${c.label}: first paint ${fmt(c.fcps)}`,
        ...Object.keys(c.marks).map(
          (name) =>
            `    ${name.padEnd(16)} ${fmt(c.times[name]).padEnd(22)}${baseline !== null && c !== cases[0] && c.times[name]?.length ? ` ${(median(c.times[name]!) - baseline).toFixed(0)} ms over /status` : ""}`,
        ),
      ]),
      `budget (#74): the reference's first operation ≤ ${BUDGET_MS} ms cold: ${first?.length && median(first) <= BUDGET_MS ? "MET" : "NOT MET"}`,
      `documents the reference fetched (cold): ${
        Object.entries(cases[1]!.documents)
          .map(([p, bytes]) => `${p} ${bytes.toLocaleString("en-US")} bytes`)
          .join(", ") || "-"
      }`,
    ];
    const report: BenchReport & { loads: unknown } = {
      benchmark: "docs",
      description: docs.description,
      results: [],
      notes,
      summary,
      errors,
      loads: cases.map((c) => ({
        case: c.label,
        medians_ms: Object.fromEntries(Object.entries(c.times).map(([name, xs]) => [name, Math.round(median(xs))])),
        times_ms: Object.fromEntries(Object.entries(c.times).map(([name, xs]) => [name, xs.map(Math.round)])),
        first_paint_ms: c.fcps.map(Math.round),
        documents: c.documents,
      })),
    };
    return report;
  },
};

export default docs;
