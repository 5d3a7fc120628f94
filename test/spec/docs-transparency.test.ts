// Docs audit: the parameters, defaults and operator routes of docs/transparency.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const T = "/transparency/audit-anomalies";

describe("docs/transparency.md", () => {
  // docs/transparency.md:153-156 — summary: include_top_anomalies default 1 (true), top_limit 1–100 default 10
  test("summary defaults and bounds", async () => {
    h = await openTestApp();
    const s = await h.json(`${T}/summary.json`);
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ include_top_anomalies: true, top_limit: 10, summary_available: false, selected_run: null });
    expect((await h.json(`${T}/summary.json?top_limit=100`)).status).toBe(200);
    expect((await h.json(`${T}/summary.json?top_limit=101`)).status).toBe(400);
    expect((await h.json(`${T}/summary.json?top_limit=0`)).status).toBe(400);
  });

  // docs/transparency.md:122-126 — a selector that names no run is 404 run_not_found; a malformed one is 400 invalid_query
  test("run selectors", async () => {
    h = await openTestApp();
    const nf = await h.json(`${T}/summary.json?run=12`);
    expect([nf.status, nf.body.error]).toEqual([404, "run_not_found"]);
    const bad = await h.json(`${T}/summary.json?run=yesterday`);
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_query"]);
    expect((await h.json(`${T}/summary.json`)).status).toBe(200);
    const day = await h.json(`${T}/summary.json?run=2026-01-01`);
    expect([day.status, day.body.error]).toEqual([404, "run_not_found"]);
  });

  // docs/transparency.md:170-173 — runs: limit 1–200 default 50; shape
  test("runs.json defaults", async () => {
    h = await openTestApp();
    const r = await h.json(`${T}/runs.json`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(expect.arrayContaining(["selected_run", "selected_label", "total_runs", "count", "runs", "query", "pagination"]));
    expect(r.body.query.limit).toBe(50);
    expect((await h.json(`${T}/runs.json?limit=201`)).status).toBe(400);
  });

  // docs/transparency.md:175-188 — trend: metric default sigs, include_status_counts default 1, limit 1–1000 default 30; query echo
  test("trend.json defaults, bounds and query echo", async () => {
    h = await openTestApp();
    const r = await h.json(`${T}/trend.json`);
    expect(r.status).toBe(200);
    expect(r.body.selected_metric).toBe("sigs");
    expect(r.body.query).toMatchObject({ limit: 30, offset: 0, cursor: null, metric: "sigs", include_status_counts: true });
    expect(r.body.status_counts).toEqual({ ok: 0, warn: 0, bad: 0, other: 0 });
    const off = await h.json(`${T}/trend.json?include_status_counts=0`);
    expect(off.body.status_counts).toBeNull();
    expect((await h.json(`${T}/trend.json?limit=1000`)).status).toBe(200);
    expect((await h.json(`${T}/trend.json?limit=1001`)).status).toBe(400);
    expect((await h.json(`${T}/trend.json?metric=rows`)).body.selected_metric).toBe("rows");
    expect((await h.json(`${T}/trend.json?metric=bytes`)).status).toBe(400);
    expect((await h.json(`${T}/trend.json?types=untracked_outflow&types=large_transfer`)).status).toBe(200);
    expect((await h.json(`${T}/trend.json?metric=sigs&types=untracked_outflow&min_abs_delta=10000&limit=10`)).status).toBe(200);
    expect((await h.json(`${T}/trend.json?min_abs_delta=0.5`)).status).toBe(200);
    expect((await h.json(`${T}/trend.json?min_abs_delta=-1`)).status).toBe(400);
  });

  // docs/transparency.md:193-200 — alerts thresholds: numbers 0–10000 with at most two decimals; CSV accepts include_meta
  test("alerts thresholds bounds", async () => {
    h = await openTestApp();
    expect((await h.json(`${T}/alerts.json?sigs_increase_threshold_pct=49.99`)).status).toBe(200);
    expect((await h.json(`${T}/alerts.json?sigs_increase_threshold_pct=10000`)).status).toBe(200);
    expect((await h.json(`${T}/alerts.json?sigs_increase_threshold_pct=10000.01`)).status).toBe(400);
    expect((await h.json(`${T}/alerts.json?rows_increase_threshold_pct=1.234`)).status).toBe(400);
    expect((await h.json(`${T}/alerts.json?rows_increase_threshold_pct=-1`)).status).toBe(400);
    const a = await h.json(`${T}/alerts.json?sigs_increase_threshold_pct=12.5`);
    expect(a.body.snapshot.thresholds.sigs_increase_threshold_pct).toBe(12.5);
    const csv = await h.request(`${T}/alerts.csv?include_meta=1`);
    expect(csv.status).toBe(200);
  });

  // docs/transparency.md:215-227 — compare: include_rows default 1, row_limit 1–200 default 50; CSV columns
  test("compare and diff export parameters", async () => {
    h = await openTestApp();
    const c = await h.json(`${T}/diff/compare.json`);
    expect(c.status).toBe(200);
    expect(c.body.include_rows).toBe(true);
    expect((await h.json(`${T}/diff/compare.json?row_limit=200`)).status).toBe(200);
    expect((await h.json(`${T}/diff/compare.json?row_limit=201`)).status).toBe(400);
    const csv = await (await h.request(`${T}/diff/compare.csv`)).text();
    expect(csv.split("\r\n")[0]).toBe("run_a,run_b,type,selected,latest,delta");
    const ex = await (await h.request(`${T}/diff/export`)).text();
    expect(ex.split("\r\n")[0]).toBe("run,baseline_run,type,selected,latest,delta,pct_delta");
    expect((await h.json(`${T}/diff/export.json`)).status).toBe(200);
  });

  // docs/transparency.md:229-243 — export: run or from/to (both with run is 400); query echo; CSV columns
  test("export filters and CSV columns", async () => {
    h = await openTestApp();
    const e = await h.json(`${T}/export.json`);
    expect(e.status).toBe(200);
    expect(e.body.query).toEqual({ run: "latest", from: null, to: null, severity: null, types: null, signature: null, min_abs_delta: null });
    expect(e.body).toMatchObject({ count: 0, rows: [] });
    const both = await h.json(`${T}/export.json?run=latest&from=2026-01-01&to=2026-01-02`);
    expect([both.status, both.body.error]).toEqual([400, "invalid_query"]);
    expect((await h.json(`${T}/export.json?from=2026-01-01&to=2026-01-02`)).status).toBe(200);
    const csv = await (await h.request(`${T}/export`)).text();
    expect(csv.split("\r\n")[0]).toBe("run_id,signature,kind,slot,block_time,delta,max_abs_delta,anomaly_types,severity,declaration_id,triage_status,detail");
  });

  // docs/transparency.md:245-260 — glossary shape; threshold-history limit 1–500 default 100; triage cursor refused
  test("glossary, threshold-history and triage", async () => {
    h = await openTestApp();
    const g = (await h.json(`${T}/glossary.json`)).body;
    expect(Object.keys(g)).toEqual(
      expect.arrayContaining(["count", "glossary", "transaction_delta_rule", "severities", "severity_rule", "overall_rule", "tracked_wallets"]),
    );
    expect(Object.keys(g.glossary[0])).toEqual(expect.arrayContaining(["type", "description", "rule", "base_severity", "delta", "applies_to"]));
    expect(g.count).toBe(8);
    const th = await h.json(`${T}/threshold-history.json`);
    expect(th.body.query).toEqual({ limit: 100, offset: 0, cursor: null });
    expect(Object.keys(th.body)).toEqual(expect.arrayContaining(["current", "total", "count", "rows", "pagination"]));
    expect((await h.json(`${T}/threshold-history.json?limit=501`)).status).toBe(400);
    const tr = await h.json(`${T}/triage.json?status=open`);
    expect(tr.status).toBe(200);
    expect(tr.body.query).toMatchObject({ cursor: null, status: "open" });
    expect((await h.json(`${T}/triage.json?cursor=abc`)).status).toBe(400);
    expect((await h.json(`${T}/triage.json?status=closed`)).status).toBe(400);
    const sr = (await h.json(`${T}/schema-registry.json`)).body;
    expect(sr.dialect).toBe("https://json-schema.org/draft/2020-12/schema");
    expect((await h.json(`${T}/declared-movements.json`)).status).toBe(200);
  });

  // docs/transparency.md:128-131 — every GET: Cache-Control public, max-age=60, strong ETag, Last-Modified, 304 on If-None-Match
  test("caching headers on transparency routes", async () => {
    h = await openTestApp();
    for (const p of [
      `${T}/summary.json`,
      `${T}/runs.json`,
      `${T}/trend.json`,
      `${T}/glossary.json`,
      `${T}/export.json`,
      "/transparency/wallet-concentration.json",
    ]) {
      const r = await h.request(p);
      expect([p, r.headers.get("cache-control")]).toEqual([p, "public, max-age=60"]);
      const etag = r.headers.get("etag");
      expect(etag?.startsWith('"')).toBe(true);
      expect(r.headers.get("last-modified")).toBeTruthy();
      expect((await h.request(p, { headers: { "if-none-match": etag! } })).status).toBe(304);
    }
  });

  // docs/transparency.md:274-290 — operator routes: declare 201, retract twice 409, thresholds PATCH, triage unknown 404
  test("operator routes", async () => {
    h = await openTestApp();
    const admin = await createAdminToken(h);
    const auth = { authorization: `Bearer ${admin}` };
    const d = await h.json(
      "/admin/transparency/declared-movements",
      jsonInit(
        "POST",
        { direction: "outflow", amount: "25000", window_start_utc: "2026-01-01T00:00:00Z", window_end_utc: "2026-01-02T00:00:00Z", reason: "payroll" },
        auth,
      ),
    );
    expect(d.status).toBe(201);
    const id = (d.body.movement ?? d.body.declaration).id;
    const r1 = await h.json(`/admin/transparency/declared-movements/${id}/retract`, jsonInit("POST", { reason: "mistake" }, auth));
    expect(r1.status).toBe(200);
    const r2 = await h.json(`/admin/transparency/declared-movements/${id}/retract`, jsonInit("POST", { reason: "mistake" }, auth));
    expect(r2.status).toBe(409);
    const l = await h.json("/admin/transparency/declared-movements", { headers: auth });
    expect(l.body).toMatchObject({ count: 1, query: { limit: 50 } });
    const th = await h.json(
      "/admin/transparency/thresholds",
      jsonInit("PATCH", { large_transfer_amount: "500000", reason: "Q1 review", owner: "treasury committee" }, auth),
    );
    expect(th.status).toBe(200);
    const hist = (await h.json(`${T}/threshold-history.json`)).body;
    expect(hist.rows[0]).toMatchObject({ parameter: "large_transfer_amount", new_value: "500000", owner: "treasury committee", reason: "Q1 review" });
    const badPct = await h.json("/admin/transparency/thresholds", jsonInit("PATCH", { sigs_increase_threshold_pct: "12.345", reason: "x" }, auth));
    expect(badPct.status).toBe(400);
    const tri = await h.json("/admin/transparency/triage/5bCwNope", jsonInit("PUT", { status: "investigating", owner: "ops" }, auth));
    expect(tri.status).toBe(404);
  });
});
