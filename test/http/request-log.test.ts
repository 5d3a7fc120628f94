import { afterEach, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

const count = (h: TestApp) => (h.ctx.db.sqlite.query("SELECT count(*) AS n FROM request_log").get() as { n: number }).n;

test("requests are buffered, then written in one batch, with route templates and error codes", async () => {
  h = createTestApp();
  for (let i = 0; i < 5; i++) await h.request("/api/partner/errors.json", { headers: { "x-request-id": `batch-test-${i}-id` } });
  await h.request("/does/not/exist");
  await Bun.sleep(0); // let after-response hooks run
  expect(count(h)).toBe(0); // nothing written on the request path
  expect(h.ctx.requestLog.pending).toBe(6);

  const batchesBefore = h.ctx.requestLog.flushedBatches;
  expect(h.ctx.requestLog.flush()).toBe(6);
  expect(h.ctx.requestLog.flushedBatches).toBe(batchesBefore + 1);
  expect(count(h)).toBe(6);

  const rows = h.ctx.db.sqlite.query("SELECT method, route, status, latency_us, request_id, error_code, client_ip FROM request_log ORDER BY id").all() as any[];
  expect(rows[0]).toMatchObject({ method: "GET", route: "/api/partner/errors.json", status: 200, request_id: "batch-test-0-id", error_code: null });
  expect(rows[0].latency_us).toBeGreaterThanOrEqual(0);
  expect(rows[5]).toMatchObject({ route: "(unmatched)", status: 404, error_code: "not_found" });
});

test("a size trigger flushes large bursts without waiting for the timer", async () => {
  h = createTestApp();
  await Promise.all(Array.from({ length: 1000 }, () => h.request("/api/partner/errors.json")));
  await Bun.sleep(0);
  await Bun.sleep(0);
  expect(count(h)).toBe(1000);
  expect(h.ctx.requestLog.pending).toBe(0);
});

test("health probes are counted in metrics but not written to the request log", async () => {
  h = createTestApp({ env: { METRICS_PUBLIC: "1" } });
  await h.request("/healthz");
  await h.request("/readyz");
  await Bun.sleep(0);
  expect(h.ctx.requestLog.pending).toBe(0);
  expect(await (await h.request("/metrics")).text()).toContain('route="/healthz",status="200"} 1');
});

test("stop() flushes what is buffered (graceful shutdown loses nothing)", async () => {
  h = createTestApp();
  await h.request("/api/partner/errors.json");
  await Bun.sleep(0);
  h.ctx.requestLog.stop();
  expect(count(h)).toBe(1);
});
