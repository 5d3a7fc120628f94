// Docs audit: the examples and defaults of docs/ops-readiness.md, docs/ops-alerts.md, docs/ops-incidents.md and
// docs/ops-preflight.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
async function admin() {
  h = await openTestApp();
  return { authorization: `Bearer ${await createAdminToken(h)}` };
}

describe("docs/ops-readiness.md", () => {
  // docs/ops-readiness.md:36-39, 45-84 — defaults, query echo, windows shortest first, meta fields
  test("403-noise export.json: defaults, echo and meta", async () => {
    const auth = await admin();
    const d = await h.json("/admin/ops/readiness/403-noise/export.json", { headers: auth });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ days: 30, threshold: { max_percent: 5, max_per_hour: null }, within_threshold: true });
    expect(d.body.query).toEqual({ days: 30, windows: [7, 14, 30], compact: false, include_windows_meta: false });
    expect(d.body.windows.map((w: any) => w.window_days)).toEqual([7, 14, 30]);
    expect(d.body.points.length).toBe(30);
    const m = await h.json("/admin/ops/readiness/403-noise/export.json?days=7&windows=7&include_windows_meta=1", { headers: auth });
    expect(Object.keys(m.body.windows[0].meta).sort()).toEqual(["from", "from_hour", "hours_total", "hours_with_data", "to", "to_hour"]);
    expect(m.body.windows[0].meta).toMatchObject({
      from: "2025-12-26T00:00:00.000Z",
      to: "2026-01-01T00:00:00.000Z",
      from_hour: "2025-12-26T00",
      to_hour: "2026-01-01T00",
      hours_total: 145,
    });
    expect(m.body.points.length).toBe(7);
    expect(Object.keys(m.body.points[0]).sort()).toEqual(["date", "forbidden", "forbidden_per_hour", "noise_percent", "requests", "within_threshold"]);
    const c = await h.json("/admin/ops/readiness/403-noise/export.json?days=14&windows=14,7&compact=1", { headers: auth });
    expect(c.body.windows.map((w: any) => w.window_days)).toEqual([7, 14]);
    expect(c.body.points).toBeUndefined();
    expect(c.body.query).toEqual({ days: 14, windows: [7, 14], compact: true, include_windows_meta: false });
    const bad = await h.json("/admin/ops/readiness/403-noise/export.json?days=10", { headers: auth });
    expect(bad.body.details).toEqual([{ field: "query.days", problem: "must be one of: 7, 14, 30; got 10" }]);
    expect((await h.json("/admin/ops/readiness/403-noise/export.json?windows=", { headers: auth })).status).toBe(400);
    expect((await h.json("/admin/ops/readiness/403-noise/export.json?compact=yes", { headers: auth })).status).toBe(400);
  });

  // docs/ops-readiness.md:198-208 — synthetic-zero-history.csv: attachment name, columns, header alone when empty
  test("synthetic-zero-history.csv", async () => {
    const auth = await admin();
    const r = await h.request("/admin/ops/readiness/synthetic-zero-history.csv", { headers: auth });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-disposition")).toContain("herald-synthetic-zero-history.csv");
    expect(await r.text()).toBe("at,run_id,probe,url,outcome,status,latency_ms,had_data,ok,error\r\n");
  });

  // docs/ops-readiness.md:233-270 — event-loop.json fields (a process that does not serve: not_measured)
  test("event-loop.json fields", async () => {
    const auth = await admin();
    const r = await h.json("/admin/ops/readiness/event-loop.json", { headers: auth });
    expect(r.status).toBe(200);
    expect(typeof r.body.instance_id).toBe("string");
    expect(Object.keys(r.body.event_loop).sort()).toEqual(
      ["bad_ms", "interval_ms", "max_ms", "p50_ms", "p99_ms", "samples", "sampling", "state", "warn_ms", "window_seconds"].sort(),
    );
    expect(r.body.event_loop).toMatchObject({ interval_ms: 20, window_seconds: 60, warn_ms: 100, bad_ms: 1000 });
    expect(["ok", "warn", "bad", "not_measured"]).toContain(r.body.event_loop.state);
  });
});

describe("docs/ops-alerts.md", () => {
  // docs/ops-alerts.md:37-78 — export.json shape, defaults and window
  test("alerts-monitor export.json defaults and shape", async () => {
    const auth = await admin();
    const r = await h.json("/admin/ops/alerts-monitor/export.json", { headers: auth });
    expect(r.status).toBe(200);
    expect(r.body.query).toMatchObject({ days: 7, source: "all", status: "all", limit: 50, offset: 0 });
    expect(r.body.window).toEqual({ from: "2025-12-25T00:00:00.000Z", to: "2026-01-01T00:00:00.000Z", days: 7 });
    expect(r.body).toMatchObject({ count: 0, total: 0, alerts: [], runs: [], pagination: { has_more: false, next_offset: null, next_cursor: null } });
  });

  // docs/ops-alerts.md:171-205 — firing.json: query echo, limit 1–200 default 50; cursor refused
  test("firing.json defaults", async () => {
    const auth = await admin();
    const r = await h.json("/admin/ops/alerts-monitor/firing.json", { headers: auth });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ count: 0, total: 0, silenced: 0, alerts: [] });
    expect(r.body.query).toEqual({ limit: 50, offset: 0, cursor: null, source: null, level: null });
    expect((await h.json("/admin/ops/alerts-monitor/firing.json?limit=201", { headers: auth })).status).toBe(400);
    expect((await h.json("/admin/ops/alerts-monitor/firing.json?level=ok", { headers: auth })).status).toBe(400);
    expect((await h.json("/admin/ops/alerts-monitor/firing.json?source=all", { headers: auth })).status).toBe(400);
  });

  // docs/ops-alerts.md:212-250 — silences: create 201, list echo, expire, expire again 409, unknown 404, bounds
  test("silences", async () => {
    const auth = await admin();
    const c = await h.json(
      "/admin/ops/alerts-monitor/silences",
      jsonInit("POST", { matcher: "webhooks:*", reason: "replaying dead letters, OPS-7", ends_at: "2026-01-01T02:00:00Z" }, auth),
    );
    expect(c.status).toBe(201);
    const s = c.body.silence;
    expect(s).toMatchObject({ matcher: "webhooks:*", state: "active", expired_at: null, expired_by: null, ends_at: "2026-01-01T02:00:00.000Z" });
    const l = await h.json("/admin/ops/alerts-monitor/silences", { headers: auth });
    expect(l.body.query).toEqual({ limit: 50, offset: 0, cursor: null, state: null });
    expect(l.body.count).toBe(1);
    const past = await h.json("/admin/ops/alerts-monitor/silences", jsonInit("POST", { matcher: "x", reason: "r", ends_at: "2025-12-31T00:00:00Z" }, auth));
    expect([past.status, past.body.error]).toEqual([400, "invalid_payload"]);
    const far = await h.json("/admin/ops/alerts-monitor/silences", jsonInit("POST", { matcher: "x", reason: "r", ends_at: "2026-01-31T00:00:01Z" }, auth));
    expect(far.status).toBe(400);
    const in30 = await h.json("/admin/ops/alerts-monitor/silences", jsonInit("POST", { matcher: "x", reason: "r", ends_at: "2026-01-30T23:59:00Z" }, auth));
    expect(in30.status).toBe(201);
    const longM = await h.json(
      "/admin/ops/alerts-monitor/silences",
      jsonInit("POST", { matcher: "x".repeat(201), reason: "r", ends_at: "2026-01-02T00:00:00Z" }, auth),
    );
    expect(longM.status).toBe(400);
    const extra = await h.json(
      "/admin/ops/alerts-monitor/silences",
      jsonInit("POST", { matcher: "x", reason: "r", ends_at: "2026-01-02T00:00:00Z", x: 1 }, auth),
    );
    expect(extra.status).toBe(400);
    const e1 = await h.json(`/admin/ops/alerts-monitor/silences/${s.id}/expire`, { method: "POST", headers: auth });
    expect(e1.status).toBe(200);
    const e2 = await h.json(`/admin/ops/alerts-monitor/silences/${s.id}/expire`, { method: "POST", headers: auth });
    expect([e2.status, e2.body.error]).toEqual([409, "conflict"]);
    const e3 = await h.json("/admin/ops/alerts-monitor/silences/99999/expire", { method: "POST", headers: auth });
    expect([e3.status, e3.body.error]).toEqual([404, "not_found"]);
    const a = await h.request("/admin/ops/alerts-monitor/alerts/1", { headers: { accept: "text/html" } });
    expect(a.status).toBe(303);
    expect(a.headers.get("location")).toContain("/admin/sign-in?next=");
  });

  // docs/ops-alerts.md:292-330 — export-usage.json: window from the start of the first day; query echo; CSV header
  test("export-usage json and csv", async () => {
    const auth = await admin();
    h.clock.set("2026-03-10T12:00:00.000Z");
    const r = await h.json("/admin/ops/alerts-monitor/export-usage.json?days=3", { headers: auth });
    expect(r.status).toBe(200);
    expect(r.body.window).toEqual({ from: "2026-03-08T00:00:00.000Z", to: "2026-03-10T12:00:00.000Z", days: 3 });
    expect(r.body.query).toEqual({ days: 3, source: "all" });
    expect(r.body.series.map((x: any) => x.day)).toEqual(["2026-03-08", "2026-03-09", "2026-03-10"]);
    expect(Object.keys(r.body.series[0]).sort()).toEqual(["bytes", "day", "downloads", "export_downloads", "token_downloads"]);
    expect(Object.keys(r.body.totals).sort()).toEqual(["actors", "bytes", "downloads", "exports"]);
    const csv = await (await h.request("/admin/ops/alerts-monitor/export-usage.csv?source=token&days=30", { headers: auth })).text();
    expect(csv.split("\r\n")[0]).toBe("day,export,downloads,bytes,actors,operators");
    const png = await h.request("/admin/ops/alerts-monitor/export-usage.png", { headers: auth });
    const b = new Uint8Array(await png.arrayBuffer());
    const dv = new DataView(b.buffer);
    expect([dv.getUint32(16), dv.getUint32(20)]).toEqual([800, 360]);
    expect(png.headers.get("x-usage-legend")).toBeTruthy();
  });
});

describe("docs/ops-incidents.md", () => {
  // docs/ops-incidents.md:48-62 — draft defaults (hours 24, limit 10, index 0 with no incident drafts the window)
  test("draft.json with no incident drafts the window; index past the list 404", async () => {
    const auth = await admin();
    const r = await h.json("/admin/ops/incidents/draft.json", { headers: auth });
    expect(r.status).toBe(200);
    expect(r.body.incident).toBeNull();
    const past = await h.json("/admin/ops/incidents/draft.json?index=1", { headers: auth });
    expect([past.status, past.body.error]).toEqual([404, "not_found"]);
    expect((await h.json("/admin/ops/incidents/draft.json?index=49", { headers: auth })).status).toBe(404);
    expect((await h.json("/admin/ops/incidents/draft.json?index=50", { headers: auth })).status).toBe(400);
    const tz = await h.json("/admin/ops/incidents/draft.json?since=2025-12-31T09:00:00", { headers: auth });
    expect([tz.status, tz.body.error]).toEqual([400, "invalid_query"]);
    const inv = await h.json("/admin/ops/incidents/draft.json?since=2025-12-31T09:00:00Z&until=2025-12-31T08:00:00Z", { headers: auth });
    expect(inv.status).toBe(400);
    const wide = await h.json("/admin/ops/incidents/draft.json?since=2025-11-01T00:00:00Z&until=2025-12-01T00:00:01Z", { headers: auth });
    expect(wide.status).toBe(400);
    const md = await h.request("/admin/ops/incidents/draft.md", { headers: auth });
    expect(md.status).toBe(200);
    const txt = await (await h.request("/admin/ops/incidents/draft.txt", { headers: auth })).text();
    for (const line of txt.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
  });

  // docs/ops-incidents.md:229-245, 300-312 — list defaults; detail.json id/index rules
  test("incidents list and detail", async () => {
    const auth = await admin();
    const l = await h.json("/admin/ops/incidents", { headers: auth });
    expect(l.status).toBe(200);
    expect(l.body.query).toMatchObject({ limit: 50, offset: 0 });
    const both = await h.json("/admin/ops/incidents/detail.json?id=1&index=0", { headers: auth });
    expect(both.status).toBe(400);
    expect(both.body.details[0].field).toBe("query.index");
    expect((await h.json("/admin/ops/incidents/detail.json?id=1", { headers: auth })).status).toBe(404);
    expect((await h.json("/admin/ops/incidents/detail.json?index=999", { headers: auth })).status).toBe(404);
    expect((await h.json("/admin/ops/incidents/detail.json?index=1000", { headers: auth })).status).toBe(400);
  });
});

describe("docs/ops-preflight.md", () => {
  // docs/ops-preflight.md:95-100 — fields: an unknown name is 400 naming it; day_offset text 400
  test("delta.json fields and day_offset", async () => {
    const auth = await admin();
    const r = await h.json("/admin/ops/preflight-guards/delta.json", { headers: auth });
    expect(r.status).toBe(200);
    const bad = await h.json("/admin/ops/preflight-guards/delta.json?fields=NOPE_FIELD", { headers: auth });
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_query"]);
    expect(JSON.stringify(bad.body)).toContain("NOPE_FIELD");
    expect((await h.json("/admin/ops/preflight-guards/delta.json?fields=WEBHOOK_MAX_ATTEMPTS,version", { headers: auth })).status).toBe(200);
    expect((await h.json("/admin/ops/preflight-guards/delta.json?day_offset=abc", { headers: auth })).status).toBe(400);
    const bl = await h.json("/admin/ops/preflight-guards/delta.summary.json?include_fields=1&include_fields_bytes_limit=-1", { headers: auth });
    expect(bl.status).toBe(400);
    const bt = await h.json("/admin/ops/preflight-guards/delta.summary.json?include_fields=1&include_fields_bytes_limit=abc", { headers: auth });
    expect(bt.status).toBe(400);
    const env = await h.json("/admin/ops/preflight-guards.json?include_env_rows=1", { headers: auth });
    expect(JSON.stringify(env.body)).toContain('"env"');
  });
});
