import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TARGET } from "../support/target";
import { adminInit, expectRefusal, row, startE2E, type E2E } from "./support";

// Public status as a partner or holder reads it, and the operator's side of it (docs/status.md): the live status,
// a maintenance window declared through the admin API and shown publicly, an operator incident through to
// resolved, the page and the feed. Snapshots come from the status-snapshot job run in this process (it writes
// the shared database), as `herald jobs run status-snapshot` would.

let e: E2E;
beforeAll(async () => {
  e = await startE2E();
});
afterAll(() => e?.stop());

const inMinutes = (m: number) => new Date(e.h.clock.now().getTime() + m * 60_000).toISOString().replace(/\.\d{3}Z$/, ".000Z");

describe(`status over HTTP (${TARGET.label})`, () => {
  test("the live status answers every check, the same at /status.json", async () => {
    const live = await e.h.json("/api/public/system-status");
    expect(live.status).toBe(200);
    expect(live.headers.get("cache-control")).toBe("public, max-age=30");
    expect(live.body).toMatchObject({ success: true, maintenance: { active: false, windows: [] }, open_incident: null, links: { page: "/status" } });
    expect(["ok", "warn", "bad"]).toContain(live.body.overall);
    expect(live.body.checks.database.status).toBe("ok");
    for (const check of Object.values(live.body.checks) as Array<{ status: string; summary: string }>) {
      expect(["ok", "warn", "bad"]).toContain(check.status);
      expect(typeof check.summary).toBe("string");
    }
    const alias = await e.h.json("/status.json");
    expect(Object.keys(alias.body.checks)).toEqual(Object.keys(live.body.checks));

    const snap = await e.h.ctx.jobs.runNow("status-snapshot");
    expect(snap.ok).toBe(true);
    const trend = await e.h.json("/api/public/system-status/trend?limit=5");
    expect(trend.status).toBe(200);
    expect(JSON.stringify(trend.body)).toContain(
      (await row<{ generated_at: string }>(e.h, "SELECT generated_at FROM status_snapshots ORDER BY id DESC")).generated_at,
    );
    expectRefusal(await e.h.json("/api/public/system-status/trend?limit=0"), 400, "invalid_query");
  });

  test("a maintenance window: refused without the admin token, created by the operator, public until deleted", async () => {
    const body = { starts_at: inMinutes(60), ends_at: inMinutes(120), title: "Database upgrade", description: "Short read-only period" };
    expectRefusal(
      await e.h.json("/admin/status/maintenance", { ...adminInit(e, "POST", body), headers: { "content-type": "application/json" } }),
      403,
      "forbidden",
    );
    const created = await e.h.json("/admin/status/maintenance", adminInit(e, "POST", body));
    expect(created.status).toBe(201);
    expect(created.body.window).toMatchObject({ starts_at: body.starts_at, ends_at: body.ends_at, title: "Database upgrade", phase: "scheduled" });
    const id = created.body.window.id as number;
    expect(await row(e.h, "SELECT action, target FROM admin_audit WHERE action = 'status.maintenance.create'")).toEqual({
      action: "status.maintenance.create",
      target: String(id),
    });
    const backdated = await e.h.json("/admin/status/maintenance", adminInit(e, "POST", { ...body, starts_at: inMinutes(-30) }));
    expectRefusal(backdated, 400, "invalid_payload");

    const pub = await e.h.json("/api/public/system-status");
    expect(pub.body.maintenance.active).toBe(false);
    expect(pub.body.maintenance.windows).toEqual([expect.objectContaining({ id, title: "Database upgrade", starts_at: body.starts_at, phase: "scheduled" })]);
    const page = await e.h.request("/status");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain("Database upgrade");

    const listed = await e.h.json("/admin/status/maintenance", adminInit(e, "GET"));
    expect(listed.body.windows.map((w: { id: number }) => w.id)).toContain(id);
    const del = await e.h.json(`/admin/status/maintenance/${id}`, adminInit(e, "DELETE"));
    expect(del.status).toBe(200);
    expect((await e.h.json("/api/public/system-status")).body.maintenance.windows).toEqual([]);
  });

  test("an operator incident is public from open to resolved: status, incident list, feed", async () => {
    const open = await e.h.json("/admin/status/incidents", {
      ...adminInit(e, "POST", { title: "Partner API errors", message: "We are looking into 5xx answers.", severity: "bad", components: ["api"] }),
      headers: { ...e.admin, "content-type": "application/json", "idempotency-key": "e2e-incident-1" },
    });
    expect(open.status).toBe(201);
    const id = open.body.incident.id as number;
    expect(open.body.incident).toMatchObject({ source: "operator", status: "open", state: "investigating", severity: "bad" });

    const status = await e.h.json("/api/public/system-status");
    expect(status.body.open_incident).toMatchObject({ id, title: "Partner API errors" });
    const resolved = await e.h.json(`/admin/status/incidents/${id}/updates`, adminInit(e, "POST", { state: "resolved", message: "Fixed." }));
    expect(resolved.status).toBe(201);
    expect(resolved.body.incident).toMatchObject({ status: "resolved", state: "resolved" });

    const one = await e.h.json(`/api/public/system-status/incidents/${id}`);
    expect(one.body.incident.updates.map((u: { state: string }) => u.state)).toEqual(["resolved", "investigating"]);
    expect((await e.h.json("/api/public/system-status")).body.open_incident).toBeNull();
    const feed = await e.h.request("/status/feed.json");
    expect(feed.headers.get("content-type")).toContain("application/feed+json");
    const items = ((await feed.json()) as { items: Array<{ id: string; title: string }> }).items;
    expect(items.find((i) => i.id === `herald-incident-${id}`)?.title).toContain("[Resolved]");
    expectRefusal(await e.h.json("/api/public/system-status/incidents/999999"), 404, "not_found");
  });
});
