import { afterEach, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { PNG } from "pngjs";
import type { RequestLogEntry } from "../../src/http/request-log/log";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";

// Synthetic 403 traffic, written through the real request log (so through its rollups), then read back by the
// digest under each baseline mode. Now is 2026-02-01T12:30Z; the default window is 2026-01-31T13 … 2026-02-01T12.
//
// Background, every hour for 30 days: 2 403s on /api/partner/users/:id (key hk_a, 198.51.100.0/24), 1 on
//   /api/salutes/credit (key hk_b, 192.0.2.0/24), 4 non-403 requests.
// Nightly job: 30 403s on /api/salutes/ledger (key hk_c, 192.0.2.0/24) at 02:00 every day, today included.
// Planted spike: 60 more 403s on /api/partner/users/:id from 198.51.100.0/24 at 09 and 10 today.
// New path: 5 403s on /api/partner/webhooks/:webhook_id at 07 today (never before).
// Scanner: 40 403s on /admin/backups (no key) from 100.64.5.0/24 at 11 today — the client the test suppresses.

const NOW = "2026-02-01T12:30:00.000Z";
const USERS = "/api/partner/users/:id";
const LEDGER = "/api/salutes/ledger";
const WEBHOOKS = "/api/partner/webhooks/:webhook_id";
const SCANNER = "100.64.5.0/24";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

function entry(at: string, route: string, status: number, key: string | null, ip: string, n: number): RequestLogEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    at,
    method: "GET",
    route,
    status,
    latencyUs: 100,
    partnerKeyId: key,
    clientIp: ip,
    requestId: `req_${at}_${route}_${i}`,
    errorCode: status === 403 ? "forbidden" : null,
  }));
}

async function seed() {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  const nowHour = Date.parse("2026-02-01T12:00:00.000Z");
  const hourIso = (back: number, minute = 5) => new Date(nowHour - back * 3_600_000 + minute * 60_000).toISOString();
  for (let back = 30 * 24; back >= 0; back--) {
    const at = hourIso(back);
    const rows = [
      ...entry(at, USERS, 403, "hk_a", `198.51.100.${back % 200}`, 2),
      ...entry(at, "/api/salutes/credit", 403, "hk_b", "192.0.2.7", 1),
      ...entry(at, "/api/status", 200, null, "192.0.2.8", 4),
    ];
    if (new Date(at).getUTCHours() === 2) rows.push(...entry(at, LEDGER, 403, "hk_c", "192.0.2.9", 30));
    for (const r of rows) h.ctx.requestLog.record(r);
    await h.ctx.requestLog.flush();
  }
  for (const r of [
    ...entry(hourIso(3, 20), USERS, 403, "hk_a", "198.51.100.9", 60),
    ...entry(hourIso(2, 20), USERS, 403, "hk_a", "198.51.100.10", 60),
    ...entry(hourIso(5, 30), WEBHOOKS, 403, "hk_a", "198.51.100.11", 5),
    ...entry(hourIso(1, 40), "/admin/backups", 403, null, "100.64.5.77", 40),
  ])
    h.ctx.requestLog.record(r);
  await h.ctx.requestLog.flush();
  return auth;
}

type Finding = {
  kind: string;
  dimension: string;
  value: string;
  first_hour: string;
  last_hour: string;
  observed: number;
  baseline: number;
  ratio: number;
  why: string;
  rule_id?: number;
};
const pick = (list: Finding[], kind: string, dimension: string, value: string) =>
  list.filter((f) => f.kind === kind && f.dimension === dimension && f.value === value);

async function digest(auth: Record<string, string>, query = "") {
  const res = await h.json(`/admin/ops/403-digest${query}`, { headers: auth });
  expect(res.status).toBe(200);
  return res.body as { findings: Finding[]; suppressed: Finding[]; hours: Array<Record<string, any>>; groups: Record<string, any>; [k: string]: any };
}

async function suppressScanner(auth: Record<string, string>, expiresAt = "2026-02-02T00:00:00Z") {
  const res = await h.json(
    "/admin/ops/403-digest/suppressions",
    jsonInit("POST", { client_prefix: "100.64.5.1/24", reason: "pen-test vendor, ticket OPS-7", owner: "secops", expires_at: expiresAt }, auth),
  );
  expect(res.status).toBe(201);
  return res.body.rule as { id: number; client_prefix: string; state: string };
}

describe.each(["rolling_24h", "same_hour_yesterday", "same_weekday_hour_4w"])("baseline_mode=%s", (mode) => {
  test("flags the planted spike as sustained, the new path, and suppresses the scanner under its rule", async () => {
    const auth = await seed();
    const before = await digest(auth, `?baseline_mode=${mode}`);
    // Without a rule the scanner is a finding like any other.
    expect(pick(before.findings, "new_client", "client_prefix", SCANNER)).toHaveLength(1);
    expect(pick(before.findings, "new_path", "route", "/admin/backups")).toHaveLength(1);

    const rule = await suppressScanner(auth);
    expect(rule).toMatchObject({ client_prefix: SCANNER, state: "active" });
    const d = await digest(auth, `?baseline_mode=${mode}`);
    expect(d.params.baseline_mode).toBe(mode);

    for (const dimension of ["route", "partner_key", "client_prefix"]) {
      const value = { route: USERS, partner_key: "hk_a", client_prefix: "198.51.100.0/24" }[dimension]!;
      const [spike] = pick(d.findings, "sustained_spike", dimension, value);
      expect(spike).toMatchObject({ first_hour: "2026-02-01T09", last_hour: "2026-02-01T10", hours: 2 });
      expect(spike!.observed).toBe(124); // 2 × (2 background + 60 planted)
      expect(spike!.ratio).toBeGreaterThanOrEqual(3);
      expect(spike!.why).toContain(mode);
    }
    const [fresh] = pick(d.findings, "new_path", "route", WEBHOOKS);
    expect(fresh).toMatchObject({ observed: 5, baseline: 0, first_hour: "2026-02-01T07", hours: 1 });
    expect(fresh!.why).toContain("none in the 14 days before it");

    // Nothing of the scanner's is left among the findings; each of its findings is listed under the rule.
    expect(d.findings.filter((f) => f.value === SCANNER || f.value === "/admin/backups")).toEqual([]);
    for (const [kind, dimension, value] of [
      ["new_client", "client_prefix", SCANNER],
      ["new_path", "route", "/admin/backups"],
      ["spike", "client_prefix", SCANNER],
      ["spike", "route", "/admin/backups"],
    ] as const) {
      const found = pick(d.suppressed, kind, dimension, value);
      expect(found, `${kind} ${value}`).toHaveLength(1);
      expect(found[0]!.rule_id).toBe(rule.id);
    }
    const hour11 = d.hours.find((x) => x.hour === "2026-02-01T11")!;
    expect(hour11).toMatchObject({ forbidden: 43, suppressed: 40, observed: 3 });
    expect(d.groups.client_prefix.items.find((g: { value: string }) => g.value === SCANNER)).toMatchObject({ count: 40, suppressed: 40 });

    // The nightly job: a spike against the last 24 hours, but the same as yesterday and as the last 4 weeks.
    const nightly = pick(d.findings, "spike", "route", LEDGER);
    if (mode === "rolling_24h") {
      expect(nightly).toHaveLength(1);
      expect(nightly[0]).toMatchObject({ first_hour: "2026-02-01T02", observed: 30, baseline: 1.25, ratio: 24 });
    } else {
      expect(nightly).toEqual([]);
    }
  });
});

test("an expired or revoked rule stops applying", async () => {
  const auth = await seed();
  const rule = await suppressScanner(auth, "2026-02-01T13:00:00Z");
  expect(pick((await digest(auth)).suppressed, "new_client", "client_prefix", SCANNER)).toHaveLength(1);
  h.clock.set("2026-02-01T13:00:00.000Z"); // the rule's expires_at: no longer in force
  const later = await digest(auth);
  expect(later.active_rules).toEqual([]);
  expect(pick(later.findings, "new_client", "client_prefix", SCANNER)).toHaveLength(1);
  expect(later.suppressed).toEqual([]);
  const list = await h.json("/admin/ops/403-digest/suppressions?state=expired", { headers: auth });
  expect(list.body.rules.map((r: { id: number; state: string }) => [r.id, r.state])).toEqual([[rule.id, "expired"]]);

  h.clock.set(NOW);
  const revoked = await h.json(`/admin/ops/403-digest/suppressions/${rule.id}/revoke`, { method: "POST", headers: auth });
  expect(revoked.status).toBe(200);
  expect(revoked.body.rule).toMatchObject({ state: "revoked", revoked_at: NOW });
  expect(pick((await digest(auth)).findings, "new_client", "client_prefix", SCANNER)).toHaveLength(1);
  expect((await h.json(`/admin/ops/403-digest/suppressions/${rule.id}/revoke`, { method: "POST", headers: auth })).status).toBe(409);
  expect((await h.json("/admin/ops/403-digest/suppressions/999/revoke", { method: "POST", headers: auth })).status).toBe(404);

  const audit = await h.ctx.store.all("SELECT action, target FROM admin_audit WHERE action LIKE 'ops.403_suppression.%' ORDER BY id");
  expect(audit).toEqual([
    { action: "ops.403_suppression.create", target: `ops_403_suppression:${rule.id}` },
    { action: "ops.403_suppression.revoke", target: `ops_403_suppression:${rule.id}` },
  ]);
  const exported = await h.json("/admin/ops/403-digest/suppressions/export.json", { headers: auth });
  expect(exported.status).toBe(200);
  expect(exported.body).toMatchObject({ count: 1, rules: [{ id: rule.id, client_prefix: SCANNER, state: "revoked", owner: "secops" }] });
});

test("export.csv parses with csv-parse and equals export.json row for row", async () => {
  const auth = await seed();
  await suppressScanner(auth);
  const json = await h.json("/admin/ops/403-digest/export.json?hours=48&baseline_mode=same_hour_yesterday", { headers: auth });
  expect(json.status).toBe(200);
  expect(json.headers.get("content-disposition")).toBe('attachment; filename="403-digest-2026-01-30T13-2026-02-01T12.json"');
  const res = await h.request("/admin/ops/403-digest/export.csv?hours=48&baseline_mode=same_hour_yesterday", { headers: auth });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  expect(res.headers.get("content-disposition")).toBe('attachment; filename="403-digest-2026-01-30T13-2026-02-01T12.csv"');
  const records = parse(await res.text(), { columns: false }) as string[][];
  const columns = json.body.columns as string[];
  expect(records[0]).toEqual(columns);
  const rows = json.body.rows as Array<Record<string, string | number | null>>;
  expect(records.length - 1).toBe(rows.length);
  expect(records.slice(1)).toEqual(rows.map((r) => columns.map((c) => (r[c] === null ? "" : String(r[c])))));
  const sections = new Set(rows.map((r) => r.section));
  expect([...sections]).toEqual(["hour", "group", "finding", "suppressed"]);
  expect(rows.filter((r) => r.section === "hour")).toHaveLength(48);
});

test("probe-trend.png is a PNG of the stated size", async () => {
  const auth = await seed();
  for (const [query, w, hgt] of [
    ["", 960, 420],
    ["?w=480&h=240&hours=72&baseline_mode=same_weekday_hour_4w", 480, 240],
  ] as const) {
    const res = await h.request(`/admin/ops/403-digest/probe-trend.png${query}`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
    expect([png.width, png.height]).toEqual([w, hgt]);
    // Not blank: the chart draws bars in its blue and the baseline in orange.
    const colours = new Set<string>();
    for (let i = 0; i < png.data.length; i += 4) colours.add(`${png.data[i]},${png.data[i + 1]},${png.data[i + 2]}`);
    expect(colours.has("66,133,244")).toBe(true);
    expect(colours.has("244,160,0")).toBe(true);
  }
});

test("bad parameters are 400 invalid_query naming the parameter", async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  const cases: Array<[string, string]> = [
    ["/admin/ops/403-digest?hours=0", "query.hours"],
    ["/admin/ops/403-digest?hours=169", "query.hours"],
    ["/admin/ops/403-digest?hours=1.5", "query.hours"],
    ["/admin/ops/403-digest?baseline_mode=weekly", "query.baseline_mode"],
    ["/admin/ops/403-digest?new_path_lookback_days=91", "query.new_path_lookback_days"],
    ["/admin/ops/403-digest?spike_consecutive_hours=0", "query.spike_consecutive_hours"],
    ["/admin/ops/403-digest?spike_ratio=1e308", "query.spike_ratio"],
    ["/admin/ops/403-digest/export.csv?spike_min_count=-1", "query.spike_min_count"],
    ["/admin/ops/403-digest/export.json?new_min_count=abc", "query.new_min_count"],
    ["/admin/ops/403-digest/probe-trend.png?w=10", "query.w"],
    ["/admin/ops/403-digest/probe-trend.png?h=Infinity", "query.h"],
    ["/admin/ops/403-digest/suppressions?limit=201", "query.limit"],
    ["/admin/ops/403-digest/suppressions?state=gone", "query.state"],
  ];
  for (const [path, field] of cases) {
    const res = await h.json(path, { headers: auth });
    expect(res.status, path).toBe(400);
    expect(res.body.error).toBe("invalid_query");
    expect(
      res.body.details.map((d: { field: string }) => d.field),
      path,
    ).toContain(field);
  }
  const post = (body: unknown) => h.json("/admin/ops/403-digest/suppressions", jsonInit("POST", body, auth));
  const base = { reason: "r", owner: "o", expires_at: "2026-02-05T00:00:00Z" };
  for (const [body, field] of [
    [base, "body"],
    [{ ...base, client_prefix: "203.0.113.0/16" }, "body.client_prefix"],
    [{ ...base, path_pattern: "/x", expires_at: "2026-01-01T00:00:00Z" }, "body.expires_at"],
    [{ ...base, path_pattern: "/x", expires_at: "2026-06-01T00:00:00Z" }, "body.expires_at"],
    [{ ...base, path_pattern: "/x", expires_at: "soon" }, "body.expires_at"],
  ] as const) {
    const res = await post(body);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(res.body.error).toBe("invalid_payload");
    expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
  }
  const noReason = await post({ path_pattern: "/x", owner: "o", expires_at: "2026-02-05T00:00:00Z" });
  expect([noReason.status, noReason.body.error]).toEqual([400, "invalid_payload"]);
  expect(await h.ctx.store.get("SELECT count(*) AS n FROM ops_403_suppressions")).toEqual({ n: 0 });
});

test("every digest route is 403 without the admin token", async () => {
  h = await openTestApp({ clock: new FakeClock(NOW) });
  const routes: Array<[string, string]> = [
    ["GET", "/admin/ops/403-digest"],
    ["GET", "/admin/ops/403-digest/export.json"],
    ["GET", "/admin/ops/403-digest/export.csv"],
    ["GET", "/admin/ops/403-digest/probe-trend.png"],
    ["GET", "/admin/ops/403-digest/suppressions"],
    ["POST", "/admin/ops/403-digest/suppressions"],
    ["POST", "/admin/ops/403-digest/suppressions/1/revoke"],
    ["GET", "/admin/ops/403-digest/suppressions/export.json"],
  ];
  for (const [method, path] of routes) {
    for (const headers of [{}, { authorization: "Bearer not-a-real-admin-token-at-all" }] as Array<Record<string, string>>) {
      const init =
        method === "POST" ? jsonInit("POST", { path_pattern: "/x", reason: "r", owner: "o", expires_at: "2026-02-05T00:00:00Z" }, headers) : { headers };
      const res = await h.json(path, init);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toBe("forbidden");
    }
  }
});
