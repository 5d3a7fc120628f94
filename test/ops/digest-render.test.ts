// The PNG charts drawn in the renderer thread (src/ops/digest/chart-renderer.ts, render-worker.ts): the same bytes as
// the in-thread renderers, through the routes too; a bounded queue (503 service_unavailable with Retry-After past it);
// a deadline that ends the worker.
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AppError } from "../../src/http/errors/errors";
import { ChartRenderer, chartRenderer, RENDER_MAX_WAITING } from "../../src/ops/digest/chart-renderer";
import { type ChartJob, drawChart } from "../../src/ops/digest/render-worker";
import { renderTrendPng, type TrendHour } from "../../src/ops/digest/trend-png";
import { renderUsagePng, type UsageChartData } from "../../src/ops/export-usage/chart";
import { recordExportUsage } from "../../src/ops/export-usage/service";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// A worker loads pngjs and the renderers before its first chart: well under a second, but not on a loaded machine.
setDefaultTimeout(60_000);

const hours: TrendHour[] = Array.from({ length: 48 }, (_, i) => ({
  hour: `2026-04-0${1 + Math.floor(i / 24)}T${String(i % 24).padStart(2, "0")}`,
  observed: (i * 7) % 13,
  suppressed: i % 5 === 0 ? 3 : 0,
  baseline: 4 + (i % 3),
  spike: i === 30,
}));
const usage: UsageChartData = {
  series: Array.from({ length: 30 }, (_, i) => ({
    day: `2026-03-${String(i + 1).padStart(2, "0")}`,
    downloads: i % 4,
    export_downloads: i % 3 === 0 ? i % 4 : 0,
    token_downloads: i % 3 === 0 ? 0 : i % 4,
    bytes: 100 * i,
  })),
  query: { days: 30, source: "all" },
  window: { from: "2026-03-01T00:00:00.000Z", to: "2026-03-30T12:00:00.000Z", days: 30 },
};
const trend = (w: number, h: number): ChartJob => ({ chart: "trend", hours, mode: "rolling_24h", w, h });

let renderers: ChartRenderer[] = [];
const renderer = (opts: ConstructorParameters<typeof ChartRenderer>[0] = {}) => {
  const r = new ChartRenderer(opts);
  renderers.push(r);
  return r;
};
afterEach(() => {
  for (const r of renderers) r.close();
  renderers = [];
});

describe("the renderer thread", () => {
  test("draws the same bytes as the renderers on this thread: both charts, small (pooled Buffer) and large", async () => {
    const r = renderer();
    for (const [w, h] of [
      [320, 200],
      [960, 420],
      [2000, 1200],
    ] as const) {
      expect(await r.render(trend(w, h))).toEqual(new Uint8Array(renderTrendPng(hours, "rolling_24h", w, h)));
    }
    for (const [w, h] of [
      [320, 200],
      [1600, 900],
    ] as const) {
      expect(await r.render({ chart: "usage", report: usage, w, h })).toEqual(new Uint8Array(renderUsagePng(usage, w, h)));
    }
    // One worker drew them all, one at a time.
    expect(r.started).toBe(1);
  });

  test(`one render runs and a bounded number wait (${RENDER_MAX_WAITING} by default); the next is refused at once: 503 service_unavailable, Retry-After`, async () => {
    const r = renderer({ maxWaiting: 2 });
    const accepted = [r.render(trend(2000, 1200)), r.render(trend(320, 200)), r.render(trend(640, 300))];
    const refused = await r.render(trend(320, 200)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "service_unavailable", status: 503, headers: { "retry-after": "2" } });
    // The accepted ones are drawn, in order, and the queue takes renders again once it has room.
    const pngs = await Promise.all(accepted);
    expect(pngs[1]).toEqual(new Uint8Array(drawChart(trend(320, 200))));
    expect(await r.render(trend(320, 200))).toEqual(pngs[1]!);
  });

  test("a render past its deadline is refused (503) and its worker ended; a waiting one past it too; the next gets a fresh worker", async () => {
    const r = renderer({ deadlineMs: 1 });
    const answers = await Promise.all([r.render(trend(2000, 1200)), r.render(trend(320, 200))].map((p) => p.catch((e: unknown) => e)));
    for (const a of answers) expect(a).toMatchObject({ code: "service_unavailable", status: 503 });
    // Each worker that held a render past its deadline was ended: the next render starts another.
    const before = r.started;
    expect(await r.render(trend(320, 200)).catch((e: unknown) => e)).toMatchObject({ status: 503 });
    expect(r.started).toBe(before + 1);
  });
});

describe("the routes draw in the renderer thread", () => {
  let h: TestApp | undefined;
  afterAll(async () => {
    await h?.close();
  });

  test("probe-trend.png and export-usage.png are the in-thread renderers' bytes of the same data; a busy renderer answers 503", async () => {
    h = await openTestApp({ clock: new FakeClock("2026-02-01T12:30:00.000Z") });
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const q = "?hours=48&w=800&h=360";
    const digest = (await h.json(`/admin/ops/403-digest${q.slice(0, 9)}`, { headers: auth })).body;
    const png = await h.request(`/admin/ops/403-digest/probe-trend.png${q}`, { headers: auth });
    expect([png.status, png.headers.get("content-type")]).toEqual([200, "image/png"]);
    expect(new Uint8Array(await png.arrayBuffer())).toEqual(new Uint8Array(renderTrendPng(digest.hours, digest.params.baseline_mode, 800, 360)));

    // Token downloads only: every export request of this test (the JSON, the PNG) records a direct download of its
    // own, after its answer, which would make the two reads see different data.
    for (const [day, n] of [
      ["2026-01-20", 2],
      ["2026-01-27", 5],
      ["2026-02-01", 1],
    ] as const) {
      for (let i = 0; i < n; i++) await recordExportUsage(h.ctx, { at: `${day}T08:00:00.000Z`, actor: "admin", export: "/x", bytes: 10, source: "token" });
    }
    const B = "/admin/ops/alerts-monitor";
    const report = (await h.json(`${B}/export-usage.json?days=14&source=token`, { headers: auth })).body;
    expect(report.totals.downloads).toBe(8);
    const chart = await h.request(`${B}/export-usage.png?days=14&source=token&w=640&h=300`, { headers: auth });
    expect(chart.status).toBe(200);
    expect(new Uint8Array(await chart.arrayBuffer())).toEqual(new Uint8Array(renderUsagePng(report as UsageChartData, 640, 300)));

    // The process's renderer, filled: one drawing and RENDER_MAX_WAITING waiting. The route is refused at once.
    const filling = Array.from({ length: RENDER_MAX_WAITING + 1 }, () => chartRenderer.render(trend(2000, 1200)).catch(() => null));
    const busy = await h.request(`/admin/ops/403-digest/probe-trend.png${q}`, { headers: auth });
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toBe("2");
    expect(((await busy.json()) as { error: string }).error).toBe("service_unavailable");
    await Promise.all(filling);
  });
});
