import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken, createKey, signedInit } from "../support/partner";
import { iso } from "./support";

// Admin maintenance windows: auth, validation, audit rows in the same transaction, and what the public sees.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const T0 = "2026-01-01T00:00:00.000Z";
const PATH = "/admin/status/maintenance";

async function setup() {
  h = await openTestApp({ clock: new FakeClock(T0) });
  const token = await createAdminToken(h);
  const auth = { authorization: `Bearer ${token}` };
  const post = (body: unknown) => h!.json(PATH, jsonInit("POST", body, auth));
  return { h, auth, post };
}

const audits = (h: TestApp) =>
  h.ctx.store.all<{ actor: string; action: string; target: string; details: string; request_id: string }>(
    "SELECT actor, action, target, details, request_id FROM admin_audit WHERE action LIKE 'status.%' ORDER BY id",
  );

describe("POST /admin/status/maintenance", () => {
  test("creates a window (201) with an audit row naming the operator and the request", async () => {
    const { h, post } = await setup();
    const r = await post({ starts_at: iso(T0, 60), ends_at: iso(T0, 120), title: "Database upgrade", description: "Short read-only period" });
    expect(r.status).toBe(201);
    expect(r.body.window).toEqual({
      id: 1,
      starts_at: iso(T0, 60),
      ends_at: iso(T0, 120),
      title: "Database upgrade",
      description: "Short read-only period",
      phase: "scheduled",
      created_by: "admin:test-operator#1",
      created_at: T0,
    });
    const [a] = await audits(h);
    expect(a).toMatchObject({ actor: "admin:test-operator#1", action: "status.maintenance.create", target: "1", request_id: r.headers.get("x-request-id")! });
    expect(JSON.parse(a!.details)).toEqual({ starts_at: iso(T0, 60), ends_at: iso(T0, 120), title: "Database upgrade" });
  });

  test("times are normalised to UTC; up to 5 minutes in the past is accepted", async () => {
    const { post } = await setup();
    const r = await post({ starts_at: "2025-12-31T23:55:00Z", ends_at: "2026-01-01T02:00:00+01:00", title: "Now-ish" });
    expect(r.status).toBe(201);
    expect(r.body.window).toMatchObject({ starts_at: "2025-12-31T23:55:00.000Z", ends_at: "2026-01-01T01:00:00.000Z", phase: "active" });
  });

  const BAD: Array<[string, Record<string, unknown>, string]> = [
    ["backdated more than 5 minutes", { starts_at: "2025-12-31T23:54:59Z", ends_at: iso(T0, 60), title: "x" }, "starts_at"],
    ["ends before it starts", { starts_at: iso(T0, 60), ends_at: iso(T0, 60), title: "x" }, "ends_at"],
    ["longer than 14 days", { starts_at: iso(T0, 60), ends_at: iso(T0, 60 + 14 * 1440 + 1), title: "x" }, "ends_at"],
    ["not a time", { starts_at: "tomorrow", ends_at: iso(T0, 60), title: "x" }, "starts_at"],
    ["a date without time", { starts_at: "2026-01-02", ends_at: iso(T0, 60 * 48), title: "x" }, "starts_at"],
    // The runtime's Date.parse rolls these over to another instant (2 March, the next day); they are typos.
    ["a day February does not have", { starts_at: "2026-02-30T02:00:00Z", ends_at: "2026-03-02T03:00:00Z", title: "x" }, "starts_at"],
    ["hour 24", { starts_at: "2026-01-02T24:00:00Z", ends_at: "2026-01-03T01:00:00Z", title: "x" }, "starts_at"],
    ["month 13", { starts_at: iso(T0, 60), ends_at: "2026-13-01T00:00:00Z", title: "x" }, "ends_at"],
    // Without a zone the runtime would read the machine's local time: the zone is part of the instant.
    ["no zone", { starts_at: "2026-01-02T02:00:00", ends_at: "2026-01-02T03:00:00Z", title: "x" }, "starts_at"],
    ["missing title", { starts_at: iso(T0, 60), ends_at: iso(T0, 120) }, "title"],
    ["empty title", { starts_at: iso(T0, 60), ends_at: iso(T0, 120), title: "" }, "title"],
    ["oversize title", { starts_at: iso(T0, 60), ends_at: iso(T0, 120), title: "x".repeat(201) }, "title"],
    ["wrong type", { starts_at: 1767225600, ends_at: iso(T0, 120), title: "x" }, "starts_at"],
    ["unknown field", { starts_at: iso(T0, 60), ends_at: iso(T0, 120), title: "x", exclude: true }, "exclude"],
  ];
  for (const [name, body, field] of BAD) {
    test(`400 invalid_payload: ${name}; nothing stored, nothing audited`, async () => {
      const { h, post } = await setup();
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.details.map((d: { field: string }) => d.field)).toContain(field);
      expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM status_maintenance_windows"))!.n).toBe(0);
      expect(await audits(h)).toEqual([]);
    });
  }

  test("malformed JSON is 400", async () => {
    const { h, auth } = await setup();
    const r = await h.json(PATH, jsonInit("POST", "{nope", auth));
    expect(r.status).toBe(400);
  });
});

describe("auth", () => {
  test("no token, a wrong token, or a partner's signature → 403 forbidden on every maintenance route", async () => {
    const { h } = await setup();
    const key = await createKey(h);
    const body = { starts_at: iso(T0, 60), ends_at: iso(T0, 120), title: "x" };
    const attempts: Array<[string, RequestInit]> = [
      [PATH, { method: "GET" }],
      [PATH, jsonInit("POST", body)],
      [`${PATH}/1`, { method: "DELETE" }],
      [PATH, { method: "GET", headers: { authorization: "Bearer " + "x".repeat(40) } }],
      [PATH, signedInit(h, key, "POST", PATH, { body })],
    ];
    for (const [path, init] of attempts) {
      const r = await h.json(path, init);
      expect(r.status).toBe(403);
      expect(r.body.error).toBe("forbidden");
    }
    expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM status_maintenance_windows"))!.n).toBe(0);
  });
});

describe("GET and DELETE", () => {
  test("lists newest first with pagination; delete removes the window and audits its full content", async () => {
    const { h, auth, post } = await setup();
    for (let i = 0; i < 3; i++) await post({ starts_at: iso(T0, 60 * (i + 1)), ends_at: iso(T0, 60 * (i + 1) + 30), title: `w${i}` });
    const page1 = await h.json(`${PATH}?limit=2`, { headers: auth });
    expect(page1.status).toBe(200);
    expect(page1.body.windows.map((w: any) => w.title)).toEqual(["w2", "w1"]);
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await h.json(`${PATH}?limit=2&cursor=${page1.body.pagination.next_cursor}`, { headers: auth });
    expect(page2.body.windows.map((w: any) => w.title)).toEqual(["w0"]);

    const del = await h.json(`${PATH}/2`, { method: "DELETE", headers: auth });
    expect(del.status).toBe(200);
    expect(del.body.window).toMatchObject({ id: 2, title: "w1" });
    const a = (await audits(h)).find((x) => x.action === "status.maintenance.delete")!;
    expect(a.target).toBe("2");
    expect(JSON.parse(a.details)).toMatchObject({ id: 2, title: "w1", starts_at: iso(T0, 120), ends_at: iso(T0, 150) });
    expect((await h.json(PATH, { headers: auth })).body.count).toBe(2);
  });

  test("DELETE of an unknown id is 404 (and audits nothing); a non-numeric id is 400", async () => {
    const { h, auth } = await setup();
    const missing = await h.json(`${PATH}/99`, { method: "DELETE", headers: auth });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("not_found");
    expect(await audits(h)).toEqual([]);
    expect((await h.json(`${PATH}/abc`, { method: "DELETE", headers: auth })).status).toBe(400);
    expect((await h.json(`${PATH}/0`, { method: "DELETE", headers: auth })).status).toBe(400);
  });

  test("bad list parameters are 400", async () => {
    const { h, auth } = await setup();
    expect((await h.json(`${PATH}?limit=0`, { headers: auth })).status).toBe(400);
    expect((await h.json(`${PATH}?cursor=junk`, { headers: auth })).status).toBe(400);
  });
});

describe("what the public sees", () => {
  test("active and upcoming windows in the status answer; snapshots taken inside one are marked", async () => {
    const { h, post } = await setup();
    await post({ starts_at: iso(T0, 30), ends_at: iso(T0, 90), title: "Upgrade" });
    await post({ starts_at: iso(T0, 60 * 24 * 20), ends_at: iso(T0, 60 * 24 * 20 + 60), title: "Far away" }); // > 14 days ahead
    let s = (await h.json("/api/public/system-status")).body.maintenance;
    expect(s).toEqual({
      active: false,
      windows: [{ id: 1, starts_at: iso(T0, 30), ends_at: iso(T0, 90), title: "Upgrade", description: null, phase: "scheduled" }],
    });
    h.clock.set(iso(T0, 45));
    s = (await h.json("/api/public/system-status")).body.maintenance;
    expect(s.active).toBe(true);
    expect(s.windows[0].phase).toBe("active");
    await h.ctx.jobs.runNow("status-snapshot");
    expect((await h.ctx.store.get<{ in_maintenance: number }>("SELECT in_maintenance FROM status_snapshots"))!.in_maintenance).toBe(1);
  });
});
