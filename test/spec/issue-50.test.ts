// Issue 50 (ended blocked; its note says the batched request log was done): "on PostgreSQL the request log must not
// add a database round trip per request". 200 answers of the request-logged public route, then the log's flush: the
// round trips PostgreSQL saw for all of it stay far below one a request.
import { afterAll, beforeAll, expect } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { testOn } from "../support/skipped";

let h: TestApp;
beforeAll(async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
});
afterAll(() => h?.close());

testOn("postgres", "test/spec/issue-50.test.ts")("200 logged requests on PostgreSQL: a handful of round trips, not one a request", async () => {
  await h.request("/api/public/system-status/policy");
  await h.ctx.requestLog.flush();
  const before = h.ctx.store.health.counts.roundTrips;
  for (let i = 0; i < 200; i++) expect((await h.request("/api/public/system-status/policy")).status).toBe(200);
  await h.ctx.requestLog.flush();
  const rows = await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log WHERE route = ?", ["/api/public/system-status/policy"]);
  expect(Number(rows!.n)).toBe(201);
  const trips = h.ctx.store.health.counts.roundTrips - before;
  expect(trips).toBeGreaterThan(0);
  expect(trips).toBeLessThan(20);
});
