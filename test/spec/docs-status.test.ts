// Docs audit: the tables, bounds and examples of docs/status.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const P = "/api/public/system-status";

describe("docs/status.md", () => {
  // docs/status.md:10-15 — defaults and bounds of trend, uptime, incidents and latency-percentiles
  test("public status routes take the documented defaults and bounds", async () => {
    h = await openTestApp();
    const trend = await h.json(`${P}/trend`);
    expect(trend.status).toBe(200);
    expect(trend.body.limit ?? trend.body.query?.limit).toBe(60);
    expect(typeof trend.body.pagination?.has_more).toBe("boolean");
    expect((await h.json(`${P}/trend?limit=1440`)).status).toBe(200);
    expect((await h.json(`${P}/trend?limit=1441`)).status).toBe(400);
    const up = await h.json(`${P}/uptime`);
    expect(up.body.selected_hours).toBe(24);
    expect((await h.json(`${P}/uptime?hours=2160`)).status).toBe(200);
    expect((await h.json(`${P}/uptime?hours=2161`)).status).toBe(400);
    expect((await h.json(`${P}/uptime?exclude_maintenance=0`)).status).toBe(200);
    const inc = await h.json(`${P}/incidents`);
    expect([inc.body.hours, inc.body.limit]).toEqual([168, 50]);
    expect(typeof inc.body.pagination?.has_more).toBe("boolean");
    expect((await h.json(`${P}/incidents?limit=201`)).status).toBe(400);
    expect((await h.json(`${P}/incidents?hours=2161`)).status).toBe(400);
    const lat = await h.json("/api/public/latency-percentiles");
    expect(lat.status).toBe(200);
    expect(lat.body.hours ?? lat.body.window?.hours ?? lat.body.selected_hours).toBe(24);
    expect((await h.json("/api/public/latency-percentiles?hours=720")).status).toBe(200);
    expect((await h.json("/api/public/latency-percentiles?hours=721")).status).toBe(400);
    expect((await h.json(`${P}/incidents/999999`)).status).toBe(404);
  });

  // docs/status.md:35-42 and 107-118 — check fields and the four components, in order
  test("the status answer has the documented checks' fields and components", async () => {
    h = await openTestApp();
    const s = (await h.json(P)).body;
    expect(s.components.map((c: any) => c.id)).toEqual(["api", "webhooks", "chain_data", "jobs"]);
    expect(s.components[0]).toMatchObject({ name: "API", checks: ["database", "request_errors"], open_incident_ids: [], reported_severity: null });
    for (const f of ["writable", "migrations_applied", "migrations_total", "migrations_current"]) expect(Object.keys(s.checks.database)).toContain(f);
    for (const f of [
      "window_days",
      "job_count",
      "runs_considered",
      "avg_success_streak",
      "avg_mttr_minutes",
      "jobs_with_mttr_samples",
      "unresolved_failure_jobs",
      "unresolved_jobs",
    ])
      expect(Object.keys(s.checks.reliability)).toContain(f);
    for (const f of ["scheduler_expected", "failing_count", "stale_count", "jobs"]) expect(Object.keys(s.checks.jobs)).toContain(f);
    for (const f of ["dead_letter_events", "failed_events", "pending_events", "delivered_events"]) expect(Object.keys(s.checks.webhooks)).toContain(f);
    for (const f of ["window_minutes", "total_requests", "server_errors", "client_errors", "error_rate_pct", "judged"])
      expect(Object.keys(s.checks.request_errors)).toContain(f);
    for (const f of ["review_status", "expected_review_status", "expectation_configured", "mismatch", "mismatch_fields"])
      expect(Object.keys(s.checks.mint_authority)).toContain(f);
    const fresh = Object.keys(s.checks).filter((k) => k.startsWith("freshness_"));
    expect(fresh.length).toBe(7);
    for (const f of ["proof", "freshness_status", "age_hours", "stale_after_hours", "proof_url", "csv_url"])
      expect(Object.keys(s.checks[fresh[0]!])).toContain(f);
    expect(Object.keys(s)).toEqual(expect.arrayContaining(["open_incidents", "open_incident"]));
  });

  // docs/status.md:243-296 — operator incidents: create 201, replay 200 replayed, updates, PATCH, resolved → 409, public read
  test("operator incident lifecycle as in the example", async () => {
    h = await openTestApp();
    const admin = await createAdminToken(h);
    const auth = { authorization: `Bearer ${admin}` };
    const body = { title: "Partner API errors for some keys", message: "We are looking into 5xx answers.", severity: "bad", components: ["api"] };
    const c = await h.json("/admin/status/incidents", jsonInit("POST", body, { ...auth, "idempotency-key": "inc-2026-03-10-api" }));
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({
      success: true,
      replayed: false,
      incident: { source: "operator", state: "investigating", status: "open", severity: "bad", components: ["api"] },
    });
    const id = c.body.incident.id as number;
    const again = await h.json("/admin/status/incidents", jsonInit("POST", body, { ...auth, "idempotency-key": "inc-2026-03-10-api" }));
    expect([again.status, again.body.replayed, again.body.incident.id]).toEqual([200, true, id]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await h.json("/admin/status/incidents", jsonInit("POST", { ...body, title: "x" }, { ...auth, "idempotency-key": "inc-2026-03-10-api" }));
    expect([other.status, other.body.error]).toEqual([409, "conflict"]);
    const u = await h.json(
      `/admin/status/incidents/${id}/updates`,
      jsonInit("POST", { state: "identified", message: "A bad index after the last migration." }, auth),
    );
    expect(u.status).toBe(201);
    const p = await h.json(`/admin/status/incidents/${id}`, jsonInit("PATCH", { components: ["api", "webhooks"] }, auth));
    expect(p.status).toBe(200);
    expect(p.body.incident.components).toEqual(["api", "webhooks"]);
    const r = await h.json(`/admin/status/incidents/${id}/updates`, jsonInit("POST", { state: "resolved", message: "Index rebuilt." }, auth));
    expect(r.body.incident).toMatchObject({ status: "resolved", state: "resolved" });
    expect(r.body.incident.ended_at).toBeTruthy();
    const late = await h.json(`/admin/status/incidents/${id}/updates`, jsonInit("POST", { state: "monitoring", message: "more" }, auth));
    expect([late.status, late.body.error]).toEqual([409, "conflict"]);
    const pub = await h.json(`${P}/incidents/${id}`);
    expect(pub.status).toBe(200);
    const inc = pub.body.incident ?? pub.body;
    expect(inc.updates.map((x: any) => x.state)).toEqual(["resolved", "identified", "investigating"]);
    const list = await h.json("/admin/status/incidents?source=operator&limit=5", { headers: auth });
    expect(list.status).toBe(200);
    const bad = await h.json("/admin/status/incidents", jsonInit("POST", { ...body, severity: "ok" }, auth));
    expect(bad.status).toBe(400);
    const future = await h.json("/admin/status/incidents", jsonInit("POST", { ...body, started_at: "2026-01-02T00:00:00Z" }, auth));
    expect(future.status).toBe(400);
    const old = await h.json("/admin/status/incidents", jsonInit("POST", { ...body, started_at: "2025-11-30T00:00:00Z" }, auth));
    expect(old.status).toBe(400);
    expect((await h.json("/admin/status/incidents", jsonInit("POST", body))).status).toBe(403);
  });

  // docs/status.md:305-326 — subscribers: create with secret; same URL again 200 created:false secret null; other types 409
  test("status subscribers registration is idempotent per URL", async () => {
    h = await openTestApp();
    const admin = await createAdminToken(h);
    const auth = { authorization: `Bearer ${admin}` };
    const b = { url: "https://ops.example.com/hooks/herald-status", description: "on-call bridge" };
    const c = await h.json("/admin/status/subscribers", jsonInit("POST", b, auth));
    expect([c.status, c.body.created]).toEqual([201, true]);
    expect(c.body.secret).toMatch(/^whsec_/);
    const again = await h.json("/admin/status/subscribers", jsonInit("POST", b, auth));
    expect([again.status, again.body.created, again.body.secret]).toEqual([200, false, null]);
    const other = await h.json("/admin/status/subscribers", jsonInit("POST", { ...b, event_types: ["status.incident.created"] }, auth));
    expect([other.status, other.body.error]).toEqual([409, "conflict"]);
    expect(other.body.details.subscriber_id).toBe(c.body.subscriber.id);
    const l = await h.json("/admin/status/subscribers", { headers: auth });
    expect(Object.keys(l.body.subscribers[0].deliveries)).toEqual(
      expect.arrayContaining(["pending", "succeeded", "failed", "dead_letter", "last_attempt_at", "last_error"]),
    );
    const d = await h.json(`/admin/status/subscribers/${c.body.subscriber.id}`, { method: "DELETE", headers: auth });
    expect(d.status).toBe(200);
  });

  // docs/status.md:401-413 — maintenance windows: not more than 5 min in the past, at most 14 days
  test("maintenance window bounds", async () => {
    h = await openTestApp();
    const admin = await createAdminToken(h);
    const auth = { authorization: `Bearer ${admin}` };
    const ok = await h.json(
      "/admin/status/maintenance",
      jsonInit("POST", { starts_at: "2026-01-01T02:00:00Z", ends_at: "2026-01-01T03:00:00Z", title: "Database upgrade" }, auth),
    );
    expect(ok.status).toBe(201);
    const past = await h.json(
      "/admin/status/maintenance",
      jsonInit("POST", { starts_at: "2025-12-31T23:54:00Z", ends_at: "2026-01-01T03:00:00Z", title: "x" }, auth),
    );
    expect(past.status).toBe(400);
    const recent = await h.json(
      "/admin/status/maintenance",
      jsonInit("POST", { starts_at: "2025-12-31T23:56:00Z", ends_at: "2026-01-01T03:00:00Z", title: "x" }, auth),
    );
    expect(recent.status).toBe(201);
    const long = await h.json(
      "/admin/status/maintenance",
      jsonInit("POST", { starts_at: "2026-01-01T02:00:00Z", ends_at: "2026-01-15T02:00:01Z", title: "x" }, auth),
    );
    expect(long.status).toBe(400);
    const s = (await h.json(P)).body;
    expect(s.maintenance.windows.length).toBe(2);
    const l = await h.json("/admin/status/maintenance", { headers: auth });
    expect(l.status).toBe(200);
    const id = ok.body.window.id;
    expect((await h.json(`/admin/status/maintenance/${id}`, { method: "DELETE", headers: auth })).status).toBe(200);
  });

  // docs/status.md:428-434 — canary: strict fields and bounds, Cache-Control no-store
  test("canary echo", async () => {
    h = await openTestApp();
    const r = await h.json("/api/canary/echo", jsonInit("POST", { message: "hi", request_id: "abc" }));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ message: "hi", request_id: "abc" });
    expect(typeof r.body.server_request_id).toBe("string");
    expect(typeof r.body.received_at).toBe("string");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect((await h.json("/api/canary/echo", jsonInit("POST", { message: "x".repeat(1001), request_id: "a" }))).status).toBe(400);
    expect((await h.json("/api/canary/echo", jsonInit("POST", { message: "x", request_id: "a".repeat(129) }))).status).toBe(400);
    expect((await h.json("/api/canary/echo", jsonInit("POST", { message: "x", request_id: "a", extra: 1 }))).status).toBe(400);
    expect((await h.json("/api/canary/echo", { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" })).status).toBe(415);
  });

  // docs/status.md:450-463 — feeds and badges
  test("feeds, badges: content types, window default and bounds, unknown check 404", async () => {
    h = await openTestApp();
    const rss = await h.request("/status/feed.rss");
    expect(rss.status).toBe(200);
    const jf = await h.request("/status/feed.json");
    expect(jf.headers.get("content-type")).toContain("application/feed+json");
    const jb = (await jf.json()) as any;
    expect(jb.version).toBe("https://jsonfeed.org/version/1.1");
    const b = await h.request("/status/badge/database.svg");
    expect(b.status).toBe(200);
    expect(b.headers.get("cache-control")).toBe("public, max-age=300");
    expect((await h.request("/status/badge/overall.svg?window=90d")).status).toBe(200);
    const w = await h.json("/status/badge/database.svg?window=1y");
    expect([w.status, w.body.error]).toEqual([400, "invalid_query"]);
    const nf = await h.json("/status/badge/nope.svg");
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
  });

  // docs/status.md:468-483 — trust.json and trust-dashboard: Cache-Control public, max-age=60; audit_anomalies
  test("trust answers are cacheable for 60 s", async () => {
    h = await openTestApp();
    const t = await h.json("/trust.json");
    expect(t.headers.get("cache-control")).toBe("public, max-age=60");
    // docs/status.md:469-475 (SQLite); on PostgreSQL the backup routes do not apply (docs/design.md §8)
    const onDemand = h.ctx.store.dialect === "sqlite" ? "/admin/backup/run" : null;
    expect(t.body.data_protection.backup.on_demand_endpoint).toBe(onDemand);
    const d = await h.json("/transparency/trust-dashboard.json");
    expect(d.headers.get("cache-control")).toBe("public, max-age=60");
    expect(d.body.audit_anomalies).toBeDefined();
  });

  // docs/status.md:490-506 — developer portal: no sunsets; migration-status unknown id 404; header simulator
  test("developer portal answers", async () => {
    h = await openTestApp();
    const d = await h.json("/developers/deprecations.json");
    expect(JSON.stringify(d.body)).toContain("No endpoint sunsets are currently scheduled.");
    expect((await h.json("/developers/migration-status.json?id=nope")).status).toBe(404);
    expect((await h.json("/developers/migration-status.json")).status).toBe(200);
    const sim = await h.json("/api/public/deprecations/header-simulator");
    expect(sim.body.deprecated).toBe(false);
    expect(typeof sim.body.note).toBe("string");
    const ep = await h.json("/api/public/deprecations/header-simulator?endpoint=/api/partner/users/42");
    expect(ep.body.deprecated).toBe(false);
    expect((await h.json("/api/public/deprecations/header-simulator?id=nope")).status).toBe(404);
    const md = await h.request("/developers/deprecations-playbook.md");
    expect(md.status).toBe(200);
  });
});
