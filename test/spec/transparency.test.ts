// Spec conformance: the transparency endpoints, over the planted dev-rpc world, against the spec's field lists.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { job, P, plantedRun, plantedWorld, type AuditWorld } from "../transparency/support";

let w: AuditWorld;
beforeAll(async () => {
  w = await plantedWorld();
  await plantedRun(w);
  await job(w.h, "holders-snapshot");
  await plantedRun(w);
});
afterAll(async () => {
  await w?.close();
});
const get = async (p: string) => {
  const r = await w.h.json(p);
  expect(r.status).toBe(200);
  return r;
};

test("runs, summary and trend", async () => {
  const runs = (await get(`${P}/runs.json`)).body;
  expect(runs.count).toBe(2);
  expect(runs.selected_run).toBe(2);
  for (const r of runs.runs) expect(Object.keys(r)).toEqual(expect.arrayContaining(["run", "label", "is_complete", "is_selected"]));
  const s = (await get(`${P}/summary.json?run=1&top_limit=3`)).body;
  expect(s).toMatchObject({ selected_run: 1, summary_available: true, include_top_anomalies: true, top_limit: 3 });
  expect(s.top_anomalies.length).toBeGreaterThan(0);
  for (const a of s.top_anomalies) expect(Object.keys(a)).toEqual(expect.arrayContaining(["severity", "signature", "anomaly_types", "max_abs_delta"]));
  const t = (await get(`${P}/trend.json?metric=rows`)).body;
  expect(t.selected_metric).toBe("rows");
  expect(Object.keys(t.status_counts).sort()).toEqual(["bad", "ok", "other", "warn"]);
  for (const p of t.points) {
    expect(Object.keys(p)).toEqual(expect.arrayContaining(["run_id", "label", "rows_total", "metric", "metric_value", "metric_delta", "metric_delta_pct"]));
  }
});

test("alerts, compare, diff export (pct_delta), glossary, wallet concentration", async () => {
  const a = (await get(`${P}/alerts.json`)).body;
  expect(Object.keys(a)).toEqual(expect.arrayContaining(["selected_run", "evaluated_at", "snapshot"]));
  expect(Object.keys(a.snapshot)).toEqual(expect.arrayContaining(["alert_level", "should_alert", "thresholds", "points_available", "current", "baseline"]));
  expect(Object.keys(a.snapshot.thresholds).sort()).toEqual(["rows_increase_threshold_pct", "sigs_increase_threshold_pct"]);
  expect(Object.keys(a.snapshot.current)).toEqual(
    expect.arrayContaining(["run_id", "overall", "signatures_with_anomalies", "rows_total", "sig_delta", "sig_delta_pct", "rows_delta", "rows_delta_pct"]),
  );
  expect((await w.h.request(`${P}/alerts.csv`)).status).toBe(200);
  const c = (await get(`${P}/diff/compare.json?run_a=1&run_b=2`)).body;
  expect(c.run_a).toMatchObject({ selector: "1", resolved_run: 1 });
  expect(c.run_b).toMatchObject({ selector: "2", resolved_run: 2 });
  expect(Object.keys(c)).toEqual(expect.arrayContaining(["total_delta", "include_rows", "rows"]));
  expect(Object.keys(c.rows[0]).sort()).toEqual(["delta", "latest", "selected", "type"]);
  const d = (await get(`${P}/diff/export.json`)).body;
  expect("pct_delta" in d.rows[0]).toBe(true);
  const g = (await get(`${P}/glossary.json`)).body;
  expect(g.count).toBe(g.glossary.length);
  for (const e of g.glossary) expect(typeof e.type === "string" && typeof e.description === "string").toBe(true);
  const wc = (await get("/transparency/wallet-concentration.json")).body;
  expect(Object.keys(wc.latest)).toEqual(expect.arrayContaining(["top1_pct", "top5_pct", "top10_pct"]));
  expect(Array.isArray(wc.trend_points)).toBe(true);
  expect((await w.h.request("/transparency/wallet-concentration.csv")).status).toBe(200);
});

test("snapshots are cacheable for at least 60 s and revalidate to 304", async () => {
  for (const p of [`${P}/runs.json`, `${P}/summary.json`, `${P}/glossary.json`, "/transparency/trust-dashboard.json"]) {
    const r = await w.h.request(p);
    const maxAge = Number(/max-age=(\d+)/.exec(r.headers.get("cache-control") ?? "")?.[1]);
    expect(maxAge).toBeGreaterThanOrEqual(60);
    const etag = r.headers.get("etag");
    if (etag) expect((await w.h.request(p, { headers: { "if-none-match": etag } })).status).toBe(304);
  }
});
