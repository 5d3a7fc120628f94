// Docs audit: docs/ops-incidents.md against the real app — the draft's sections by source and template, the
// severity filter on the peak, the window rules, the top errors' truncation and shares, the detail's span.
// (Bounds and list/export defaults: test/spec/docs-ops.test.ts, docs-ops-2.test.ts, docs-ops-bounds.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { operator } from "../status/support";

let h: TestApp;
let auth: Record<string, string>;
let id: number;
const get = (path: string) => h.json(path, { headers: auth });

beforeAll(async () => {
  // The doc's example: an operator incident opened as warn at 09:00, raised to bad, resolved at 10:00, with failed
  // requests at 09:10 (a 401 and a 403 and two 400s). Answers are read at 12:00.
  h = await openTestApp({ clock: new FakeClock("2026-03-10T09:00:00.000Z") });
  const token = await createAdminToken(h);
  auth = { authorization: `Bearer ${token}` };
  const admin = operator(h, token);
  const a = await admin.post("/admin/status/incidents", {
    title: "Webhook deliveries delayed",
    message: "Deliveries to some receivers are late.",
    severity: "warn",
    components: ["webhooks"],
  });
  id = a.body.incident.id;
  h.clock.set("2026-03-10T09:10:00.000Z");
  await h.request("/api/partner/webhooks");
  await h.request("/admin/status/incidents");
  await h.request("/api/public/system-status/trend?limit=abc");
  await h.request("/api/public/system-status/trend?limit=abc");
  await afterResponses();
  await h.ctx.requestLog.flush();
  h.clock.set("2026-03-10T09:20:00.000Z");
  await admin.post(`/admin/status/incidents/${id}/updates`, { state: "identified", message: "A receiver holds the queue.", severity: "bad" });
  h.clock.set("2026-03-10T10:00:00.000Z");
  await admin.post(`/admin/status/incidents/${id}/updates`, { state: "resolved", message: "Backlog drained." });
  h.clock.set("2026-03-10T12:00:00.000Z");
});
afterAll(async () => {
  await h?.close();
});

describe("docs/ops-incidents.md", () => {
  // docs/ops-incidents.md:72-120 — the example draft's query echo, window, incident, summary, impact and sections
  test("draft.json of the example", async () => {
    const d = (await get("/admin/ops/incidents/draft.json?index=0&context=brief")).body;
    expect(d.query).toEqual({
      hours: 24,
      limit: 10,
      source: "all",
      severity: "all",
      since: null,
      until: null,
      index: 0,
      context: "brief",
      template: "v1",
      preflight_day_offset: 1,
      top_errors_hours: 24,
      top_errors_limit: 50000,
      top_errors_top_n: 10,
    });
    expect(d.window).toEqual({ since: "2026-03-09T12:00:00.000Z", until: "2026-03-10T12:00:00.000Z", hours: 24, basis: "hours" });
    expect(d.incident.id).toBe(id);
    expect(d.title).toBe("Incident report: Webhook deliveries delayed");
    expect(d.impact).toMatchObject({ severity: "bad", severity_label: "outage", status: "resolved", components: ["webhooks"], duration_minutes: 60 });
    expect(d.sections).toEqual(["summary", "impact", "timeline", "incidents", "top_errors", "job_failures", "preflight", "next_steps"]);
    expect(d.omitted).toEqual({});
    expect(d.next_steps.placeholder).toBe(true);
    // docs/ops-incidents.md:57 — no snapshot of that day: "not available"
    expect(d.preflight).toMatchObject({ available: false, day_offset: 1, compare_day: "2026-03-09" });
    // docs/ops-incidents.md:58 — the top errors end at the incident's end and look top_errors_hours back
    expect(d.top_errors.window).toEqual({ since: "2026-03-09T10:00:00.000Z", until: "2026-03-10T10:00:00.000Z", hours: 24 });
    expect(d.top_errors).toMatchObject({ error_requests: 4, server_errors: 0, truncated: false });
    // docs/ops-incidents.md:124 — share: a fraction with four decimals
    expect(d.top_errors.codes).toEqual([
      { error_code: "invalid_query", status: 400, count: 2, share: 0.5 },
      { error_code: "forbidden", status: 403, count: 1, share: 0.25 },
      { error_code: "unauthorized", status: 401, count: 1, share: 0.25 },
    ]);
  });

  // docs/ops-incidents.md:26-27 — filters match an incident's peak severity (opened warn, raised to bad: a bad one)
  test("severity filters match the peak", async () => {
    expect((await get("/admin/ops/incidents/draft.json?severity=bad")).body.incidents_total).toBe(1);
    const warn = (await get("/admin/ops/incidents/draft.json?severity=warn")).body;
    expect([warn.incidents_total, warn.incident]).toEqual([0, null]);
    expect((await get("/admin/ops/incidents?severity=bad")).body.count).toBe(1);
    expect((await get("/admin/ops/incidents?severity=warn")).body.count).toBe(0);
  });

  // docs/ops-incidents.md:28-30, 36-38, 124-127 — source and template leave sections out, listed in omitted
  test("source and template", async () => {
    const min = (await get("/admin/ops/incidents/draft.json?template=minimal")).body;
    expect([min.incidents, min.top_errors, min.job_failures, min.preflight]).toEqual([[], null, null, null]);
    expect(min.sections).toEqual(["summary", "impact", "timeline", "next_steps"]);
    expect(min.omitted).toMatchObject({ top_errors: "template=minimal", job_failures: "template=minimal", preflight: "template=minimal" });
    const status = (await get("/admin/ops/incidents/draft.json?source=status")).body;
    expect([status.incident.id, status.top_errors, status.job_failures]).toEqual([id, null, null]);
    expect(Object.keys(status.omitted).sort()).toEqual(["job_failures", "top_errors"]);
    const errors = (await get("/admin/ops/incidents/draft.json?source=errors")).body;
    expect([errors.incident, errors.incidents_total, errors.top_errors.error_requests]).toEqual([null, 0, 4]);
    expect(Object.keys(errors.omitted).sort()).toEqual(["incidents", "job_failures"]);
    const jobs = (await get("/admin/ops/incidents/draft.json?source=jobs")).body;
    expect([jobs.incident, jobs.top_errors, jobs.job_failures]).toEqual([null, null, []]);
  });

  // docs/ops-incidents.md:31-35 — context: none (start, updates, end), brief (+ first and last failed request)
  test("context none and brief", async () => {
    const kinds = async (c: string) => (await get(`/admin/ops/incidents/draft.json?context=${c}`)).body.timeline.map((t: any) => t.kind);
    expect(await kinds("none")).toEqual(["incident_started", "incident_update", "incident_update", "incident_update", "incident_resolved"]);
    expect(await kinds("brief")).toEqual([
      "incident_started",
      "incident_update",
      "first_error",
      "last_error",
      "incident_update",
      "incident_update",
      "incident_resolved",
    ]);
  });

  // docs/ops-incidents.md:47-50, 63-64 — since/until override hours; refusals name query.until and query.since
  test("window rules", async () => {
    const u = (await get("/admin/ops/incidents/draft.json?until=2026-03-10T11:00:00Z&hours=3")).body;
    expect(u.window).toEqual({ since: "2026-03-10T08:00:00.000Z", until: "2026-03-10T11:00:00.000Z", hours: 3, basis: "since_until" });
    const s = (await get("/admin/ops/incidents/draft.json?since=2026-03-10T08:00:00%2B01:00")).body;
    expect(s.window).toMatchObject({ since: "2026-03-10T07:00:00.000Z", until: "2026-03-10T12:00:00.000Z", hours: 5 });
    const inv = await get("/admin/ops/incidents/draft.json?since=2026-03-10T09:00:00Z&until=2026-03-10T08:00:00Z");
    expect([inv.status, inv.body.details[0].field]).toEqual([400, "query.until"]);
    const wide = await get("/admin/ops/incidents/draft.json?since=2026-01-01T00:00:00Z&until=2026-03-10T00:00:00Z");
    expect([wide.status, wide.body.details[0].field]).toEqual([400, "query.since"]);
    // docs/ops-incidents.md:61 — include_meta adds meta
    expect((await get("/admin/ops/incidents/draft.json?include_meta=1")).body.meta).toMatchObject({ generated_at_utc: "2026-03-10T12:00:00.000Z" });
  });

  // docs/ops-incidents.md:59, 66-69 — top_errors_limit reads the newest rows; truncated says the range held more
  test("top_errors_limit and top_n", async () => {
    const t = (await get("/admin/ops/incidents/draft.json?top_errors_limit=2&top_errors_top_n=1")).body.top_errors;
    expect(t).toMatchObject({ rows_read: 2, rows_limit: 2, truncated: true });
    expect([t.codes.length, t.routes.length]).toEqual([1, 1]);
  });

  // docs/ops-incidents.md:128-131, 190-192 — the Markdown and text media types
  test("draft.md and draft.txt", async () => {
    const md = await h.request("/admin/ops/incidents/draft.md", { headers: auth });
    expect(md.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(await md.text()).toStartWith("# Incident report: Webhook deliveries delayed\n");
    const txt = await h.request("/admin/ops/incidents/draft.txt", { headers: auth });
    expect(txt.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await txt.text()).toContain("WHAT WE ARE DOING\n-----------------\n[!] EDIT BEFORE PUBLISHING");
  });

  // docs/ops-incidents.md:296-339 — detail: 15 minutes each side, related errors of that span (hours 1.5)
  test("detail.json span", async () => {
    const d = (await get(`/admin/ops/incidents/detail.json?id=${id}`)).body;
    expect(d.window).toEqual({ since: "2026-03-10T08:45:00.000Z", until: "2026-03-10T10:15:00.000Z" });
    expect(d.related.errors).toMatchObject({ window: { hours: 1.5 }, rows_limit: 50000, error_requests: 4 });
    expect(d.related.job_failures).toEqual([]);
    expect(d.timeline.filter((t: any) => t.kind === "incident_update").length).toBe(3);
  });

  // docs/ops-incidents.md:270-272 — the CSV attachment's name
  test("export file name", async () => {
    const r = await h.request("/admin/ops/incidents/export", { headers: auth });
    expect(r.headers.get("content-disposition")).toBe('attachment; filename="herald-incidents-2026-03-10.csv"');
    await r.arrayBuffer();
    const l = await get("/admin/ops/incidents/export.json?limit=1001");
    expect([l.status, l.body.details[0].field]).toEqual([400, "query.limit"]);
  });
});
