import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { EventLoopLag, eventLoopLag, LagHistogram, LAG_SAMPLE_MS } from "../../src/ops/event-loop-lag";
import { openTestApp, type TestApp } from "../support/app";
import { tableOf, textById } from "../support/console";
import { createAdminToken } from "../support/partner";

// Event-loop lag (issue 71): a late-timer sampler whose every firing is one observation of how late it ran, served
// as herald_event_loop_lag_seconds (and the last minute's worst as herald_event_loop_lag_max_seconds), shown on the
// readiness page and in its JSON. The lag is the process's, not the database's: the app tests run on either engine
// (HERALD_TEST_ENGINE=postgres) to show the page and the series are there on both.

const promtool = Bun.which("promtool") ?? (existsSync("/usr/bin/promtool") ? "/usr/bin/promtool" : null);

/** The value of one sample line (exact label text) in the exposition, or undefined when absent. */
function sample(body: string, name: string, labels = ""): string | undefined {
  const prefix = `${name}${labels ? `{${labels}}` : ""} `;
  return body
    .split("\n")
    .find((l) => l.startsWith(prefix))
    ?.slice(prefix.length);
}

/** The lines of one metric family (HELP, TYPE and samples), as `promtool check metrics` reads them. */
const family = (body: string, name: string) =>
  body
    .split("\n")
    .filter((l) => l.startsWith(`${name}_`) || l.startsWith(`${name} `) || l.startsWith(`# HELP ${name} `) || l.startsWith(`# TYPE ${name} `))
    .join("\n");

/** Holds the thread, as a synchronous SQLite statement over a large table would. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

describe("the sampler (a fake clock for its window)", () => {
  const make = () => {
    let now = 1_000_000;
    const histogram = new LagHistogram("lag_seconds", "test");
    const lag = new EventLoopLag(histogram, () => now);
    return { lag, histogram, advance: (ms: number) => (now += ms) };
  };

  test("nothing measured: not_measured, NaN for the gauge", () => {
    const { lag } = make();
    expect(lag.snapshot()).toMatchObject({ state: "not_measured", sampling: false, samples: 0, max_ms: null, p99_ms: null, p50_ms: null });
    expect(lag.maxSeconds()).toBeNaN();
  });

  test("the worst sample of the last minute decides the state: warn from 100 ms, bad from 1 s; older samples drop out", async () => {
    const { lag, histogram, advance } = make();
    for (let i = 0; i < 197; i++) lag.record(0.0002);
    lag.record(0.12);
    lag.record(0.09);
    lag.record(0.05);
    let now = lag.snapshot();
    expect(now).toMatchObject({ state: "warn", samples: 200, max_ms: 120, p50_ms: 0.2, warn_ms: 100, bad_ms: 1000, window_seconds: 60 });
    // The 99th percentile of 200 samples is the 198th smallest: the third worst.
    expect(now.p99_ms).toBe(50);
    advance(30_000);
    lag.record(2.04);
    expect(lag.snapshot()).toMatchObject({ state: "bad", max_ms: 2040 });
    expect(lag.maxSeconds()).toBe(2.04);
    // 61 s after the first samples: only the stall is left in the window.
    advance(31_000);
    now = lag.snapshot();
    expect(now).toMatchObject({ state: "bad", samples: 1, max_ms: 2040, p99_ms: 2040, p50_ms: 2040 });
    advance(30_000);
    expect(lag.snapshot().state).toBe("not_measured");
    // The histogram keeps every observation: one stall is one observation, in the 2.5 s bucket and not the 1 s one.
    const { values } = await histogram.get();
    const bucket = (le: number | string) => values.find((v) => v.metricName === "lag_seconds_bucket" && v.labels.le === le)?.value;
    expect(values.find((v) => v.metricName === "lag_seconds_count")?.value).toBe(201);
    expect([bucket(0.001), bucket(0.1), bucket(0.25), bucket(1), bucket(2.5), bucket("+Inf")]).toEqual([197, 199, 200, 200, 201, 201]);
  });

  test("the real timer: re-armed after each firing, stopped by stop()", async () => {
    const { lag } = make();
    const real = new EventLoopLag(new LagHistogram("real_lag_seconds", "test"));
    real.start();
    try {
      expect(real.sampling).toBe(true);
      await Bun.sleep(LAG_SAMPLE_MS * 6);
      const n = real.snapshot().samples;
      expect(n).toBeGreaterThanOrEqual(3);
      real.stop();
      await Bun.sleep(LAG_SAMPLE_MS * 3);
      expect(real.snapshot().samples).toBe(n);
      expect(real.sampling).toBe(false);
    } finally {
      real.stop();
    }
    expect(lag.sampling).toBe(false);
  });

  test("a running sampler does not keep a process alive (its timer is unref'd)", () => {
    const script = `import { EventLoopLag, LagHistogram } from "./src/ops/event-loop-lag";
new EventLoopLag(new LagHistogram("x_seconds", "x")).start();
console.log("started");`;
    const r = spawnSync(process.execPath, ["-e", script], { cwd: join(import.meta.dir, "../.."), encoding: "utf8", timeout: 20_000 });
    expect(r.stdout.trim()).toBe("started");
    expect(r.signal).toBeNull(); // not killed by the timeout: it ended by itself
    expect(r.status).toBe(0);
  });
});

describe("in the app", () => {
  let h: TestApp;
  afterEach(async () => {
    eventLoopLag(h.ctx).stop();
    await h.close();
  });

  const scrape = async (auth: Record<string, string>) => {
    const res = await h.request("/metrics", { headers: auth });
    expect(res.status).toBe(200);
    return res.text();
  };

  test("not sampling (no serve): the series are served empty, the JSON and the page say not measured", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const body = await scrape(auth);
    expect(body).toContain("# TYPE herald_event_loop_lag_seconds histogram");
    expect(sample(body, "herald_event_loop_lag_seconds_count")).toBe("0");
    expect(sample(body, "herald_event_loop_lag_seconds_bucket", 'le="30"')).toBe("0");
    expect(body).toContain("# TYPE herald_event_loop_lag_max_seconds gauge");
    expect(Number(sample(body, "herald_event_loop_lag_max_seconds")?.replace("Nan", "NaN"))).toBeNaN();

    const json = await h.json("/admin/ops/readiness/event-loop.json", { headers: auth });
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({
      success: true,
      instance_id: h.ctx.instanceId,
      event_loop: { state: "not_measured", sampling: false, samples: 0, max_ms: null },
    });
    const html = await (await h.request("/admin/ops/readiness", { headers: auth })).text();
    expect(textById(html, "event-loop-not-measured")).toBe("Not measured: only herald serve samples its event loop.");
    // An operator route like the others: nobody else.
    expect((await h.request("/admin/ops/readiness/event-loop.json")).status).toBe(403);
  });

  test("a 300 ms block is one observation over 0.25 s on /metrics, and warn on the readiness JSON and page", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const lag = eventLoopLag(h.ctx);
    lag.start();
    await Bun.sleep(LAG_SAMPLE_MS * 5);
    const before = await scrape(auth);
    const count0 = Number(sample(before, "herald_event_loop_lag_seconds_count"));
    expect(count0).toBeGreaterThanOrEqual(2);
    const over = (body: string, le: string) =>
      Number(sample(body, "herald_event_loop_lag_seconds_count")) - Number(sample(body, "herald_event_loop_lag_seconds_bucket", `le="${le}"`));
    expect(over(before, "0.25")).toBe(0);

    busy(300);
    await Bun.sleep(LAG_SAMPLE_MS * 3);
    const after = await scrape(auth);
    expect(Number(sample(after, "herald_event_loop_lag_seconds_count"))).toBeGreaterThan(count0);
    // Exactly one observation above 0.25 s (the timer was waiting through the whole block), at most 0.3 s and a bit.
    expect(over(after, "0.25")).toBe(1);
    expect(over(after, "0.5")).toBe(0);
    expect(Number(sample(after, "herald_event_loop_lag_seconds_sum"))).toBeGreaterThanOrEqual(0.28);
    const max = Number(sample(after, "herald_event_loop_lag_max_seconds"));
    expect(max).toBeGreaterThanOrEqual(0.28);
    expect(max).toBeLessThan(0.5);
    if (promtool) {
      // The two families parse and pass promtool's lint (names, units, suffixes).
      const input = `${family(after, "herald_event_loop_lag_seconds")}\n${family(after, "herald_event_loop_lag_max_seconds")}\n`;
      const r = spawnSync(promtool, ["check", "metrics"], { input, encoding: "utf8", timeout: 30_000 });
      expect(`${r.stdout}${r.stderr}`.trim()).toBe("");
      expect(r.status).toBe(0);
    }

    const json = await h.json("/admin/ops/readiness/event-loop.json", { headers: auth });
    expect(json.status).toBe(200);
    const e = json.body.event_loop;
    expect(e).toMatchObject({ state: "warn", sampling: true, interval_ms: LAG_SAMPLE_MS, window_seconds: 60, warn_ms: 100, bad_ms: 1000 });
    expect(e.max_ms).toBeGreaterThanOrEqual(280);
    expect(e.max_ms).toBeLessThan(500);
    expect(e.samples).toBeGreaterThanOrEqual(4);
    // One stall among the samples: the median stays small.
    expect(e.p50_ms).toBeLessThan(50);
    const withMeta = await h.json("/admin/ops/readiness/event-loop.json?include_meta=1", { headers: auth });
    expect(typeof withMeta.body.meta?.request_id).toBe("string");

    const html = await (await h.request("/admin/ops/readiness", { headers: auth })).text();
    expect(html).toContain('id="event-loop"');
    expect(textById(html, "event-loop-instance")).toBe(h.ctx.instanceId);
    const [row] = tableOf(html, "event-loop-lag");
    expect(row?.cells.State).toBe("warn");
    expect(row?.html).toContain('<span class="badge warn">warn</span>');
    expect(Number.parseFloat(row?.cells.Worst ?? "")).toBe(e.max_ms);
    expect(html).toContain('href="/admin/ops/readiness/event-loop.json"');
  });
});
