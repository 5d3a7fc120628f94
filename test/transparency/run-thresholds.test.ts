import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { jsonInit } from "../support/app";
import { createAdminToken } from "../support/partner";
import { P } from "./support";
import { countsWorld, type CountsWorld } from "./world";

// Each audit run is judged under the thresholds it ran with. runs.json shows a run's stored thresholds and
// alerts.json evaluates the run under those same ones (not under today's), and both show the percentages as
// numbers; amounts stay decimal strings (docs/design.md §2).

let w: CountsWorld;
const runs: number[] = [];

beforeAll(async () => {
  w = await countsWorld();
  runs.push(await w.round(4)); // under the defaults: sigs 50 %, rows 100 %
  runs.push(await w.round(6)); // 4 → 6 signatures: +50 %, trips 50 %
  const auth = { authorization: `Bearer ${await createAdminToken(w.h)}` };
  const patched = await w.h.json("/admin/transparency/thresholds", jsonInit("PATCH", { sigs_increase_threshold_pct: "60.5", reason: "fewer pages" }, auth));
  expect(patched.status).toBe(200);
  runs.push(await w.round(9)); // 6 → 9: +50 %, under 60.5 % it does not trip
});
afterAll(async () => {
  await w.close();
});

describe("a run's own thresholds", () => {
  test("runs.json: each run's stored thresholds, percentages as numbers, amounts as decimal strings", async () => {
    const r = await w.h.json(`${P}/runs.json`);
    expect(r.status).toBe(200);
    const byRun = new Map(r.body.runs.map((x: any) => [x.run, x.thresholds]));
    expect(byRun.get(runs[1])).toMatchObject({ sigs_increase_threshold_pct: 50, rows_increase_threshold_pct: 100, large_transfer_amount: "1000000" });
    expect(byRun.get(runs[2])).toMatchObject({ sigs_increase_threshold_pct: 60.5, rows_increase_threshold_pct: 100, large_transfer_amount: "1000000" });
  });

  test("alerts.json of a past run uses that run's thresholds after they changed; the latest uses its own", async () => {
    const past = (await w.h.json(`${P}/alerts.json?run=${runs[1]}`)).body;
    expect(past.selected_run).toBe(runs[1]);
    expect(past.snapshot).toMatchObject({
      alert_level: "warn",
      thresholds: { sigs_increase_threshold_pct: 50, rows_increase_threshold_pct: 100 },
      thresholds_source: { sigs_increase_threshold_pct: "stored", rows_increase_threshold_pct: "stored" },
    });
    expect(past.snapshot.reasons).toEqual(["signatures with anomalies rose from 4 to 6 (threshold 50 %)"]);

    const latest = (await w.h.json(`${P}/alerts.json`)).body;
    expect(latest.selected_run).toBe(runs[2]);
    expect(latest.snapshot).toMatchObject({ alert_level: "ok", thresholds: { sigs_increase_threshold_pct: 60.5, rows_increase_threshold_pct: 100 } });

    // alerts.json and runs.json agree on every run.
    const listed = (await w.h.json(`${P}/runs.json`)).body.runs;
    for (const run of runs.slice(1)) {
      const a = (await w.h.json(`${P}/alerts.json?run=${run}`)).body.snapshot.thresholds;
      const t = listed.find((x: any) => x.run === run).thresholds;
      expect(a).toEqual({ sigs_increase_threshold_pct: t.sigs_increase_threshold_pct, rows_increase_threshold_pct: t.rows_increase_threshold_pct });
    }

    // A query value still overrides, and alerts.csv says the same as the JSON.
    const overridden = (await w.h.json(`${P}/alerts.json?run=${runs[1]}&sigs_increase_threshold_pct=75`)).body.snapshot;
    expect([overridden.alert_level, overridden.thresholds_source.sigs_increase_threshold_pct]).toEqual(["ok", "query"]);
    const [record] = parse(await (await w.h.request(`${P}/alerts.csv?run=${runs[1]}`)).text(), { columns: true }) as Array<Record<string, string>>;
    expect([record!.alert_level, record!["thresholds.sigs_increase_threshold_pct"]]).toEqual(["warn", "50"]);
  });
});
