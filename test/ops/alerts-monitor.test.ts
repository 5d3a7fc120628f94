import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { strFromU8, unzipSync } from "fflate";
import { recordAlertRun } from "../../src/ops/alerts/service";
import { ALERTS_MONITOR_JOB, runAlertsMonitor } from "../../src/ops/alerts/monitor";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { plantDeadLetters } from "./support";

// Alert runs planted through recordAlertRun (as the preflight detector writes them) and made by the real
// monitor job, read back through the exports. Now is 2026-03-10T12:00Z; the default window is 7 days.

const NOW = "2026-03-10T12:00:00.000Z";
const B = "/admin/ops/alerts-monitor";
let h: TestApp;
let auth: { authorization: string };
afterEach(async () => {
  await h?.close();
});

async function setup() {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  auth = { authorization: `Bearer ${await createAdminToken(h)}` };
}

async function plant() {
  await recordAlertRun(h.ctx, {
    source: "preflight",
    at: "2026-03-09T08:00:00.000Z",
    runId: "ar_pre1",
    alerts: [
      { name: "token.mint", status: "warn", value: "3", details: { z: 2.5 } },
      { name: "digest.hours", status: "ok", value: "0" },
    ],
  });
  await recordAlertRun(h.ctx, {
    source: "status",
    at: "2026-03-10T11:00:00.000Z",
    runId: "ar_st1",
    alerts: [{ name: "overall", status: "fail", value: "bad" }],
  });
  await recordAlertRun(h.ctx, { source: "status", at: "2026-03-01T11:00:00.000Z", runId: "ar_old", alerts: [{ name: "overall", status: "ok", value: "ok" }] });
}

describe("alerts monitor: export.json", () => {
  test("the window's rows, newest first, filtered by source and status, paged", async () => {
    await setup();
    await plant();
    const r = await h.json(`${B}/export.json`, { headers: auth });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-disposition")).toContain("attachment");
    expect(r.body.query).toEqual({ days: 7, source: "all", status: "all", limit: 50, offset: 0, cursor: null });
    expect(r.body.total).toBe(3); // the 2026-03-01 run is outside the 7 days
    expect(r.body.alerts.map((a: any) => a.name)).toEqual(["overall", "digest.hours", "token.mint"]);
    expect(r.body.alerts[2].details).toEqual({ z: 2.5 });
    expect(r.body.runs.map((x: any) => [x.run_id, x.status, x.alerts])).toEqual([
      ["ar_st1", "fail", 1],
      ["ar_pre1", "warn", 2],
    ]);

    const wide = await h.json(`${B}/export.json?days=30&source=status`, { headers: auth });
    expect(wide.body.alerts.map((a: any) => a.run_id)).toEqual(["ar_st1", "ar_old"]);
    const warn = await h.json(`${B}/export.json?status=warn`, { headers: auth });
    expect(warn.body.alerts.map((a: any) => a.name)).toEqual(["token.mint"]);

    const p1 = await h.json(`${B}/export.json?limit=2`, { headers: auth });
    expect(p1.body.count).toBe(2);
    expect(p1.body.pagination).toEqual({ has_more: true, next_offset: 2, next_cursor: null });
    const p2 = await h.json(`${B}/export.json?limit=2&offset=2`, { headers: auth });
    expect(p2.body.alerts.map((a: any) => a.name)).toEqual(["token.mint"]);
    expect(p2.body.pagination.has_more).toBe(false);
    // ar_pre1's two rows fall on both pages; each page summarizes the run whole, as runs/export does.
    const whole = r.body.runs.find((x: any) => x.run_id === "ar_pre1");
    expect(p1.body.runs.find((x: any) => x.run_id === "ar_pre1")).toEqual(whole);
    expect(p2.body.runs).toEqual([whole]);
  });

  test("bad input is a 400 invalid_query naming the parameter, never a 500", async () => {
    await setup();
    for (const [q, field] of [
      ["source=bogus", "query.source"],
      ["status=bad", "query.status"],
      ["days=0", "query.days"],
      ["days=91", "query.days"],
      ["days=abc", "query.days"],
      ["limit=201", "query.limit"],
      ["offset=-1", "query.offset"],
    ]) {
      const r = await h.json(`${B}/export.json?${q}`, { headers: auth });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_query");
      expect(r.body.message).toContain(field!);
    }
    for (const path of ["export.zip?source=nope", "runs/export?status=nope"]) {
      const r = await h.json(`${B}/${path}`, { headers: auth });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
  });
});

describe("alerts monitor: the job", () => {
  test("records status checks, the transparency alert and dead-letter growth per run", async () => {
    await setup();
    expect(h.ctx.jobs.has(ALERTS_MONITOR_JOB)).toBe(true);
    const first = await runAlertsMonitor(h.ctx);
    expect(first.sources.map((s) => s.source)).toEqual(["status", "transparency", "webhooks", "digest"]);
    let r = await h.json(`${B}/export.json?source=webhooks`, { headers: auth });
    expect(r.body.alerts).toHaveLength(1);
    expect(r.body.alerts[0]).toMatchObject({ name: "dead_letter_growth", status: "ok", value: "0", details: { dead_letters: 0, previous: null, growth: 0 } });
    const st = await h.json(`${B}/export.json?source=status&limit=200`, { headers: auth });
    const names = st.body.alerts.map((a: any) => a.name);
    expect(names).toContain("overall");
    const live = await h.json("/api/public/system-status");
    for (const check of Object.keys(live.body.checks)) expect(names).toContain(check);
    for (const a of st.body.alerts) expect(["ok", "warn", "fail"]).toContain(a.status);
    const tr = await h.json(`${B}/export.json?source=transparency`, { headers: auth });
    expect(tr.body.alerts[0]).toMatchObject({ name: "audit_anomalies", status: "ok", value: "no_run" });

    await plantDeadLetters(h.ctx.store, 3, NOW);
    h.clock.advance(15 * 60_000);
    const second = await runAlertsMonitor(h.ctx);
    expect(second.run_id).not.toBe(first.run_id);
    r = await h.json(`${B}/export.json?source=webhooks`, { headers: auth });
    expect(r.body.alerts[0]).toMatchObject({
      status: "warn",
      value: "3",
      details: { dead_letters: 3, previous: 0, growth: 3 },
      at: h.clock.now().toISOString(),
    });

    h.clock.advance(15 * 60_000);
    await h.ctx.jobs.runNow(ALERTS_MONITOR_JOB);
    r = await h.json(`${B}/export.json?source=webhooks`, { headers: auth });
    expect(r.body.alerts[0]).toMatchObject({ status: "ok", value: "3", details: { previous: 3, growth: 0 } });
    expect(r.body.runs).toHaveLength(3);
  });
});

describe("alerts monitor: runs/export and export.zip", () => {
  test("runs/export is one CSV line per run, the twin of export.json's runs", async () => {
    await setup();
    await plant();
    const res = await h.request(`${B}/runs/export?days=30`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    const rows = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
    const json = await h.json(`${B}/export.json?days=30`, { headers: auth });
    expect(rows.map((r) => ({ ...r, alerts: Number(r.alerts), ok: Number(r.ok), warn: Number(r.warn), fail: Number(r.fail) }))).toEqual(json.body.runs);
  });

  test("the ZIP unpacks, passes unzip -t, and its manifest's sha256 values match the files", async () => {
    await setup();
    await plant();
    await runAlertsMonitor(h.ctx);
    const res = await h.request(`${B}/export.zip`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    const bytes = new Uint8Array(await res.arrayBuffer());
    const files = unzipSync(bytes);
    expect(Object.keys(files).sort()).toEqual(["alerts.csv", "alerts.json", "manifest.json", "runs.csv"]);
    const manifest = JSON.parse(strFromU8(files["manifest.json"]!));
    expect(manifest.files.map((f: any) => f.name)).toEqual(["alerts.json", "alerts.csv", "runs.csv"]);
    for (const f of manifest.files) {
      expect(f.bytes).toBe(files[f.name]!.byteLength);
      expect(f.sha256).toBe(createHash("sha256").update(files[f.name]!).digest("hex"));
    }
    const json = JSON.parse(strFromU8(files["alerts.json"]!));
    const csv = parse(strFromU8(files["alerts.csv"]!), { columns: true }) as Array<Record<string, string>>;
    expect(csv).toHaveLength(json.alerts.length);
    expect(csv.map((r) => r.name)).toEqual(json.alerts.map((a: any) => a.name));
    expect(csv.map((r) => (r.details === "" ? null : JSON.parse(r.details!)))).toEqual(json.alerts.map((a: any) => a.details));
    const runs = parse(strFromU8(files["runs.csv"]!), { columns: true }) as Array<Record<string, string>>;
    expect(runs.map((r) => r.run_id)).toEqual(json.runs.map((r: any) => r.run_id));

    const which = spawnSync("which", ["unzip"]);
    if (which.status === 0) {
      const dir = mkdtempSync(join(tmpdir(), "herald-zip-"));
      try {
        writeFileSync(join(dir, "a.zip"), bytes);
        const t = spawnSync("unzip", ["-t", join(dir, "a.zip")], { encoding: "utf8" });
        expect(t.status).toBe(0);
        expect(t.stdout).toContain("No errors detected");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

describe("alerts monitor: authentication", () => {
  test("every route is 403 without credentials, and 403 with a wrong token", async () => {
    await setup();
    for (const path of ["export.json", "export.zip", "runs/export", "export-usage.csv", "export-usage.json", "export-usage.png", "export-usage.svg"]) {
      for (const headers of [{}, { authorization: "Bearer not-a-real-token-0123456789" }] as Array<Record<string, string>>) {
        const r = await h.json(`${B}/${path}`, { headers });
        expect(r.status).toBe(403);
        expect(r.body.error).toBe("forbidden");
      }
    }
  });
});
