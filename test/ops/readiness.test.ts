import { afterEach, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { plantHour } from "./support";

// The 403 noise export, from planted hourly rollups (request_log_hourly) and from real traffic through the app.
// "Now" is 2026-03-31T09:30Z: today is a partial day of 10 hours (00 … 09).
const NOW = "2026-03-31T09:30:00.000Z";
const JSON_URL = "/admin/ops/readiness/403-noise/export.json";
const CSV_URL = "/admin/ops/readiness/403-noise/export.csv";
const ROUTES = [JSON_URL, CSV_URL, "/admin/ops/readiness/synthetic-zero-history.csv"];

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

async function setup(env: Record<string, string> = {}) {
  h = await openTestApp({ env, clock: new FakeClock(NOW) });
  const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  return { auth, get: (path: string) => h.json(path, { headers: auth }), raw: (path: string) => h.request(path, { headers: auth }) };
}

const plant = (hour: string, requests: number, forbidden: number) => plantHour(h.ctx.store, hour, requests, forbidden);

const dayBefore = (n: number) => new Date(Date.parse(NOW) - n * 86_400_000).toISOString().slice(0, 10);

/**
 * 30 days, one rollup hour each (05:00) of 1000 requests: the last 7 days 10 403s a day (1 %), the 7 before
 * 100 a day (10 %), older days none. Outside every window: a day 30 days back and an hour later today.
 */
async function plantMonth() {
  for (let d = 0; d < 30; d++) await plant(`${dayBefore(d)}T05`, 1000, d < 7 ? 10 : d < 14 ? 100 : 0);
  await plant(`${dayBefore(30)}T23`, 5000, 4999);
  await plant(`${dayBefore(0)}T23`, 5000, 4999); // an hour not yet reached: never counted
}

describe("403 noise export.json", () => {
  test("per-window figures are exact sums of the planted rollups, compared with the 5 % default threshold", async () => {
    const { get } = await setup();
    await plantMonth();
    const res = await get(JSON_URL);
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b).toMatchObject({
      success: true,
      generated_at: NOW,
      days: 30,
      threshold: { max_percent: 5, max_per_hour: null },
      within_threshold: false,
      query: { days: 30, windows: [7, 14, 30], compact: false, include_windows_meta: false },
    });
    expect(b.windows).toEqual([
      // 7 days: 70 of 7000 = 1 %; 6 × 24 + 10 = 154 hours.
      { window_days: 7, requests: 7000, forbidden: 70, noise_percent: 1, forbidden_per_hour: 0.45, within_threshold: true },
      // 14 days: 770 of 14000 = 5.5 % > 5 %; 322 hours.
      { window_days: 14, requests: 14000, forbidden: 770, noise_percent: 5.5, forbidden_per_hour: 2.39, within_threshold: false },
      // 30 days: 770 of 30000 = 2.5667 %; 706 hours.
      { window_days: 30, requests: 30000, forbidden: 770, noise_percent: 2.57, forbidden_per_hour: 1.09, within_threshold: true },
    ]);
    expect(b.points).toHaveLength(30);
    expect(b.points[0].date).toBe("2026-03-02");
    expect(b.points[29]).toEqual({ date: "2026-03-31", requests: 1000, forbidden: 10, noise_percent: 1, forbidden_per_hour: 1, within_threshold: true });
    expect(b.points[29 - 7]).toEqual({
      date: dayBefore(7),
      requests: 1000,
      forbidden: 100,
      noise_percent: 10,
      forbidden_per_hour: 4.17,
      within_threshold: false,
    });
    // The windows are the sums of their last N points.
    for (const w of b.windows) {
      const span = b.points.slice(30 - w.window_days);
      expect(span.reduce((a: number, p: { forbidden: number }) => a + p.forbidden, 0)).toBe(w.forbidden);
      expect(span.reduce((a: number, p: { requests: number }) => a + p.requests, 0)).toBe(w.requests);
    }
  });

  test("thresholds come from the config: a higher percentage, and the per-hour limit when set", async () => {
    const { get } = await setup({ READINESS_403_NOISE_MAX_PERCENT: "10", READINESS_403_MAX_PER_HOUR: "2" });
    await plantMonth();
    const b = (await get(`${JSON_URL}?compact=1`)).body;
    expect(b.threshold).toEqual({ max_percent: 10, max_per_hour: 2 });
    // 14 days: 5.5 % is within 10 %, but 2.39 403s per hour is over 2.
    expect(b.windows.map((w: { within_threshold: boolean }) => w.within_threshold)).toEqual([true, false, true]);
    expect(b.within_threshold).toBe(false);
  });

  test("exactly at the threshold is within; a hair over is not (compared before rounding)", async () => {
    const { get } = await setup({ READINESS_403_NOISE_MAX_PERCENT: "5" });
    await plant(`${dayBefore(0)}T01`, 2000, 100);
    expect((await get(`${JSON_URL}?days=7&compact=1`)).body.windows[0]).toMatchObject({ noise_percent: 5, within_threshold: true });
    await plant(`${dayBefore(0)}T02`, 99_999, 5000); // 5100 / 101999 = 5.0001 %
    expect((await get(`${JSON_URL}?days=7&compact=1`)).body.windows[0]).toMatchObject({ noise_percent: 5, within_threshold: false });
  });

  test("no traffic: zeros, noise null, within the threshold", async () => {
    const { get } = await setup();
    const b = (await get(`${JSON_URL}?days=7`)).body;
    expect(b.windows).toEqual(
      [7, 14, 30].map((n) => ({ window_days: n, requests: 0, forbidden: 0, noise_percent: null, forbidden_per_hour: 0, within_threshold: true })),
    );
    expect(b.points).toHaveLength(7);
    expect(b.within_threshold).toBe(true);
  });

  test("days picks the points only; the windows default to 7,14,30 whatever days is; windows picks and sorts; compact drops points; meta gives each span", async () => {
    const { get } = await setup();
    await plantMonth();
    const d7 = (await get(`${JSON_URL}?days=7`)).body;
    const d30 = (await get(`${JSON_URL}?days=30`)).body;
    expect(d7.query.windows).toEqual([7, 14, 30]);
    expect(d7.points).toHaveLength(7);
    expect(d7.points).toEqual(d30.points.slice(23));
    // A window longer than days reads its own span: the same figures as with days=30.
    expect(d7.windows).toEqual(d30.windows);
    expect((await get(`${JSON_URL}?days=14`)).body.query.windows).toEqual([7, 14, 30]);
    expect((await get(`${JSON_URL}?days=7&windows=14`)).body.windows.map((w: { window_days: number }) => w.window_days)).toEqual([14]);

    const picked = (await get(`${JSON_URL}?windows=30,7&compact=1&include_windows_meta=1`)).body;
    expect(picked.points).toBeUndefined();
    expect(picked.query).toEqual({ days: 30, windows: [7, 30], compact: true, include_windows_meta: true });
    expect(picked.windows.map((w: { window_days: number }) => w.window_days)).toEqual([7, 30]);
    expect(picked.windows[0].meta).toEqual({
      from: "2026-03-25T00:00:00.000Z",
      to: NOW,
      from_hour: "2026-03-25T00",
      to_hour: "2026-03-31T09",
      hours_total: 154,
      hours_with_data: 7,
    });
    expect(picked.windows[1].meta).toMatchObject({ from: "2026-03-02T00:00:00.000Z", hours_total: 706, hours_with_data: 30 });

    const plain = (await get(`${JSON_URL}?windows=14&include_windows_meta=0&compact=0`)).body;
    expect(plain.windows[0].meta).toBeUndefined();
    expect(plain.points).toHaveLength(30);
  });

  test("real traffic: the request-log flush fills the rollups the export reads", async () => {
    const { get } = await setup();
    for (let i = 0; i < 5; i++) expect((await h.request("/api/public/system-status")).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await h.request(JSON_URL)).status).toBe(403);
    // After-response hooks record the requests (a bounded wait for all 8); the status route flushes the log itself
    // before it reads it, so some rows are written already. One flush writes the rest, rows and rollups together.
    const logged = async () => h.ctx.requestLog.pending + (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log"))!.n;
    for (let i = 0; i < 50 && (await logged()) < 8; i++) await Bun.sleep(0);
    await h.ctx.requestLog.flush();
    expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log"))!.n).toBe(8);
    const b = (await get(`${JSON_URL}?days=7&include_windows_meta=1`)).body;
    expect(b.windows[0]).toMatchObject({ requests: 8, forbidden: 3, noise_percent: 37.5, within_threshold: false });
    expect(b.windows[0].meta.hours_with_data).toBe(1);
    expect(b.points[6]).toMatchObject({ date: "2026-03-31", requests: 8, forbidden: 3 });
  });
});

describe("bad input is a 400 naming the parameter, never a 500", () => {
  test("days only 7, 14 or 30; windows a list of distinct 7|14|30; enums and flags", async () => {
    const { get } = await setup();
    const cases: Array<[string, string]> = [
      ["days=10", "query.days"],
      ["days=6", "query.days"],
      ["days=31", "query.days"],
      ["days=1.5", "query.days"],
      ["days=abc", "query.days"],
      ["days=1e308", "query.days"],
      ["windows=7,abc", "query.windows"],
      ["windows=7,7", "query.windows"],
      ["windows=", "query.windows"],
      ["windows=7,", "query.windows"],
      ["windows=10", "query.windows"],
      ["compact=yes", "query.compact"],
      ["include_windows_meta=2", "query.include_windows_meta"],
    ];
    for (const [q, field] of cases) {
      const r = await get(`${JSON_URL}?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toBe("invalid_query");
      expect(
        r.body.details.map((d: { field: string }) => d.field),
        q,
      ).toContain(field);
      expect(r.body.message, q).toContain(field);
    }
    expect((await get(`${JSON_URL}?days=10`)).body.details).toEqual([{ field: "query.days", problem: "must be one of: 7, 14, 30; got 10" }]);
    // Text and values outside the range name the same three values, not the range 7–30 they fall outside.
    for (const [q, got] of [
      ["days=abc", '"abc"'],
      ["days=31", '"31"'],
    ]) {
      expect((await get(`${CSV_URL}?${q}`)).body.details, q).toEqual([{ field: "query.days", problem: `must be one of: 7, 14, 30; got ${got}` }]);
    }
    for (const [q, field] of [
      ["days=10", "query.days"],
      ["windows=7,abc", "query.windows"],
      ["mode=full", "query.mode"],
      ["include_points=true", "query.include_points"],
    ] as const) {
      const r = await get(`${CSV_URL}?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.details[0].field, q).toBe(field);
    }
    for (const q of ["limit=0", "limit=1001", "limit=1.5", "days=0", "days=91", "days=Infinity"]) {
      const r = await get(`/admin/ops/readiness/synthetic-zero-history.csv?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
  });

  test("every readiness route is 403 without the admin token, and with a wrong one", async () => {
    await setup();
    for (const path of ROUTES) {
      for (const headers of [{}, { authorization: "Bearer not-a-token" }] as Array<Record<string, string>>) {
        const r = await h.json(path, { headers });
        expect(r.status, path).toBe(403);
        expect(r.body.error).toBe("forbidden");
      }
    }
  });
});

describe("403 noise export.csv", () => {
  type Row = Record<string, string>;
  const num = (s: string) => (s === "" ? null : Number(s));

  test("summary rows equal the JSON windows (with meta) and day rows equal the JSON points", async () => {
    const { get, raw } = await setup();
    await plantMonth();
    const json = (await get(`${JSON_URL}?include_windows_meta=1`)).body;
    const res = await raw(`${CSV_URL}?mode=summary&include_points=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="herald-403-noise-30d-summary.csv"');
    const rows = parse(await res.text(), { columns: true }) as Row[];
    const windows = rows.filter((r) => r.row_type === "window");
    const days = rows.filter((r) => r.row_type === "day");
    expect(windows.length + days.length).toBe(rows.length);
    expect(
      windows.map((r) => ({
        window_days: Number(r.window_days),
        requests: Number(r.requests),
        forbidden: Number(r.forbidden),
        noise_percent: num(r.noise_percent!),
        forbidden_per_hour: Number(r.forbidden_per_hour),
        within_threshold: r.within_threshold === "true",
        meta: { from: r.from, to: r.to, hours_total: Number(r.hours_total), hours_with_data: Number(r.hours_with_data) },
      })),
    ).toEqual(json.windows.map(({ meta: { from_hour: _f, to_hour: _t, ...meta }, ...w }: any) => ({ ...w, meta })));
    expect(
      days.map((r) => ({
        date: r.date,
        requests: Number(r.requests),
        forbidden: Number(r.forbidden),
        noise_percent: num(r.noise_percent!),
        forbidden_per_hour: Number(r.forbidden_per_hour),
        within_threshold: r.within_threshold === "true",
      })),
    ).toEqual(json.points);
    for (const r of rows) expect({ max_percent: r.max_percent, max_per_hour: r.max_per_hour }).toEqual({ max_percent: "5", max_per_hour: "" });
  });

  test("default mode is one row per day; summary alone is one row per window; headers always present", async () => {
    const { raw } = await setup();
    await plantMonth();
    const points = parse(await (await raw(`${CSV_URL}?days=14`)).text(), { columns: true }) as Row[];
    expect(points.map((r) => r.row_type)).toEqual(Array(14).fill("day"));
    expect(points.at(-1)).toMatchObject({
      date: "2026-03-31",
      requests: "1000",
      forbidden: "10",
      noise_percent: "1",
      within_threshold: "true",
      window_days: "",
    });
    const summary = parse(await (await raw(`${CSV_URL}?mode=summary&windows=7,14`)).text(), { columns: true }) as Row[];
    expect(summary.map((r) => [r.row_type, r.window_days, r.within_threshold])).toEqual([
      ["window", "7", "true"],
      ["window", "14", "false"],
    ]);
    const header = (await (await raw(`${CSV_URL}?mode=summary`)).text()).split("\r\n")[0];
    expect(header).toBe(
      "row_type,window_days,date,requests,forbidden,noise_percent,forbidden_per_hour,within_threshold,max_percent,max_per_hour,from,to,hours_total,hours_with_data",
    );
  });
});
