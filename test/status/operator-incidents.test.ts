import { afterEach, describe, expect, test } from "bun:test";
import type { Level } from "../../src/status/checks/types";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import { storeSnapshot } from "../../src/status/snapshots";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken, createKey } from "../support/partner";
import { iso, operator } from "./support";

// Operator-written incidents through the admin routes: create, updates through the states, resolve, edit;
// auth, validation, idempotency, audit rows; and what the public endpoints show of them.

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const T0 = "2026-02-01T10:00:00.000Z";
const BASE = "/admin/status/incidents";
const FIRST = { title: "Webhook deliveries delayed", message: "Deliveries to some receivers are late.", severity: "warn", components: ["webhooks"] };

async function setup() {
  h = await openTestApp({ clock: new FakeClock(T0) });
  return { h, admin: operator(h, await createAdminToken(h)) };
}

const audits = (h: TestApp) =>
  h.ctx.store.all<{ actor: string; action: string; target: string; details: string }>(
    "SELECT actor, action, target, details FROM admin_audit WHERE action LIKE 'status.incident.%' ORDER BY id",
  );

describe("POST /admin/status/incidents and its updates", () => {
  test("investigating → identified → monitoring → resolved: each update kept with its time, the incident ends at resolved", async () => {
    const { h, admin } = await setup();
    const created = await admin.post(BASE, FIRST);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ success: true, replayed: false });
    const id = created.body.incident.id;
    expect(created.body.incident).toMatchObject({
      id,
      source: "operator",
      title: "Webhook deliveries delayed",
      started_at: T0,
      ended_at: null,
      severity: "warn",
      current_severity: "warn",
      status: "open",
      state: "investigating",
      checks: {},
      summary: {},
      components: ["webhooks"],
      updates: [{ state: "investigating", message: "Deliveries to some receivers are late.", severity: "warn", created_at: T0 }],
    });
    const steps: Array<[number, string, Record<string, unknown>]> = [
      [10, "identified", { message: "A slow receiver holds the queue.", severity: "bad" }],
      [20, "monitoring", { message: "Per-host limits raised." }],
      [45, "resolved", { message: "Backlog drained." }],
    ];
    for (const [minute, state, rest] of steps) {
      h.clock.set(iso(T0, minute));
      const r = await admin.post(`${BASE}/${id}/updates`, { state, ...rest });
      expect(r.status).toBe(201);
      expect(r.body.incident.state).toBe(state);
    }
    const final = await h.json(`/api/public/system-status/incidents/${id}`);
    expect(final.status).toBe(200);
    expect(final.body.incident).toMatchObject({
      status: "resolved",
      state: "resolved",
      ended_at: iso(T0, 45),
      severity: "bad", // the worst given, never lowered
      current_severity: null,
      duration_minutes: 45,
    });
    // Newest first, each with the state it moved to, its message and its time.
    expect(final.body.incident.updates.map((u: any) => [u.state, u.created_at, u.severity])).toEqual([
      ["resolved", iso(T0, 45), null],
      ["monitoring", iso(T0, 20), null],
      ["identified", iso(T0, 10), "bad"],
      ["investigating", T0, "warn"],
    ]);
    // Audited in the same transactions: one create, three updates, naming the operator.
    expect((await audits(h)).map((a) => [a.action, a.target, a.actor])).toEqual([
      ["status.incident.create", String(id), "admin:test-operator#1"],
      ["status.incident.update", String(id), "admin:test-operator#1"],
      ["status.incident.update", String(id), "admin:test-operator#1"],
      ["status.incident.update", String(id), "admin:test-operator#1"],
    ]);
    // Nothing after resolved: a new problem is a new incident.
    const late = await admin.post(`${BASE}/${id}/updates`, { state: "monitoring", message: "again?" });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe("conflict");
  });

  test("listed beside automatic incidents (one id space) in the public list, the status answer and the admin list", async () => {
    const { h, admin } = await setup();
    const checks = (degraded: Record<string, Level>) =>
      Object.fromEntries(CHECK_NAMES.map((n) => [n, { status: degraded[n] ?? ("ok" as Level), summary: "x" }]));
    await storeSnapshot(h.ctx, { generated_at: iso(T0, -5), overall: "warn", policy_version: "t", checks: checks({ jobs: "warn" }) }, null); // automatic incident 1
    const op = await admin.post(BASE, { ...FIRST, started_at: iso(T0, -2) });
    expect(op.body.incident.id).toBe(2);
    const pub = await h.json("/api/public/system-status/incidents");
    expect(pub.body.incidents.map((i: any) => [i.id, i.source, i.title])).toEqual([
      [2, "operator", "Webhook deliveries delayed"],
      [1, "automatic", "Degraded service: jobs"],
    ]);
    expect(pub.body.incidents[1]).toMatchObject({ state: null, updates: [], components: ["jobs"] });
    const status = await h.json("/api/public/system-status");
    expect(status.body.open_incident.id).toBe(2);
    expect(status.body.open_incidents.map((i: any) => i.id)).toEqual([2, 1]);
    expect(status.body.overall).toBe("ok"); // the checks' verdict: an operator incident does not rewrite it
    expect(status.body.components.find((c: any) => c.id === "webhooks")).toMatchObject({ status: "ok", open_incident_ids: [2], reported_severity: "warn" });
    const list = await admin.get(`${BASE}?source=operator`);
    expect(list.status).toBe(200);
    expect(list.body.incidents.map((i: any) => i.id)).toEqual([2]);
    // The filters applied are echoed beside the page.
    expect(list.body.query).toEqual({ limit: 50, offset: 0, cursor: null, source: "operator", status: null });
    expect((await admin.get(`${BASE}?status=open&limit=1`)).body).toMatchObject({ count: 1, pagination: { has_more: true } });
    expect((await admin.get(`${BASE}/1`)).body.incident.source).toBe("automatic");
    // An automatic incident is the checks' to close: updates are refused with a pointer.
    const refused = await admin.post(`${BASE}/1/updates`, { state: "identified", message: "we know" });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain("opened by the status checks");
  });

  test("Idempotency-Key: the same key and body change nothing (200, replayed); another body is a 409", async () => {
    const { h, admin } = await setup();
    const key = { "idempotency-key": "create-7f3a" };
    const first = await admin.post(BASE, FIRST, key);
    expect(first.status).toBe(201);
    const again = await admin.post(BASE, FIRST, key);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toMatchObject({ replayed: true, incident: { id: first.body.incident.id } });
    const other = await admin.post(BASE, { ...FIRST, title: "Something else" }, key);
    expect(other.status).toBe(409);
    expect(other.body.details).toEqual({ idempotency_key: "create-7f3a" });
    const id = first.body.incident.id;
    const update = { state: "identified", message: "Found it." };
    expect((await admin.post(`${BASE}/${id}/updates`, update, { "idempotency-key": "u1" })).status).toBe(201);
    const replay = await admin.post(`${BASE}/${id}/updates`, update, { "idempotency-key": "u1" });
    expect(replay.status).toBe(200);
    expect(replay.body.incident.updates).toHaveLength(2);
    expect((await admin.post(`${BASE}/${id}/updates`, { ...update, message: "Other" }, { "idempotency-key": "u1" })).status).toBe(409);
    const count = await h.ctx.store.get("SELECT (SELECT count(*) FROM status_incidents) AS i, (SELECT count(*) FROM status_incident_updates) AS u");
    expect(count).toEqual({ i: 1, u: 2 });
    expect((await admin.post(BASE, FIRST, { "idempotency-key": "bad key with spaces" })).status).toBe(400);
  });

  test("PATCH corrects the title and components (audited, before and after); an unchanged edit changes nothing", async () => {
    const { h, admin } = await setup();
    const id = (await admin.post(BASE, FIRST)).body.incident.id;
    h.clock.set(iso(T0, 3));
    const r = await admin.patch(`${BASE}/${id}`, { title: "Webhook deliveries delayed for some receivers", components: ["webhooks", "api"] });
    expect(r.status).toBe(200);
    expect(r.body.incident).toMatchObject({ title: "Webhook deliveries delayed for some receivers", components: ["webhooks", "api"], updated_at: iso(T0, 3) });
    expect(r.body.incident.updates).toHaveLength(1); // the history is not edited
    const edit = (await audits(h)).find((a) => a.action === "status.incident.edit")!;
    expect(JSON.parse(edit.details)).toEqual({
      before: { title: "Webhook deliveries delayed", components: ["webhooks"] },
      after: { title: "Webhook deliveries delayed for some receivers", components: ["webhooks", "api"] },
    });
    expect((await admin.patch(`${BASE}/${id}`, { title: "Webhook deliveries delayed for some receivers" })).status).toBe(200);
    expect((await audits(h)).filter((a) => a.action === "status.incident.edit")).toHaveLength(1);
    expect((await admin.patch(`${BASE}/${id}`, {})).status).toBe(400);
    expect((await admin.patch(`${BASE}/999`, { title: "x" })).status).toBe(404);
  });

  const BAD: Array<[string, unknown]> = [
    ["no title", { message: "m", severity: "warn" }],
    ["empty message", { title: "t", message: "", severity: "warn" }],
    ["unknown severity", { title: "t", message: "m", severity: "ok" }],
    ["unknown state", { title: "t", message: "m", severity: "warn", state: "fixed" }],
    ["unknown component", { title: "t", message: "m", severity: "warn", components: ["database"] }],
    ["unknown field", { title: "t", message: "m", severity: "warn", impact: "major" }],
    ["started in the future", { title: "t", message: "m", severity: "warn", started_at: iso(T0, 5) }],
    ["started 31 days ago", { title: "t", message: "m", severity: "warn", started_at: iso(T0, -31 * 1440) }],
    ["started_at not a time", { title: "t", message: "m", severity: "warn", started_at: "yesterday" }],
    ["started_at a day November does not have", { title: "t", message: "m", severity: "warn", started_at: "2025-11-31T10:00:00Z" }],
    ["started_at without a zone", { title: "t", message: "m", severity: "warn", started_at: "2025-12-31T10:00:00" }],
  ];
  for (const [name, body] of BAD) {
    test(`400 invalid_payload: ${name}; nothing written`, async () => {
      const { h, admin } = await setup();
      const r = await admin.post(BASE, body);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect((await h.ctx.store.get<any>("SELECT count(*) AS n FROM status_incidents")).n).toBe(0);
    });
  }

  test("updates: 404 for an unknown incident, 400 for a bad state; every admin route is 403 without the admin token", async () => {
    const { h, admin } = await setup();
    expect((await admin.post(`${BASE}/42/updates`, { state: "identified", message: "m" })).status).toBe(404);
    const id = (await admin.post(BASE, FIRST)).body.incident.id;
    expect((await admin.post(`${BASE}/${id}/updates`, { state: "open", message: "m" })).status).toBe(400);
    const partner = await createKey(h);
    for (const [method, path] of [
      ["GET", BASE],
      ["POST", BASE],
      ["GET", `${BASE}/${id}`],
      ["POST", `${BASE}/${id}/updates`],
      ["PATCH", `${BASE}/${id}`],
    ] as const) {
      for (const headers of [{}, { authorization: "Bearer not-a-real-admin-token-000" }, { authorization: `Bearer ${partner.secret}` }] as Array<
        Record<string, string>
      >) {
        const r = await h.json(path, {
          method,
          headers: { ...headers, "content-type": "application/json" },
          body: method === "GET" ? undefined : JSON.stringify(FIRST),
        });
        expect([method, path, r.status, r.body.error]).toEqual([method, path, 403, "forbidden"]);
      }
    }
  });

  test("a public incident id that does not exist is a 404; a bad id is a 400", async () => {
    await setup();
    expect((await h!.json("/api/public/system-status/incidents/5")).status).toBe(404);
    expect((await h!.json("/api/public/system-status/incidents/0")).status).toBe(400);
    expect((await h!.json("/api/public/system-status/incidents/abc")).status).toBe(400);
  });
});
