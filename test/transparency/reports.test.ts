import { afterEach, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { P } from "./support";
import { countsWorld, type CountsWorld } from "./world";

// Selectors, trend, alerts at and around their thresholds, compare/diff maths, and every CSV read back with
// csv-parse equal to its JSON twin.

let w: CountsWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const csv = async (path: string) => {
  const r = await w!.h.request(path);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toStartWith("text/csv");
  return parse(await r.text(), { columns: true }) as Array<Record<string, string>>;
};
const cell = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "boolean" ? String(v) : String(v));

describe("run selectors", () => {
  test("an id, latest, previous, a UTC date; unknown → 404 run_not_found, malformed → 400 invalid_query naming the parameter", async () => {
    w = await countsWorld();
    const r1 = await w.round(1);
    w.h.clock.advanceSeconds(86_400);
    const r2 = await w.round(2);
    const sel = async (q: string) => (await w!.h.json(`${P}/summary.json?run=${q}`)).body.selected_run;
    expect([await sel(String(r1)), await sel("latest"), await sel("previous"), await sel("2026-01-01"), await sel("2026-01-02")]).toEqual([r1, r2, r1, r1, r2]);
    expect((await w.h.json(`${P}/runs.json?run=previous`)).body.runs.map((r: any) => [r.run, r.is_selected])).toEqual([
      [r2, false],
      [r1, true],
    ]);
    for (const [q, field] of [
      ["run=77", "query.run"],
      ["run=2025-12-31", "query.run"],
    ] as const) {
      const r = await w.h.json(`${P}/summary.json?${q}`);
      expect([r.status, r.body.error, r.body.details[0].field]).toEqual([404, "run_not_found", field]);
    }
    for (const [path, field] of [
      ["summary.json?run=last", "query.run"],
      ["summary.json?run=0", "query.run"],
      ["summary.json?run=2026-13-01", "query.run"],
      ["diff/compare.json?run_a=yesterday", "query.run_a"],
      ["diff/compare.json?run_b=-1", "query.run_b"],
      ["alerts.json?run=1.5", "query.run"],
    ] as const) {
      const r = await w.h.json(`${P}/${path}`);
      expect([path, r.status, r.body.error, r.body.details[0].field]).toEqual([path, 400, "invalid_query", field]);
      expect(r.body.message).toContain(field);
    }
    expect((await w.h.json(`${P}/diff/compare.json?run_a=99`)).body.error).toBe("run_not_found");
    // An empty selector: the problem reads as a person would say it.
    const empty = await w.h.json(`${P}/summary.json?run=`);
    expect([empty.status, empty.body.details[0]]).toEqual([400, { field: "query.run", problem: "must not be empty" }]);
  });
});

describe("trend.json", () => {
  test("points, deltas and pct, filters, status counts", async () => {
    w = await countsWorld();
    await w.round(2, 1);
    await w.round(0, 0);
    await w.round(3, 2, 20_000_000_000n); // 20,000 tokens each: medium by amount, still warn
    const t = (await w.h.json(`${P}/trend.json?metric=rows&include_status_counts=true`)).body;
    expect(t.points.map((p: any) => [p.run_id, p.metric_value, p.metric_delta, p.metric_delta_pct])).toEqual([
      [1, 3, null, null],
      [2, 0, -3, -100],
      [3, 5, 5, null],
    ]);
    expect(t.status_counts).toEqual({ ok: 1, warn: 2, bad: 0, other: 0 });
    expect(t.query).toEqual({ limit: 30, offset: 0, cursor: null, metric: "rows", include_status_counts: true });
    expect(t.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
    const sigs = (await w.h.json(`${P}/trend.json?limit=2`)).body;
    expect(sigs.points.map((p: any) => [p.run_id, p.metric, p.metric_value, p.metric_delta])).toEqual([
      [2, "sigs", 0, -2],
      [3, "sigs", 3, 3],
    ]);
    // status_counts by default (the spec names it as part of the trend), over the two points' runs; a third,
    // older complete run exists beyond the limit.
    expect(sigs.status_counts).toEqual({ ok: 1, warn: 1, bad: 0, other: 0 });
    expect(sigs.pagination).toEqual({ has_more: true, next_offset: null, next_cursor: null });
    const without = (await w.h.json(`${P}/trend.json?limit=2&include_status_counts=0`)).body;
    expect([without.status_counts, without.include_status_counts, without.query.include_status_counts]).toEqual([null, false, false]);
    const filtered = (await w.h.json(`${P}/trend.json?metric=rows&min_abs_delta=10000&types=untracked_outflow`)).body;
    expect(filtered.points.map((p: any) => p.metric_value)).toEqual([0, 0, 3]);
    expect(filtered.filters).toEqual({ severity: null, types: ["untracked_outflow"], signature: null, min_abs_delta: "10000" });
    // A list parameter may repeat or take a comma list: the same filter either way.
    const commas = (await w.h.json(`${P}/trend.json?metric=rows&types=untracked_outflow,large_transfer&severity=low,medium`)).body;
    const repeated = (await w.h.json(`${P}/trend.json?metric=rows&types=untracked_outflow&types=large_transfer&severity=low&severity=medium`)).body;
    expect(repeated.filters).toEqual({ severity: ["low", "medium"], types: ["untracked_outflow", "large_transfer"], signature: null, min_abs_delta: null });
    expect(repeated.points).toEqual(commas.points);
    const exported = (await w.h.json(`${P}/export.json?types=untracked_outflow&types=large_transfer`)).body;
    expect(exported.query.types).toEqual(["untracked_outflow", "large_transfer"]);
    for (const [q, field] of [
      ["metric=both", "query.metric"],
      ["severity=low,severe", "query.severity"],
      ["types=theft", "query.types"],
      ["types=untracked_outflow&types=theft", "query.types"],
      ["limit=2&limit=3", "query.limit"],
      ["min_abs_delta=-5", "query.min_abs_delta"],
      ["min_abs_delta=1.1234567", "query.min_abs_delta"],
      ["limit=0", "query.limit"],
      ["limit=1001", "query.limit"],
      ["include_status_counts=yes", "query.include_status_counts"],
    ]) {
      const r = await w.h.json(`${P}/trend.json?${q}`);
      expect([q, r.status, r.body.details?.[0]?.field]).toEqual([q, 400, field]);
    }
  });
});

describe("alerts at and around the thresholds", () => {
  test("signatures 4 → 6 is +50 %: 50 and 49.99 alert, 50.01 does not; rows by their own threshold", async () => {
    w = await countsWorld();
    await w.round(4);
    await w.round(6);
    const level = async (q: string) => (await w!.h.json(`${P}/alerts.json?${q}`)).body.snapshot;
    const at = await level("sigs_increase_threshold_pct=50&rows_increase_threshold_pct=10000");
    expect(at).toMatchObject({
      alert_level: "warn",
      should_alert: true,
      points_available: 2,
      current: { run_id: 2, signatures_with_anomalies: 6, sig_delta: 2, sig_delta_pct: 50, rows_delta: 2, rows_delta_pct: 50 },
      baseline: { run_id: 1, signatures_with_anomalies: 4 },
    });
    expect(at.thresholds).toEqual({ sigs_increase_threshold_pct: 50, rows_increase_threshold_pct: 10000 });
    expect((await level("sigs_increase_threshold_pct=49.99&rows_increase_threshold_pct=10000")).alert_level).toBe("warn");
    const above = await level("sigs_increase_threshold_pct=50.01&rows_increase_threshold_pct=10000");
    expect([above.alert_level, above.should_alert, above.reasons]).toEqual(["ok", false, []]);
    expect((await level("sigs_increase_threshold_pct=10000&rows_increase_threshold_pct=50")).reasons).toEqual([
      "rows examined rose from 4 to 6 (threshold 50 %)",
    ]);
    // Stored defaults (50 %, 100 %): the sigs threshold trips.
    expect(await level("")).toMatchObject({ alert_level: "warn", thresholds_source: { sigs_increase_threshold_pct: "stored" } });
    for (const q of [
      "sigs_increase_threshold_pct=10000.01",
      "sigs_increase_threshold_pct=-1",
      "rows_increase_threshold_pct=abc",
      "rows_increase_threshold_pct=1.001",
    ]) {
      const r = await w.h.json(`${P}/alerts.json?${q}`);
      expect([q, r.status, r.body.error]).toEqual([q, 400, "invalid_query"]);
      expect(r.body.message).toContain(q.split("=")[0]);
    }
  });

  test("from zero any rise trips (pct null); a bad run that rose is bad; a bad run that did not is warn; no baseline: only the overall", async () => {
    w = await countsWorld();
    await w.round(0, 2);
    const first = (await w.h.json(`${P}/alerts.json`)).body.snapshot;
    expect(first).toMatchObject({ alert_level: "ok", baseline: null, current: { sig_delta: null, sig_delta_pct: null } });
    await w.round(1, 2);
    const fromZero = (await w.h.json(`${P}/alerts.json?sigs_increase_threshold_pct=10000`)).body.snapshot;
    expect(fromZero).toMatchObject({ alert_level: "warn", current: { sig_delta: 1, sig_delta_pct: null } });
    // The baseline has current's shape; the first run has no run before it, so its deltas are null.
    expect(fromZero.baseline).toEqual({ ...first.current, sig_delta: null, sig_delta_pct: null, rows_delta: null, rows_delta_pct: null });
    await w.round(2, 2, 2_000_000_000_000n); // 2,000,000 tokens: large_transfer, critical → overall bad
    const bad = (await w.h.json(`${P}/alerts.json?include_recommendations=1`)).body;
    expect(bad.snapshot).toMatchObject({ alert_level: "bad", current: { overall: "bad", sig_delta_pct: 100 } });
    // Run 3's baseline is run 2, against run 1: 0 → 1 signatures (pct null from zero), rows 2 → 3.
    expect(bad.snapshot.baseline).toMatchObject({ run_id: 2, sig_delta: 1, sig_delta_pct: null, rows_delta: 1, rows_delta_pct: 50 });
    expect(bad.recommendations.length).toBeGreaterThan(2);
    await w.round(2, 2, 2_000_000_000_000n);
    expect((await w.h.json(`${P}/alerts.json`)).body.snapshot).toMatchObject({
      alert_level: "warn",
      reasons: ["the run's overall is bad (a high or critical anomaly)"],
    });
  });

  test("alerts.csv is alerts.json as one record", async () => {
    w = await countsWorld();
    await w.round(4);
    await w.round(6);
    const json = (await w.h.json(`${P}/alerts.json?sigs_increase_threshold_pct=12.5`)).body;
    const [record, ...more] = await csv(`${P}/alerts.csv?sigs_increase_threshold_pct=12.5`);
    expect(more).toEqual([]);
    // include_meta is accepted on every route; a CSV has nowhere to put meta, so the same record comes back.
    expect(await csv(`${P}/alerts.csv?sigs_increase_threshold_pct=12.5&include_meta=1`)).toEqual([record!]);
    const s = json.snapshot;
    expect(record).toEqual({
      selected_run: cell(json.selected_run),
      evaluated_at: cell(json.evaluated_at),
      alert_level: s.alert_level,
      should_alert: cell(s.should_alert),
      reasons: s.reasons.join("; "),
      "thresholds.sigs_increase_threshold_pct": "12.5",
      "thresholds.rows_increase_threshold_pct": "100",
      points_available: "2",
      ...Object.fromEntries(Object.entries(s.current).map(([k, v]) => [`current.${k}`, cell(v)])),
      ...Object.fromEntries(Object.entries(s.baseline).map(([k, v]) => [`baseline.${k}`, cell(v)])),
    });
  });
});

describe("compare and diff", () => {
  test("per type and severity, delta = latest − selected, pct_delta with a zero base; CSVs equal their JSON", async () => {
    w = await countsWorld();
    await w.round(4, 1);
    await w.round(6, 3, 20_000_000_000n);
    const c = (await w.h.json(`${P}/diff/compare.json?run_a=1&run_b=2`)).body;
    expect(c.run_a).toMatchObject({ selector: "1", resolved_run: 1 });
    expect(c.total_delta).toBe(2);
    const row = (type: string) => c.rows.find((r: any) => r.type === type);
    expect(row("untracked_outflow")).toEqual({ type: "untracked_outflow", selected: 4, latest: 6, delta: 2 });
    expect(row("severity:medium")).toEqual({ type: "severity:medium", selected: 4, latest: 6, delta: 2 });
    expect(row("rows_total")).toEqual({ type: "rows_total", selected: 5, latest: 9, delta: 4 });
    expect(c.rows).toHaveLength(14); // 8 anomaly types, 4 severities, rows_total, signatures_with_anomalies
    expect((await w.h.json(`${P}/diff/compare.json?row_limit=3`)).body.rows).toHaveLength(3);
    expect((await w.h.json(`${P}/diff/compare.json?include_rows=0`)).body).toMatchObject({ rows: [], rows_available: 14, total_delta: 2 });
    const reversed = (await w.h.json(`${P}/diff/compare.json?run_a=latest&run_b=previous`)).body;
    expect(reversed.total_delta).toBe(-2);

    const d = (await w.h.json(`${P}/diff/export.json`)).body;
    expect(d).toMatchObject({ run: { resolved_run: 2 }, baseline_run: { resolved_run: 1 }, total_delta: 2, total_pct_delta: 50 });
    // The same two runs under compare.json's names (the export is compare.json of baseline and run, plus pct_delta).
    expect([d.run_a, d.run_b]).toEqual([d.baseline_run, d.run]);
    const drow = (type: string) => d.rows.find((r: any) => r.type === type);
    expect(drow("untracked_outflow").pct_delta).toBe(50);
    expect(drow("rows_total").pct_delta).toBe(80);
    expect(drow("large_transfer")).toEqual({ type: "large_transfer", selected: 0, latest: 0, delta: 0, pct_delta: 0 });
    const first = (await w.h.json(`${P}/diff/export.json?run=1`)).body;
    expect(first.baseline_run.resolved_run).toBeNull();
    expect(first.rows.find((r: any) => r.type === "untracked_outflow")).toEqual({
      type: "untracked_outflow",
      selected: 0,
      latest: 4,
      delta: 4,
      pct_delta: null,
    });
    expect(first.total_pct_delta).toBeNull();

    expect(await csv(`${P}/diff/compare.csv?run_a=1&run_b=2`)).toEqual(
      c.rows.map((r: any) => ({ run_a: "1", run_b: "2", type: r.type, selected: cell(r.selected), latest: cell(r.latest), delta: cell(r.delta) })),
    );
    expect(await csv(`${P}/diff/export?run=1`)).toEqual(
      first.rows.map((r: any) => ({
        run: "1",
        baseline_run: "",
        type: r.type,
        selected: cell(r.selected),
        latest: cell(r.latest),
        delta: cell(r.delta),
        pct_delta: cell(r.pct_delta),
      })),
    );
  });
});
