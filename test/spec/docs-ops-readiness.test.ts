// Docs audit: docs/ops-readiness.md against the real app — the 403-noise windows over real rollups (sums of the
// per-day points, each window its own span, the thresholds compared before rounding) and the synthetic probes
// over real HTTP with the zero-history export. (Defaults, bounds and the CSV's shape: test/spec/docs-ops.test.ts,
// docs-ops-2.test.ts, docs-ops-bounds.test.ts.)
import { afterEach, describe, expect, test } from "bun:test";
import { runSyntheticProbes } from "../../src/ops/readiness/probes";
import { afterResponses, openTestApp, type TestApp, type TestAppOptions } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
async function admin(opts: TestAppOptions = {}) {
  h = await openTestApp(opts);
  return { authorization: `Bearer ${await createAdminToken(h)}` };
}
/** `forbidden` refused operator reads (403) and `other` refused public reads (400) at `iso`, flushed to the rollups. */
async function traffic(iso: string, forbidden: number, other: number) {
  h.clock.set(iso);
  for (let i = 0; i < forbidden; i++) await h.request("/admin/ops/readiness");
  for (let i = 0; i < other; i++) await h.request("/api/public/system-status/trend?limit=abc");
  await afterResponses();
  await h.ctx.requestLog.flush();
}

describe("docs/ops-readiness.md", () => {
  // docs/ops-readiness.md:20-23, 35-39 — a window is the sum of its days; a 30-day window is whole with days=7
  test("windows: sums of their days, each over its own span", async () => {
    const auth = await admin({ env: { READINESS_403_MAX_PER_HOUR: "1" } });
    await traffic("2026-03-15T05:10:00.000Z", 3, 1);
    await traffic("2026-03-20T23:59:00.000Z", 1, 1);
    await traffic("2026-03-25T00:00:00.000Z", 1, 0);
    await traffic("2026-03-31T09:05:00.000Z", 12, 8);
    h.clock.set("2026-03-31T09:30:00.000Z");
    const r = (await h.json("/admin/ops/readiness/403-noise/export.json?days=7&include_windows_meta=1", { headers: auth })).body;
    expect(r.threshold).toEqual({ max_percent: 5, max_per_hour: 1 });
    const w = r.windows.map((x: any) => [x.window_days, x.requests, x.forbidden, x.noise_percent, x.meta.hours_total, x.meta.hours_with_data]);
    expect(w).toEqual([
      [7, 21, 13, 61.9, 154, 2],
      [14, 23, 14, 60.87, 322, 3],
      [30, 27, 17, 62.96, 706, 4],
    ]);
    const sum = (k: string) => r.points.reduce((n: number, p: any) => n + p[k], 0);
    expect([sum("requests"), sum("forbidden")]).toEqual([21, 13]);
    // docs/ops-readiness.md:25-29 — per elapsed hour: today 12 over 10 hours is over 1/h
    expect(r.points.at(-1)).toEqual({ date: "2026-03-31", requests: 20, forbidden: 12, noise_percent: 60, forbidden_per_hour: 1.2, within_threshold: false });
    expect(r.points[1]).toEqual({ date: "2026-03-26", requests: 0, forbidden: 0, noise_percent: null, forbidden_per_hour: 0, within_threshold: true });
  });

  // docs/ops-readiness.md:25-29 — compared on the exact counts: 1 of 21 (4.7619…%) prints 4.76
  for (const [max, within] of [
    ["4.7619", false],
    ["4.762", true],
  ] as const) {
    test(`threshold ${max}% against 1 forbidden in 21 requests: within_threshold ${within}`, async () => {
      const auth = await admin({ env: { READINESS_403_NOISE_MAX_PERCENT: max } });
      await traffic("2026-03-31T09:05:00.000Z", 1, 20);
      const r = (await h.json("/admin/ops/readiness/403-noise/export.json?days=7&windows=7&compact=1", { headers: auth })).body;
      expect(r.windows[0]).toMatchObject({ requests: 21, forbidden: 1, noise_percent: 4.76, within_threshold: within });
      expect(r.within_threshold).toBe(within);
    });
  }

  // docs/ops-readiness.md:45-46 — windows=7,abc names query.windows
  test("windows=7,abc", async () => {
    const auth = await admin();
    const r = await h.json("/admin/ops/readiness/403-noise/export.json?windows=7,abc", { headers: auth });
    expect([r.status, r.body.error, r.body.details[0].field]).toEqual([400, "invalid_query", "query.windows"]);
  });

  // docs/ops-readiness.md:166-220 — the probes over real HTTP: ok, had data or empty; a refused connection fails
  // with its error; the zero-history export lists the failed and empty rows newest first
  test("synthetic probes and the zero history", async () => {
    // The longest time limit the configuration allows: a loaded machine must not turn a slow answer into a failure.
    const auth = await admin({ env: { SYNTHETIC_PROBE_TIMEOUT_MS: "60000" } });
    h.clock.set("2026-04-01T12:00:00.000Z");
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => h.app.handle(req) });
    const base = `http://127.0.0.1:${server.port}`;
    let run: Awaited<ReturnType<typeof runSyntheticProbes>>;
    try {
      run = await runSyntheticProbes(h.ctx, base);
    } finally {
      server.stop(true);
    }
    expect(run.results.map((r) => [r.probe, r.status, r.ok, r.had_data, r.error])).toEqual([
      ["system_status", 200, true, true, null],
      ["public_stats", 200, true, false, null],
      ["holder_cache_proof", 200, true, false, null],
      ["share_link_validate", 200, true, true, null],
    ]);
    h.clock.set("2026-04-04T12:01:00.000Z");
    const dead = await runSyntheticProbes(h.ctx, base);
    // The stopped server's port (another process could take it on a busy machine: only "failed" is asserted).
    expect(dead.results.every((r) => !r.ok && !r.had_data && r.error !== null)).toBe(true);
    const csv = await h.request("/admin/ops/readiness/synthetic-zero-history.csv?limit=6&days=7", { headers: auth });
    const rows = (await csv.text()).trim().split("\r\n");
    expect(rows[0]).toBe("at,run_id,probe,url,outcome,status,latency_ms,had_data,ok,error");
    const cols = rows.slice(1).map((l) => l.split(","));
    expect(cols.map((c) => [c[0], c[4]])).toEqual([
      ...Array(4).fill(["2026-04-04T12:01:00.000Z", "failed"]),
      ["2026-04-01T12:00:00.000Z", "empty"],
      ["2026-04-01T12:00:00.000Z", "empty"],
    ]);
    expect(cols.slice(4).map((c) => [c[5], c[7], c[8]])).toEqual([
      ["200", "false", "true"],
      ["200", "false", "true"],
    ]);
    expect(
      cols
        .slice(4)
        .map((c) => c[2])
        .sort(),
    ).toEqual(["holder_cache_proof", "public_stats"]);
  });
});
