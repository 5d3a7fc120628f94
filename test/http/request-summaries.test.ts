// The request log's hourly summaries per key and route (src/http/request-log/summary.ts): kept by the flush in the
// transaction that writes the rows, equal to a computation over request_log's raw rows (counts exactly; latency
// buckets exactly, so percentiles within the histogram's stated error), rebuilt from the raw rows by the catch-up
// for hours logged before the summaries existed, and pruned in batches after their retention.
// On the engine HERALD_TEST_ENGINE names (flush, catch-up and prune run through the storage port on both).
import { afterEach, expect, test } from "bun:test";
import type { Queryable } from "../../src/db/port";
import { latencyOf, requestCountsOf, routeSummariesTask } from "../../src/http/request-log/latency";
import { catchUpRollups } from "../../src/http/request-log/catchup";
import { BUCKET_COLUMNS, BUCKET_COUNT, bucketOf } from "../../src/http/request-log/histogram";
import { ALL_KEYS, routeSummaries, windowParts } from "../../src/http/request-log/summary";
import { SUMMARY_RETENTION_DAYS } from "../../src/system/jobs";
import { openTestApp, type TestApp } from "../support/app";
import { createKey } from "../support/partner";
import { insertLog } from "../partner/request-log-rows";

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Summary = {
  key_ref: number;
  hour: string;
  route: string;
  requests: number;
  client_errors: number;
  server_errors: number;
  rate_limited: number;
  buckets: number[];
};

/** What the summaries must hold, computed from request_log's raw rows in TypeScript (an independent fold). */
async function fromRawRows(q: Queryable): Promise<Summary[]> {
  const rows = await q.all<{ at: string; route: string; status: number; latency_us: number; key_ref: number | null }>(
    "SELECT at, route, status, latency_us, key_ref FROM request_log",
  );
  const cells = new Map<string, Summary>();
  const add = (keyRef: number, r: (typeof rows)[number]) => {
    const hour = r.at.slice(0, 13);
    const id = `${keyRef}|${hour}|${r.route}`;
    const c = cells.get(id) ?? {
      key_ref: keyRef,
      hour,
      route: r.route,
      requests: 0,
      client_errors: 0,
      server_errors: 0,
      rate_limited: 0,
      buckets: Array(BUCKET_COUNT).fill(0),
    };
    cells.set(id, c);
    c.requests++;
    if (r.status >= 500) c.server_errors++;
    else if (r.status >= 400) c.client_errors++;
    if (r.status === 429) c.rate_limited++;
    c.buckets[bucketOf(r.latency_us)]++;
  };
  for (const r of rows) {
    add(ALL_KEYS, r);
    if (r.key_ref !== null) add(r.key_ref, r);
  }
  return sorted([...cells.values()]);
}

async function stored(q: Queryable): Promise<Summary[]> {
  const rows = await q.all<Record<string, number | string>>("SELECT * FROM request_summary_hourly");
  return sorted(
    rows.map((r) => ({
      key_ref: Number(r.key_ref),
      hour: String(r.hour),
      route: String(r.route),
      requests: Number(r.requests),
      client_errors: Number(r.client_errors),
      server_errors: Number(r.server_errors),
      rate_limited: Number(r.rate_limited),
      buckets: BUCKET_COLUMNS.map((c) => Number(r[c])),
    })),
  );
}

/** The daily rows, each as the sum of its day's hourly rows must be (the fold done here, in TypeScript). */
async function dailyFromHourly(q: Queryable): Promise<Summary[]> {
  const days = new Map<string, Summary>();
  for (const h of await stored(q)) {
    const day = h.hour.slice(0, 10);
    const id = `${h.key_ref}|${day}|${h.route}`;
    const d = days.get(id) ?? { ...h, hour: day, requests: 0, client_errors: 0, server_errors: 0, rate_limited: 0, buckets: Array(BUCKET_COUNT).fill(0) };
    days.set(id, d);
    d.requests += h.requests;
    d.client_errors += h.client_errors;
    d.server_errors += h.server_errors;
    d.rate_limited += h.rate_limited;
    h.buckets.forEach((n, i) => {
      d.buckets[i] += n;
    });
  }
  return sorted([...days.values()]);
}

async function storedDaily(q: Queryable): Promise<Summary[]> {
  const rows = await q.all<Record<string, number | string>>("SELECT * FROM request_summary_daily");
  return sorted(
    rows.map((r) => ({
      key_ref: Number(r.key_ref),
      hour: String(r.day),
      route: String(r.route),
      requests: Number(r.requests),
      client_errors: Number(r.client_errors),
      server_errors: Number(r.server_errors),
      rate_limited: Number(r.rate_limited),
      buckets: BUCKET_COLUMNS.map((c) => Number(r[c])),
    })),
  );
}

const sorted = (s: Summary[]) => s.sort((a, b) => a.key_ref - b.key_ref || a.hour.localeCompare(b.hour) || a.route.localeCompare(b.route));

/** Requests of two keys and of none, over three hours, every outcome and latencies from 5 µs to 90 s. */
async function traffic(app: TestApp) {
  const a = await createKey(app, { partner: "Acme" });
  const b = await createKey(app, { partner: "Bolt" });
  const statuses = [200, 201, 304, 400, 403, 404, 429, 500, 503];
  const latencies = [5, 16, 17, 900, 1_000, 12_345, 250_000, 4_000_000, 90_000_000];
  const now = app.clock.now().getTime();
  for (const [k, key] of [a.keyId, b.keyId, null].entries()) {
    const rows = Array.from({ length: 300 }, (_, i) => ({
      route: `/r${(i + k) % 4}`,
      status: statuses[(i * 7 + k) % statuses.length]!,
      latencyUs: latencies[(i * 5 + k) % latencies.length]! + i,
      at: new Date(now - ((i * 611_000) % (3 * 3_600_000))).toISOString(),
    }));
    await insertLog(app, key, rows, new Date(now).toISOString());
  }
}

test("the flush keeps the summaries equal to request_log's raw rows: per key, for every key, per hour and route", async () => {
  h = await openTestApp();
  await traffic(h);
  const expected = await fromRawRows(h.ctx.store);
  expect(expected.filter((s) => s.key_ref === ALL_KEYS).reduce((n, s) => n + s.requests, 0)).toBe(900);
  expect(new Set(expected.map((s) => s.hour)).size).toBe(4); // now (00:00) and the three hours before
  expect(await stored(h.ctx.store)).toEqual(expected);
  // The three hours before midnight and the one after: two days, each the sum of its hours.
  const daily = await storedDaily(h.ctx.store);
  expect(new Set(daily.map((d) => d.hour))).toEqual(new Set(["2025-12-31", "2026-01-01"]));
  expect(daily).toEqual(await dailyFromHourly(h.ctx.store));
});

test("a window reads its whole days from the daily rows and its ends from the hourly ones: the same figures as the hours alone", async () => {
  h = await openTestApp();
  const key = await createKey(h);
  const now = h.clock.now().getTime();
  // One request every 37 minutes for 5 days, latencies spread, two routes.
  const rows = Array.from({ length: (5 * 24 * 60) / 37 }, (_, i) => ({
    route: i % 2 ? "/a" : "/b",
    status: i % 11 ? 200 : 500,
    latencyUs: 50 + ((i * 7_919) % 900_000),
    at: new Date(now - i * 37 * 60_000 - 1).toISOString(),
  }));
  await insertLog(h, key.keyId, rows, new Date(now).toISOString());
  const hoursOnly = async (fromHour: string, toHour: string) =>
    (
      await h!.ctx.store.all<Record<string, number | string>>(
        `SELECT route, sum(requests) AS requests, ${BUCKET_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(", ")} FROM request_summary_hourly WHERE key_ref = ? AND hour >= ? AND hour <= ? GROUP BY route ORDER BY route`,
        [ALL_KEYS, fromHour, toHour],
      )
    ).map((r) => ({ route: String(r.route), requests: Number(r.requests), buckets: BUCKET_COLUMNS.map((c) => Number(r[c])) }));
  for (const [fromHour, toHour] of [
    ["2025-12-27T05", "2025-12-31T23"], // 4 whole days and 19 hours before them
    ["2025-12-27T00", "2026-01-01T00"], // 5 whole days and an hour after them
    ["2025-12-30T07", "2025-12-31T06"], // no whole day
    ["2025-12-28T13", "2025-12-30T12"], // one whole day between two part-days
  ] as const) {
    const parts = windowParts(fromHour, toHour);
    const read = (await routeSummaries(h.ctx.store, { key: null, fromHour, toHour }))
      .map((r) => ({ route: r.route, requests: r.requests, buckets: r.buckets }))
      .sort((a, b) => a.route.localeCompare(b.route));
    expect({ fromHour, toHour, parts, read }).toEqual({ fromHour, toHour, parts, read: await hoursOnly(fromHour, toHour) });
  }
  expect(windowParts("2025-12-27T05", "2025-12-31T23")).toEqual({ days: ["2025-12-28", "2025-12-31"], hours: [["2025-12-27T05", "2025-12-27T23"]] });
  expect(windowParts("2025-12-28T13", "2025-12-30T12")).toEqual({
    days: ["2025-12-29", "2025-12-29"],
    hours: [
      ["2025-12-28T13", "2025-12-28T23"],
      ["2025-12-30T00", "2025-12-30T12"],
    ],
  });
  expect(windowParts("2025-12-30T07", "2025-12-31T06")).toEqual({ days: null, hours: [["2025-12-30T07", "2025-12-31T06"]] });
});

test("hours logged without summaries (a database from before them) are rebuilt from the raw rows by the catch-up", async () => {
  h = await openTestApp();
  await traffic(h);
  const expected = await fromRawRows(h.ctx.store);
  // One hour lost entirely, another partly: the catch-up compares each hour's total with request_log's count.
  const hours = [...new Set(expected.map((s) => s.hour))].sort();
  await h.ctx.store.run("DELETE FROM request_summary_hourly WHERE hour = ?", [hours[0]!]);
  await h.ctx.store.run("DELETE FROM request_summary_hourly WHERE hour = ? AND route = '/r1'", [hours[1]!]);
  const rollupsBefore = await h.ctx.store.all("SELECT * FROM request_log_hourly ORDER BY hour");
  const progress = await catchUpRollups(h.ctx.store);
  expect(progress.rebuiltHours).toBe(2);
  expect(await stored(h.ctx.store)).toEqual(expected);
  // The hourly rollups, level already, were left as they were.
  expect(await h.ctx.store.all("SELECT * FROM request_log_hourly ORDER BY hour")).toEqual(rollupsBefore);
  expect(await storedDaily(h.ctx.store)).toEqual(await dailyFromHourly(h.ctx.store));
  // Days without daily rows (a database from before them) are built from the hourly rows at the catch-up's end.
  await h.ctx.store.run("DELETE FROM request_summary_daily");
  expect((await catchUpRollups(h.ctx.store)).rebuiltDays).toBe(2);
  expect(await storedDaily(h.ctx.store)).toEqual(await dailyFromHourly(h.ctx.store));
  // Level now: a second catch-up rebuilds nothing.
  expect((await catchUpRollups(h.ctx.store)).rebuiltHours).toBe(0);
});

test("a usage read costs summary rows, not request_log rows: its statement names only request_summary_hourly", async () => {
  h = await openTestApp();
  const key = await createKey(h);
  await insertLog(
    h,
    key.keyId,
    Array.from({ length: 2_000 }, (_, i) => ({ route: `/r${i % 5}`, status: 200, latencyUs: 100 + i })),
    h.clock.now().toISOString(),
  );
  const routes = await h.ctx.store.apart(routeSummariesTask, { keyId: key.keyId, fromHour: "2025-12-31T23", toHour: "2026-01-01T00" });
  expect(routes).toHaveLength(5);
  expect(requestCountsOf(routes).total_requests).toBe(2_000);
  expect(latencyOf(routes).overall.samples).toBe(2_000);
  const plan = await h.ctx.store.all<Record<string, unknown>>(
    h.ctx.store.dialect === "sqlite"
      ? "EXPLAIN QUERY PLAN SELECT route, sum(requests) FROM request_summary_hourly WHERE key_ref = 1 AND hour >= '2025-12-31T23' AND hour <= '2026-01-01T00' GROUP BY route"
      : "EXPLAIN SELECT route, sum(requests) FROM request_summary_hourly WHERE key_ref = 1 AND hour >= '2025-12-31T23' AND hour <= '2026-01-01T00' GROUP BY route",
  );
  const text = JSON.stringify(plan);
  expect(text).not.toContain("request_log ");
  if (h.ctx.store.dialect === "sqlite") expect(text).toMatch(/SEARCH request_summary_hourly USING (PRIMARY KEY|INDEX sqlite_autoindex)/);
});

test("the prune job deletes summaries past their retention in batches, and keeps the 720 hours the reads offer", async () => {
  h = await openTestApp();
  const key = await createKey(h);
  const now = h.clock.now().getTime();
  const day = 86_400_000;
  // One request a day for 40 days: the oldest 9 days of summaries are past 31 days.
  await insertLog(
    h,
    key.keyId,
    Array.from({ length: 40 }, (_, d) => ({ route: "/daily", status: 200, latencyUs: 1_000, at: new Date(now - d * day - 60_000).toISOString() })),
    new Date(now).toISOString(),
  );
  expect((await h.ctx.store.get<{ n: number }>("SELECT count(DISTINCT hour) AS n FROM request_summary_hourly"))!.n).toBe(40);
  expect((await h.ctx.jobs.runNow("request-log-prune")).ok).toBe(true);
  const kept = await h.ctx.store.all<{ hour: string }>("SELECT DISTINCT hour FROM request_summary_hourly ORDER BY hour");
  const cutoff = new Date(now - SUMMARY_RETENTION_DAYS * day).toISOString().slice(0, 13);
  expect(kept.every((r) => r.hour >= cutoff)).toBe(true);
  expect(kept).toHaveLength(31);
  // A batch smaller than the rows: several statements, all of them deleted.
  await insertLog(
    h,
    key.keyId,
    Array.from({ length: 30 }, (_, d) => ({ route: "/old", status: 200, latencyUs: 1, at: new Date(now - (100 + d) * day).toISOString() })),
    new Date(now).toISOString(),
  );
  const result = await h.ctx.requestLog.pruneSummaries(cutoff, { batchRows: 20 });
  // 30 hours and 30 days, each a row for the key and one for every key.
  expect(result).toMatchObject({ deleted: 120, done: true });
  expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_summary_daily WHERE day < ?", [cutoff.slice(0, 10)]))!.n).toBe(0);
  expect(result.statements).toBeGreaterThanOrEqual(3);
});
