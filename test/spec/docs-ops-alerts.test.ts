// Docs audit: docs/ops-alerts.md's alert runs, exports (JSON, ZIP, runs CSV) and firing list after a real
// alerts-monitor run.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { unzipSync } from "fflate";
import { openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/ops-alerts.md", () => {
  // docs/ops-alerts.md:15-130
  test("a monitor run: rows, runs label, runs CSV and the ZIP with its manifest", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const run = await h.ctx.jobs.runNow("alerts-monitor");
    expect(run.ok).toBe(true);
    const e = await h.json("/admin/ops/alerts-monitor/export.json", { headers: auth });
    expect(e.body.total).toBeGreaterThan(0);
    const sources = new Set(e.body.alerts.map((a: any) => a.source));
    for (const s of ["status", "transparency", "webhooks", "digest"]) expect(sources.has(s)).toBe(true);
    expect(e.body.runs[0].source).toBe("status+transparency+webhooks+digest");
    for (const a of e.body.alerts) expect(["ok", "warn", "fail"]).toContain(a.status);
    const wh = e.body.alerts.find((a: any) => a.source === "webhooks");
    expect(wh).toMatchObject({ name: "dead_letter_growth", status: "ok", value: "0" });
    expect(wh.details).toMatchObject({ dead_letters: 0, previous: null, growth: 0 });
    const only = await h.json("/admin/ops/alerts-monitor/export.json?source=webhooks&limit=1", { headers: auth });
    expect(only.body.runs[0].source).toBe("webhooks");
    expect(only.body.count).toBe(1);
    const csv = await (await h.request("/admin/ops/alerts-monitor/runs/export", { headers: auth })).text();
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toBe("run_id,at,source,alerts,ok,warn,fail,status");
    expect(lines[1]).toContain(",status+transparency+webhooks+digest,");
    const zr = await h.request("/admin/ops/alerts-monitor/export.zip", { headers: auth });
    expect(zr.headers.get("content-type")).toBe("application/zip");
    const files = unzipSync(new Uint8Array(await zr.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual(["alerts.csv", "alerts.json", "manifest.json", "runs.csv"]);
    const manifest = JSON.parse(new TextDecoder().decode(files["manifest.json"]!));
    expect(Object.keys(manifest)).toEqual(expect.arrayContaining(["generated_at", "window", "query", "files"]));
    for (const f of manifest.files) {
      const bytes = files[f.name]!;
      expect([f.name, f.bytes, f.sha256]).toEqual([f.name, bytes.length, createHash("sha256").update(bytes).digest("hex")]);
    }
    expect(new TextDecoder().decode(files["alerts.csv"]!).split("\r\n")[0]).toBe("id,run_id,at,source,name,status,value,details");
    const aj = JSON.parse(new TextDecoder().decode(files["alerts.json"]!));
    expect(aj.alerts.length).toBe(e.body.total);
    expect((await h.request("/admin/ops/alerts-monitor/export.zip?limit=5", { headers: auth })).status).toBe(400);
    const f = await h.json("/admin/ops/alerts-monitor/firing.json", { headers: auth });
    expect(f.status).toBe(200);
  });
});
