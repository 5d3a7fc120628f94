// Docs audit: docs/ops-digest.md's exports, chart bounds and suppression rules against the real app.
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
  h.clock.set("2026-02-01T12:30:00.000Z");
  return { authorization: `Bearer ${await createAdminToken(h)}` };
}

describe("docs/ops-digest.md", () => {
  // docs/ops-digest.md:164-200 — export.json params echo, columns, count, attachment name; CSV header and name
  test("export.json and export.csv", async () => {
    const auth = await admin();
    const r = await h.request("/admin/ops/403-digest/export.json?hours=3&group_limit=1", { headers: auth });
    expect(r.status).toBe(200);
    const b = (await r.json()) as any;
    expect(b.params).toEqual({
      hours: 3,
      baseline_mode: "rolling_24h",
      new_path_lookback_days: 14,
      spike_consecutive_hours: 2,
      spike_ratio: 3,
      spike_min_count: 10,
      new_min_count: 3,
      group_limit: 1,
    });
    expect(b.columns).toEqual([
      "section",
      "hour",
      "dimension",
      "value",
      "kind",
      "first_hour",
      "last_hour",
      "hours",
      "requests",
      "forbidden",
      "suppressed",
      "observed",
      "baseline",
      "ratio",
      "rule_id",
      "why",
    ]);
    expect(b.count).toBe(b.rows.length);
    expect(b.rows.filter((x: any) => x.section === "hour").map((x: any) => x.hour)).toEqual(["2026-02-01T10", "2026-02-01T11", "2026-02-01T12"]);
    expect(r.headers.get("content-disposition")).toBe('attachment; filename="403-digest-2026-02-01T10-2026-02-01T12.json"');
    const c = await h.request("/admin/ops/403-digest/export.csv?hours=3&group_limit=1", { headers: auth });
    expect(c.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(c.headers.get("content-disposition")).toBe('attachment; filename="403-digest-2026-02-01T10-2026-02-01T12.csv"');
    const lines = (await c.text()).split("\r\n");
    expect(lines[0]).toBe("section,hour,dimension,value,kind,first_hour,last_hour,hours,requests,forbidden,suppressed,observed,baseline,ratio,rule_id,why");
    expect(lines[1]).toMatch(/^hour,2026-02-01T10,,,,,,,0,0,0,0,/);
  });

  // docs/ops-digest.md:206-207 — probe-trend.png: w 320–2000 default 960, h 200–1200 default 420
  test("probe-trend.png size", async () => {
    const auth = await admin();
    const size = async (q: string) => {
      const r = await h.request(`/admin/ops/403-digest/probe-trend.png${q}`, { headers: auth });
      if (r.status !== 200) return r.status;
      const dv = new DataView(new Uint8Array(await r.arrayBuffer()).buffer);
      return [dv.getUint32(16), dv.getUint32(20)];
    };
    expect(await size("")).toEqual([960, 420]);
    expect(await size("?w=320&h=200")).toEqual([320, 200]);
    expect(await size("?w=2000&h=1200")).toEqual([2000, 1200]);
    expect(await size("?w=319")).toBe(400);
    expect(await size("?h=1201")).toBe(400);
  });

  // docs/ops-digest.md:225-262 — suppressions: create 201, prefix normalised, list echo, bounds, revoke 404/409
  test("suppression rules", async () => {
    const auth = await admin();
    const body = {
      client_prefix: "203.0.113.7/24",
      reason: "Quarterly pen test by Acme Security, ticket OPS-112",
      owner: "secops@example.com",
      expires_at: "2026-02-08T00:00:00Z",
    };
    const c = await h.json("/admin/ops/403-digest/suppressions", jsonInit("POST", body, auth));
    expect(c.status).toBe(201);
    const rule = c.body.rule;
    expect(rule).toMatchObject({
      client_prefix: "203.0.113.0/24",
      path_pattern: null,
      partner_key_id: null,
      expires_at: "2026-02-08T00:00:00.000Z",
      revoked_at: null,
      state: "active",
    });
    const l = await h.json("/admin/ops/403-digest/suppressions?state=active", { headers: auth });
    expect(l.body.query).toEqual({ limit: 50, offset: 0, cursor: null, state: "active" });
    expect(l.body.count).toBe(1);
    const none = await h.json("/admin/ops/403-digest/suppressions", jsonInit("POST", { reason: "r", owner: "o", expires_at: "2026-02-08T00:00:00Z" }, auth));
    expect([none.status, none.body.details?.[0]?.field]).toEqual([400, "body"]);
    const far = await h.json("/admin/ops/403-digest/suppressions", jsonInit("POST", { ...body, expires_at: "2026-05-03T00:00:00Z" }, auth));
    expect([far.status, far.body.details?.[0]?.field]).toEqual([400, "body.expires_at"]);
    const past = await h.json("/admin/ops/403-digest/suppressions", jsonInit("POST", { ...body, expires_at: "2026-01-31T00:00:00Z" }, auth));
    expect([past.status, past.body.details?.[0]?.field]).toEqual([400, "body.expires_at"]);
    const badPrefix = await h.json("/admin/ops/403-digest/suppressions", jsonInit("POST", { ...body, client_prefix: "203.0.113.0/16" }, auth));
    expect([badPrefix.status, badPrefix.body.details?.[0]?.field]).toEqual([400, "body.client_prefix"]);
    const v6 = await h.json("/admin/ops/403-digest/suppressions", jsonInit("POST", { ...body, client_prefix: "2001:db8:1:2::5/48" }, auth));
    expect(v6.status).toBe(201);
    expect(v6.body.rule.client_prefix).toBe("2001:db8:1::/48");
    const r1 = await h.json(`/admin/ops/403-digest/suppressions/${rule.id}/revoke`, { method: "POST", headers: auth });
    expect(r1.status).toBe(200);
    const r2 = await h.json(`/admin/ops/403-digest/suppressions/${rule.id}/revoke`, { method: "POST", headers: auth });
    expect([r2.status, r2.body.error]).toEqual([409, "conflict"]);
    const r3 = await h.json("/admin/ops/403-digest/suppressions/9999/revoke", { method: "POST", headers: auth });
    expect([r3.status, r3.body.error]).toEqual([404, "not_found"]);
    expect((await h.json("/admin/ops/403-digest/suppressions?state=revoked", { headers: auth })).body.count).toBe(1);
    expect((await h.json("/admin/ops/403-digest/suppressions?state=gone", { headers: auth })).status).toBe(400);
    expect((await h.json("/admin/ops/403-digest/suppressions/export.json", { headers: auth })).status).toBe(200);
  });
});
