// Docs audit (second batch): docs/ops-readiness.md's 403-noise CSV and docs/ops-incidents.md's list and exports
// against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const HEADER =
  "row_type,window_days,date,requests,forbidden,noise_percent,forbidden_per_hour,within_threshold,max_percent,max_per_hour,from,to,hours_total,hours_with_data";

describe("docs/ops-readiness.md (CSV)", () => {
  // docs/ops-readiness.md:118-160
  test("403-noise CSV: name, columns, summary rows, points rows, include_points", async () => {
    h = await openTestApp();
    h.clock.set("2026-03-31T09:30:00.000Z");
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const s = await h.request("/admin/ops/readiness/403-noise/export.csv?days=14&mode=summary", { headers: auth });
    expect(s.headers.get("content-disposition")).toBe('attachment; filename="herald-403-noise-14d-summary.csv"');
    const sl = (await s.text()).trim().split("\r\n");
    expect(sl[0]).toBe(HEADER);
    expect(sl.slice(1).map((l) => l.split(",").slice(0, 2).join(","))).toEqual(["window,7", "window,14", "window,30"]);
    expect(sl[1]).toBe("window,7,,0,0,,0,true,5,,2026-03-25T00:00:00.000Z,2026-03-31T09:30:00.000Z,154,0");
    const p = await h.request("/admin/ops/readiness/403-noise/export.csv?days=7", { headers: auth });
    expect(p.headers.get("content-disposition")).toBe('attachment; filename="herald-403-noise-7d-points.csv"');
    const pl = (await p.text()).trim().split("\r\n");
    expect(pl.length).toBe(8);
    expect(pl[1]).toBe("day,,2026-03-25,0,0,,0,true,5,,,,,");
    const both = (await (await h.request("/admin/ops/readiness/403-noise/export.csv?days=7&mode=summary&include_points=1&windows=7", { headers: auth })).text())
      .trim()
      .split("\r\n");
    expect(both.slice(1).map((l) => l.split(",")[0])).toEqual(["window", "day", "day", "day", "day", "day", "day", "day"]);
  });
});

describe("docs/ops-incidents.md (list and exports)", () => {
  // docs/ops-incidents.md:229-290
  test("incidents list, export CSV and JSON twin", async () => {
    h = await openTestApp();
    h.clock.set("2026-03-10T09:00:00.000Z");
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const c = await h.json(
      "/admin/status/incidents",
      jsonInit("POST", { title: "Webhook deliveries delayed", message: "Looking.", severity: "bad", components: ["webhooks"] }, auth),
    );
    const id = c.body.incident.id;
    h.clock.set("2026-03-10T09:30:00.000Z");
    await h.json(`/admin/status/incidents/${id}/updates`, jsonInit("POST", { state: "identified", message: "Found it." }, auth));
    h.clock.set("2026-03-10T10:00:00.000Z");
    await h.json(`/admin/status/incidents/${id}/updates`, jsonInit("POST", { state: "resolved", message: "Backlog drained." }, auth));
    const l = await h.json("/admin/ops/incidents?status=resolved&limit=1", { headers: auth });
    expect(l.body.query).toMatchObject({ limit: 1, offset: 0, status: "resolved", severity: null, since: null });
    expect(l.body.incidents[0]).toMatchObject({
      id,
      source: "operator",
      severity: "bad",
      current_severity: null,
      status: "resolved",
      state: "resolved",
      duration_minutes: 60,
      components: ["webhooks"],
    });
    expect(l.body.incidents[0].updates.map((u: any) => u.state)).toEqual(["resolved", "identified", "investigating"]);
    const j = await h.json("/admin/ops/incidents/export.json", { headers: auth });
    expect(j.body.columns).toEqual([
      "id",
      "source",
      "title",
      "severity",
      "current_severity",
      "status",
      "state",
      "started_at",
      "ended_at",
      "duration_minutes",
      "components",
      "checks",
      "update_count",
      "first_update_at",
      "last_update_at",
      "last_update_state",
      "last_update_message",
    ]);
    expect(j.body.query).toMatchObject({ limit: 1000, offset: 0, status: null, severity: null, since: null });
    expect(j.body.rows[0]).toEqual({
      id,
      source: "operator",
      title: "Webhook deliveries delayed",
      severity: "bad",
      current_severity: null,
      status: "resolved",
      state: "resolved",
      started_at: "2026-03-10T09:00:00.000Z",
      ended_at: "2026-03-10T10:00:00.000Z",
      duration_minutes: 60,
      components: "webhooks",
      checks: "",
      update_count: 3,
      first_update_at: "2026-03-10T09:00:00.000Z",
      last_update_at: "2026-03-10T10:00:00.000Z",
      last_update_state: "resolved",
      last_update_message: "Backlog drained.",
    });
    const csv = await h.request("/admin/ops/incidents/export", { headers: auth });
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="herald-incidents-2026-03-10.csv"');
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[1]).toBe(
      `${id},operator,Webhook deliveries delayed,bad,,resolved,resolved,2026-03-10T09:00:00.000Z,2026-03-10T10:00:00.000Z,60,webhooks,,3,2026-03-10T09:00:00.000Z,2026-03-10T10:00:00.000Z,resolved,Backlog drained.`,
    );
    expect((await h.json("/admin/ops/incidents/export.json?limit=1001", { headers: auth })).status).toBe(400);
    const d = await h.json(`/admin/ops/incidents/detail.json?id=${id}`, { headers: auth });
    expect(d.status).toBe(200);
    const md = await (await h.request("/admin/ops/incidents/draft.md?index=0&hours=24", { headers: auth })).text();
    expect(md).toContain("# Incident report: Webhook deliveries delayed");
  });
});
