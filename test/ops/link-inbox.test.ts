import { afterEach, describe, expect, test } from "bun:test";
import { describeConfig } from "../../src/config";
import { linkInboxSender } from "../../src/ops/link-inbox/outbox";
import { redactTarget } from "../../src/ops/link-inbox/notify";
import { signedInCookie } from "../support/console";
import { createTestApp, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";
import { iso, operator } from "../status/support";
import { plantAlertRun } from "./support";
import { testOn } from "../support/skipped";

// The link inbox end to end: messages queued by real producers (the admin status routes, ops_alert_runs rows),
// sent by the sender to a real receiver on 127.0.0.1, every attempt and skip read back from ops_link_events and
// the two read-models. Time moves only with the fake clock; the sender is run by hand (the job's body).

const T0 = "2026-04-01T10:00:00.000Z";
const SECRET_PATH = "/services/T0001/B0002/s3cr3tXYZ";
const SUMMARY = "/admin/ops/link-inbox/verification-summary.json";
const RESOLVED = "/admin/ops/digest/resolved-verification.json";

let h: TestApp;
let receivers: Receiver[] = [];
afterEach(async () => {
  await h?.close();
  for (const r of receivers) r.stop();
  receivers = [];
});

type Behavior = Parameters<Receiver["then"]>[0];
function receiver(...script: Behavior[]) {
  return receiverWith({ status: 200, body: "ok" }, ...script);
}
function receiverWith(fallback: Behavior, ...script: Behavior[]) {
  const r = startReceiver(fallback);
  r.then(...script);
  receivers.push(r);
  return r;
}

async function setup(urls: string[], env: Record<string, string> = {}) {
  h = await openTestApp({
    clock: new FakeClock(T0),
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
      LINK_INBOX_WEBHOOK_URLS: urls.join(","),
      LINK_INBOX_TIMEOUT_MS: "300",
      LINK_INBOX_RETRY_BASE_SECONDS: "30",
      LINK_INBOX_MAX_ATTEMPTS: "3",
      ...env,
    },
  });
  const token = await createAdminToken(h);
  const auth = { authorization: `Bearer ${token}` };
  return { token, admin: operator(h, token), get: (path: string, headers: Record<string, string> = {}) => h.json(path, { headers: { ...auth, ...headers } }) };
}

const run = () => linkInboxSender(h.ctx).runOnce();
const events = () => h.ctx.store.all<Record<string, any>>("SELECT * FROM ops_link_events ORDER BY id");
const outbox = () => h.ctx.store.all<Record<string, any>>("SELECT * FROM ops_link_outbox ORDER BY id");
const alertRun = (name: string, status = "fail", source = "status") =>
  plantAlertRun(h.ctx.store, { runId: "r1", at: h.clock.now().toISOString(), source, name, status, value: "3" });

describe("link-inbox delivery", () => {
  test("a 503 then a 200: two attempts recorded as 5xx then 2xx, retried on the backoff schedule; the body is Slack and Discord JSON with a link", async () => {
    const r = receiver({ status: 503 });
    await setup([r.url(SECRET_PATH)]);
    await alertRun("database");
    await alertRun("jobs", "pass"); // a passing run is no alert
    expect(await run()).toBe(1);
    const label = redactTarget(r.url(SECRET_PATH));
    expect(label).toMatch(/^127\.0\.0\.1:\d+\/services\/…#[0-9a-f]{6}$/);
    expect(await outbox()).toMatchObject([
      { event: "alert.fired", issue_id: "alert:status:database", target: label, status: "pending", attempts: 1, next_attempt_at: iso(T0, 0.5) },
    ]);
    expect(await run()).toBe(0); // not due yet
    h.clock.advanceSeconds(30);
    expect(await run()).toBe(1);
    // The alert's own page (ops_alert_state id 1: the first alert key applied), which opens for a signed-in browser.
    const link = "http://localhost:3000/admin/ops/alerts-monitor/alerts/1";
    expect(await events()).toMatchObject([
      {
        event: "alert.fired",
        issue_id: "alert:status:database",
        target: label,
        url: link,
        attempt: 1,
        status_code: 503,
        status_code_family: "5xx",
        skip_reason: null,
        outbox_id: 1,
      },
      { attempt: 2, status_code: 200, status_code_family: "2xx", skip_reason: null, error: null, at: iso(T0, 0.5) },
    ]);
    expect((await outbox())[0]).toMatchObject({ status: "sent", attempts: 2, sent_at: iso(T0, 0.5) });
    expect(r.received).toHaveLength(2);
    const body = JSON.parse(r.received[1]!.rawBody);
    expect(body.text).toBe(body.content);
    expect(body.text).toContain("Alert fired: status/database");
    expect(body.text).toEndWith(link);
    expect(r.received[1]!.path).toBe(SECRET_PATH);
    // The secret path is nowhere in the database.
    expect(JSON.stringify([await events(), await outbox()])).not.toContain("s3cr3t");
  });

  test("a receiver that never answers is a timeout attempt; a closed port is 'other'; after the last attempt the message is dead", async () => {
    const r = receiver({ hang: true }, { status: 500 }, { status: 500 });
    const closed = startReceiver();
    const closedUrl = closed.url("/hook");
    closed.stop();
    await setup([r.url("/a"), closedUrl]);
    await alertRun("jobs", "fail", "preflight");
    expect(await run()).toBe(2);
    h.clock.advanceSeconds(30);
    await run();
    h.clock.advanceSeconds(60);
    await run();
    h.clock.advanceSeconds(3600);
    expect(await run()).toBe(0);
    const mine = (await events()).filter((e) => e.target === redactTarget(r.url("/a")));
    expect(mine.map((e) => [e.event, e.attempt, e.status_code, e.status_code_family])).toEqual([
      ["preflight.anomaly", 1, null, "timeout"],
      ["preflight.anomaly", 2, 500, "5xx"],
      ["preflight.anomaly", 3, 500, "5xx"],
    ]);
    const other = (await events()).filter((e) => e.target === redactTarget(closedUrl));
    expect(other.map((e) => e.status_code_family)).toEqual(["other", "other", "other"]);
    expect(other[0]!.error).toMatch(/^connection failed/);
    expect(other[0]!.url).toBe("http://localhost:3000/admin/ops/alerts-monitor/alerts/1");
    expect((await outbox()).map((o) => [o.status, o.attempts])).toEqual([
      ["dead", 3],
      ["dead", 3],
    ]);
  });

  test("state changes only: an alert that stays failing is sent once; firing again within LINK_INBOX_COOLDOWN_SECONDS is not sent (cooldown), after it is", async () => {
    const r = receiver();
    await setup([r.url("/c")], { LINK_INBOX_COOLDOWN_SECONDS: "600" });
    await alertRun("database");
    await run();
    h.clock.advanceSeconds(60);
    await alertRun("database"); // still failing: no state change, nothing sent
    await run();
    h.clock.advanceSeconds(60);
    await alertRun("database", "ok"); // resolved: sent even inside the cooldown
    await run();
    h.clock.advanceSeconds(60);
    await alertRun("database"); // fires again at 180 s: inside the cooldown of the resolution queued at 120 s
    await alertRun("jobs"); // another issue: not in cooldown
    await run();
    h.clock.advanceSeconds(60);
    await alertRun("database", "ok"); // its firing was not sent, so neither is this resolution
    await run();
    h.clock.advanceSeconds(600);
    await alertRun("database"); // after the cooldown: sent
    await run();
    expect((await events()).map((e) => [e.event, e.issue_id, e.skip_reason, e.status_code_family])).toEqual([
      ["alert.fired", "alert:status:database", null, "2xx"],
      ["alert.resolved", "alert:status:database", null, "2xx"],
      ["alert.fired", "alert:status:database", "cooldown", null],
      ["alert.fired", "alert:status:jobs", null, "2xx"],
      ["alert.fired", "alert:status:database", null, "2xx"],
    ]);
    expect(r.received).toHaveLength(4);
    expect(JSON.parse(r.received[1]!.rawBody).text).toStartWith("[Herald] Alert resolved: status/database (was fail since 2026-04-01T10:00:00.000Z)");
  });

  test("no target configured: an incident writes a no_url event and nothing is queued", async () => {
    const { admin } = await setup([]);
    const created = await admin.post("/admin/status/incidents", { title: "Slow", message: "Slow.", severity: "warn", components: ["webhooks"] });
    expect(created.status).toBe(201);
    expect(await outbox()).toEqual([]);
    expect(await events()).toMatchObject([
      { event: "incident.opened", issue_id: `incident:${created.body.incident.id}`, target: "", skip_reason: "no_url", status_code_family: null },
    ]);
  });

  test("SSRF: with private targets not allowed, loopback and metadata targets are refused by the webhook target policy and never called", async () => {
    const r = receiver();
    await setup([r.url("/x"), "http://169.254.169.254/latest/meta-data"], { WEBHOOK_ALLOW_PRIVATE_TARGETS: "0" });
    await alertRun("database");
    await run();
    expect(r.received).toHaveLength(0);
    expect((await events()).map((e) => [e.status_code_family, e.skip_reason])).toEqual([
      ["other", "other"],
      ["other", "other"],
    ]);
    expect((await events())[1]!.error).toContain("non-public address (169.254.169.254)");
    expect((await outbox()).map((o) => o.status)).toEqual(["dead", "dead"]);
    const { get } = { get: async (p: string) => h.json(p, { headers: { authorization: `Bearer ${await createAdminToken(h)}` } }) };
    const s = await get(SUMMARY);
    expect(s.body.targets.map((t: any) => t.policy_problem)).toEqual([
      "points at a non-public address (127.0.0.1)",
      "points at a non-public address (169.254.169.254)",
    ]);
  });
});

/** An operator incident opened and resolved at the clock's time, through the admin routes. */
async function resolvedIncident(admin: ReturnType<typeof operator>, title: string) {
  const created = await admin.post("/admin/status/incidents", { title, message: "Down.", severity: "bad", components: ["webhooks"] });
  expect(created.status).toBe(201);
  const id = created.body.incident.id as number;
  expect((await admin.post(`/admin/status/incidents/${id}/updates`, { state: "resolved", message: "Back." })).status).toBe(201);
  return id;
}

describe("incidents through the admin status routes", () => {
  test("opened and resolved (within the cooldown): both messages reach every target with the incident's link; resolved-verification says so", async () => {
    const a = receiver();
    const b = receiver({ status: 500 });
    const { admin, get } = await setup([a.url("/one"), b.url("/two")]);
    const created = await admin.post("/admin/status/incidents", { title: "Deliveries delayed", message: "Late.", severity: "warn", components: ["webhooks"] });
    const id = created.body.incident.id;
    await run();
    h.clock.set(iso(T0, 5));
    const updated = await admin.post(`/admin/status/incidents/${id}/updates`, { state: "identified", message: "A slow receiver." });
    expect(updated.status).toBe(201);
    h.clock.set(iso(T0, 10));
    expect((await admin.post(`/admin/status/incidents/${id}/updates`, { state: "resolved", message: "Drained." })).status).toBe(201);
    await run();
    const link = `http://localhost:3000/admin/ops/incidents/${id}`;
    // b answered 500 to the opening, which was retried on the pass after the resolution.
    expect([a.received.length, b.received.length]).toEqual([2, 3]);
    for (const r of [a, b]) {
      const texts = [...new Set(r.received.map((x) => JSON.parse(x.rawBody).text as string))];
      expect(texts).toEqual([
        `[Herald] Incident opened: Deliveries delayed (warn) — Late. ${link}`,
        `[Herald] Incident resolved: Deliveries delayed (warn) — Drained. ${link}`,
      ]);
    }
    // The update inside the 900 s cooldown was skipped, once per target.
    expect((await events()).filter((e) => e.skip_reason === "cooldown").map((e) => e.event)).toEqual(["incident.updated", "incident.updated"]);

    const res = await get(RESOLVED);
    expect(res.status).toBe(200);
    const resolvedEvents = (await events()).filter((e) => e.event === "incident.resolved");
    expect(res.body).toEqual({
      success: true,
      days: 7,
      configured_targets: [redactTarget(a.url("/one")), redactTarget(b.url("/two"))],
      count: 1,
      delivered_to_all_count: 1,
      incidents: [
        {
          incident_id: id,
          issue_id: `incident:${id}`,
          title: "Deliveries delayed",
          source: "operator",
          resolved_at: iso(T0, 10),
          delivered_to_all: true,
          targets: [
            {
              target: redactTarget(a.url("/one")),
              delivered: true,
              delivered_at: iso(T0, 10),
              attempts: 1,
              last_status_code_family: "2xx",
              outbox_status: "sent",
            },
            {
              target: redactTarget(b.url("/two")),
              delivered: true,
              delivered_at: iso(T0, 10),
              attempts: 1,
              last_status_code_family: "2xx",
              outbox_status: "sent",
            },
          ],
          event_ids: resolvedEvents.map((e) => e.id),
          skip_reasons: [],
        },
      ],
    });

    // verification-summary: target b failed its first message (500), then retried and succeeded later.
    const s = await get(SUMMARY);
    expect(s.status).toBe(200);
    const tb = s.body.targets.find((t: any) => t.target === redactTarget(b.url("/two")));
    expect(tb).toEqual({
      target: redactTarget(b.url("/two")),
      configured: true,
      policy_problem: null,
      attempts: 3,
      successes: 2,
      failures: { "4xx": 0, "5xx": 1, timeout: 0, other: 0 },
      skips: { cooldown: 1, other: 0 },
      last_attempt_at: iso(T0, 10),
      last_success_at: iso(T0, 10),
      failing_streak: 0,
      pending: 0,
      dead: 0,
    });
    expect(s.body.events.find((e: any) => e.event === "incident.updated")).toMatchObject({ attempts: 0, skips: { no_url: 0, cooldown: 2, other: 0 } });
    expect(s.body.events.find((e: any) => e.event === "incident.opened")).toMatchObject({ attempts: 3, successes: 2, failures: { "5xx": 1 } });
    expect(JSON.stringify(s.body)).not.toContain(a.url("/one"));
  });

  test("failing streak and dead count in the summary; resolved-verification reports a notice not delivered everywhere", async () => {
    const a = receiver();
    const b = receiverWith({ status: 502 });
    const { admin, get } = await setup([a.url("/ok"), b.url("/bad")], { LINK_INBOX_MAX_ATTEMPTS: "2" });
    await resolvedIncident(admin, "Outage");
    await run();
    h.clock.advanceSeconds(30);
    await run();
    const s = await get(SUMMARY);
    expect(s.body.targets.find((t: any) => t.target === redactTarget(b.url("/bad")))).toMatchObject({
      attempts: 4,
      successes: 0,
      failures: { "4xx": 0, "5xx": 4, timeout: 0, other: 0 },
      failing_streak: 4,
      dead: 2,
      pending: 0,
      last_success_at: null,
    });
    expect(s.body.targets.find((t: any) => t.target === redactTarget(a.url("/ok")))).toMatchObject({ attempts: 2, successes: 2, failing_streak: 0, dead: 0 });
    const r = await get(RESOLVED);
    expect(r.body.incidents[0]).toMatchObject({ delivered_to_all: false });
    expect(r.body.incidents[0].targets.map((t: any) => [t.delivered, t.outbox_status, t.last_status_code_family])).toEqual([
      [true, "sent", "2xx"],
      [false, "dead", "5xx"],
    ]);
  });
});

describe("resolved-verification HTTP caching", () => {
  test("strong ETag, Last-Modified, Cache-Control; 304 on If-None-Match and on If-Modified-Since; a new delivery changes the ETag", async () => {
    const a = receiver();
    const { admin, token } = await setup([a.url("/one")]);
    await resolvedIncident(admin, "X");
    const auth = { authorization: `Bearer ${token}` };
    const first = await h.request(RESOLVED, { headers: auth });
    expect(first.status).toBe(200);
    const etag = await first.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(await first.headers.get("cache-control")).toBe("private, no-cache");
    expect(await first.headers.get("last-modified")).toBe(new Date(T0).toUTCString());
    const again = await h.request(RESOLVED, { headers: { ...auth, "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
    expect((await h.request(RESOLVED, { headers: { ...auth, "if-modified-since": await first.headers.get("last-modified")! } })).status).toBe(304);
    expect((await h.request(RESOLVED, { headers: { ...auth, "if-modified-since": new Date(Date.parse(T0) - 1000).toUTCString() } })).status).toBe(200);
    expect((await h.request(RESOLVED, { headers: { ...auth, "if-none-match": '"other"' } })).status).toBe(200);
    h.clock.advanceSeconds(5);
    await run();
    const after = await h.request(RESOLVED, { headers: { ...auth, "if-none-match": etag } });
    expect(after.status).toBe(200);
    expect(await after.headers.get("etag")).not.toBe(etag);
    expect(await after.headers.get("last-modified")).toBe(new Date(Date.parse(T0) + 5000).toUTCString());
  });

  testOn("sqlite", "test/ops/link-inbox.test.ts")(
    "a restart with other targets: the body names them, so Last-Modified moves to the start and If-Modified-Since is no 304",
    async () => {
      const { token } = await setup(["http://127.0.0.1:9/one"]);
      await resolvedIncident(operator(h, token), "X");
      const auth = { authorization: `Bearer ${token}` };
      const before = await h.request(RESOLVED, { headers: auth });
      const since = before.headers.get("last-modified")!;
      // The same database opened by a process started a minute later with another target list.
      const later = new Date(Date.parse(T0) + 60_000).toISOString();
      const restarted = createTestApp({
        clock: new FakeClock(later),
        env: { HERALD_DB_PATH: h.ctx.config.dbPath, WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", LINK_INBOX_WEBHOOK_URLS: "http://127.0.0.1:9/two" },
      });
      try {
        const res = await restarted.request(RESOLVED, { headers: { ...auth, "if-modified-since": since } });
        expect(res.status).toBe(200);
        expect(res.headers.get("last-modified")).toBe(new Date(later).toUTCString());
        expect(((await res.json()) as { configured_targets: string[] }).configured_targets).toHaveLength(1);
        expect(res.headers.get("etag")).not.toBe(before.headers.get("etag"));
      } finally {
        await restarted.close();
      }
    },
  );
});

describe("authentication and bad input", () => {
  test("every route answers 403 without credentials or with a wrong token", async () => {
    await setup([]);
    for (const path of [SUMMARY, RESOLVED]) {
      expect((await h.request(path)).status).toBe(403);
      expect((await h.request(path, { headers: { authorization: "Bearer not-a-real-admin-token-000" } })).status).toBe(403);
    }
  });

  test("the operator session cookie opens both read-models", async () => {
    const { token } = await setup([]);
    const cookie = await signedInCookie(h, token);
    for (const path of [SUMMARY, RESOLVED]) expect((await h.request(path, { headers: { cookie } })).status).toBe(200);
  });

  test("herald config masks LINK_INBOX_WEBHOOK_URLS", () => {
    const row = describeConfig({ LINK_INBOX_WEBHOOK_URLS: `https://hooks.slack.com${SECRET_PATH}` }).find((r) => r.name === "LINK_INBOX_WEBHOOK_URLS");
    expect(row).toMatchObject({ value: "****", secret: true });
  });

  test("days is bounded: 0, over the maximum and non-numbers are 400 invalid_query; the edges are accepted", async () => {
    const { get } = await setup([]);
    for (const [path, max] of [
      [SUMMARY, 365],
      [RESOLVED, 90],
    ] as const) {
      for (const bad of ["0", String(max + 1), "abc", "1.5"]) {
        const r = await get(`${path}?days=${bad}`);
        expect(r.status).toBe(400);
        expect(r.body.success).toBe(false);
      }
      for (const ok of ["1", String(max)]) expect((await get(`${path}?days=${ok}`)).status).toBe(200);
    }
  });
});
