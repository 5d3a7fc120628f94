import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { strFromU8, unzipSync } from "fflate";
import { ALERT_SOURCES, recordAlertRun } from "../../src/ops/alerts/service";
import { runAlertsMonitor } from "../../src/ops/alerts/monitor";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// A monitor run records status, transparency and webhook rows under one run_id. Its one line in runs/export,
// export.json's runs[] and the ZIP's runs.csv is labelled by all three sources (docs/ops-alerts.md), not by
// whichever row came first (`…,webhooks,18,…` for a run whose rows are mostly status checks).

const NOW = "2026-03-10T12:00:00.000Z";
const B = "/admin/ops/alerts-monitor";
let h: TestApp;
let auth: Record<string, string>;
let monitor: Awaited<ReturnType<typeof runAlertsMonitor>>;

beforeAll(async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  await recordAlertRun(h.ctx, {
    source: "preflight",
    at: "2026-03-10T09:00:00.000Z",
    runId: "ar_pre",
    alerts: [{ name: "token.mint", status: "warn", value: "3" }],
  });
  monitor = await runAlertsMonitor(h.ctx);
});
afterAll(async () => {
  await h.close();
});

const rowsOf = (text: string) => parse(text, { columns: true }) as Array<Record<string, string>>;

describe("alert runs of several sources", () => {
  test("runs/export, export.json and the ZIP's runs.csv label the run by every source, in a fixed order", async () => {
    const total = monitor.sources.reduce((n, s) => n + s.count, 0);
    const sources = monitor.sources.map((s) => s.source);
    expect(sources).toEqual(expect.arrayContaining(["status", "transparency", "webhooks"]));
    // The label: every source of the run, in ALERT_SOURCES order ("status+transparency+webhooks…").
    const MIXED = ALERT_SOURCES.filter((s) => sources.includes(s)).join("+");
    expect(MIXED).toStartWith("status+transparency+webhooks");

    const csv = await h.request(`${B}/runs/export`, { headers: auth });
    expect(csv.status).toBe(200);
    const lines = rowsOf(await csv.text());
    expect(lines.map((r) => [r.run_id, r.source, r.alerts])).toEqual([
      [monitor.run_id, MIXED, String(total)],
      ["ar_pre", "preflight", "1"],
    ]);

    const json = await h.json(`${B}/export.json`, { headers: auth });
    expect(json.body.runs.map((r: { run_id: string; source: string; alerts: number }) => [r.run_id, r.source, r.alerts])).toEqual([
      [monitor.run_id, MIXED, total],
      ["ar_pre", "preflight", 1],
    ]);

    const zip = await h.request(`${B}/export.zip`, { headers: auth });
    const runs = rowsOf(strFromU8(unzipSync(new Uint8Array(await zip.arrayBuffer()))["runs.csv"]!));
    expect(runs.map((r) => [r.run_id, r.source])).toEqual([
      [monitor.run_id, MIXED],
      ["ar_pre", "preflight"],
    ]);
  });

  test("with source=…, only that source's rows are read, and the label is that source", async () => {
    const csv = rowsOf(await (await h.request(`${B}/runs/export?source=webhooks`, { headers: auth })).text());
    expect(csv.map((r) => [r.run_id, r.source, r.alerts])).toEqual([[monitor.run_id, "webhooks", "1"]]);
  });
});
