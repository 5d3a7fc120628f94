import { afterEach, describe, expect, test } from "bun:test";
import { ALERTS_MONITOR_JOB, runAlertsMonitor } from "../../src/ops/alerts/monitor";
import { linkInboxSender } from "../../src/ops/link-inbox/outbox";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";
import { plantAlertRun, plantDeadLetters } from "./support";

// Alerts that reach people (issue 31, items 2 and 3), end to end: real evaluations by the alerts-monitor job (the
// 403 digest over 403s the app itself answered, webhook dead letters, audit runs), their state changes sent by the
// link inbox's sender to a real chat receiver on 127.0.0.1, silences made over HTTP. Time moves with the fake clock.

const T0 = "2026-04-01T10:05:00.000Z";
const B = "/admin/ops/alerts-monitor";

let h: TestApp;
let receivers: Receiver[] = [];
afterEach(async () => {
  await h?.close();
  for (const r of receivers) r.stop();
  receivers = [];
});

async function setup(env: Record<string, string> = {}) {
  const rx = startReceiver({ status: 200 });
  receivers.push(rx);
  h = await openTestApp({
    clock: new FakeClock(T0),
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", LINK_INBOX_WEBHOOK_URLS: rx.url("/chat"), LINK_INBOX_TIMEOUT_MS: "2000", ...env },
  });
  const token = await createAdminToken(h);
  const auth = { authorization: `Bearer ${token}` };
  return { rx, token, auth, get: (path: string) => h.json(path, { headers: auth }) };
}

const send = () => linkInboxSender(h.ctx).runOnce();
const texts = (rx: Receiver) => rx.received.map((r) => JSON.parse(r.rawBody).text as string);
const about = (rx: Receiver, what: string) => texts(rx).filter((t) => t.includes(what));
const events = () => h.ctx.store.all<Record<string, any>>("SELECT * FROM ops_link_events ORDER BY id");

/** `n` requests the app answers 403 (an admin route without credentials), logged and rolled up like any request. */
async function forbidden(n: number) {
  const before = h.ctx.requestLog.pending;
  for (let i = 0; i < n; i++) expect((await h.request("/admin/backups")).status).toBe(403);
  // The request log records in the after-response hook: wait for the n rows (no timer), then write them.
  for (let i = 0; i < 200 && h.ctx.requestLog.pending < before + n; i++) await Bun.sleep(0);
  expect(await h.ctx.requestLog.flush()).toBeGreaterThanOrEqual(n);
}

describe("item 2: the 403 digest raises alerts", () => {
  test("a caused 403 spike is a digest alert row and a chat message within one monitor run; its end is a resolved message; last_digest_warn matches", async () => {
    const { rx, get } = await setup();
    await forbidden(60);
    h.clock.advanceSeconds(10 * 60); // the next quarter-hour tick of the monitor
    await h.ctx.jobs.runNow(ALERTS_MONITOR_JOB);
    await send();

    const rows = await get(`${B}/export.json?source=digest`);
    expect(rows.status).toBe(200);
    const spike = rows.body.alerts.find((a: any) => a.name === "403_spike");
    expect(spike).toMatchObject({ source: "digest", status: "warn", value: "60" });
    expect(spike.details.findings[0]).toMatchObject({ kind: "spike", observed: 60 });
    expect(spike.details.summary).toContain("60 403s");
    expect(rows.body.alerts.filter((a: any) => a.name !== "403_spike").map((a: any) => a.status)).toEqual(["ok", "ok"]);

    const fired = about(rx, "digest/403_spike");
    expect(fired).toHaveLength(1);
    expect(fired[0]).toStartWith("[Herald] Alert fired: digest/403_spike [warn] (60) — all routes: 60 403s in hour 2026-04-01T10");
    const firing = await get(`${B}/firing.json?source=digest`);
    expect(firing.body.alerts.map((a: any) => [a.key, a.level])).toEqual([["digest:403_spike", "warn"]]);
    expect(fired[0]).toEndWith(`http://localhost:3000${firing.body.alerts[0].page}`);

    // The link inbox's preset now finds the warning (it answered total 0 while nothing wrote digest rows).
    h.clock.advanceSeconds(60);
    const preset = await get("/admin/ops/link-inbox/events/export.json?window_preset=last_digest_warn");
    expect(preset.status).toBe(200);
    expect(preset.body.window.note).toContain('digest warning "403_spike"');
    expect(preset.body.total).toBeGreaterThan(0);

    // Sustained: a second spike hour keeps the alert firing, and nothing more is sent.
    h.clock.set("2026-04-01T11:05:00.000Z");
    await forbidden(40);
    h.clock.advanceSeconds(10 * 60);
    await runAlertsMonitor(h.ctx);
    await send();
    expect(about(rx, "digest/403_spike")).toHaveLength(1);
    const sustained = await get(`${B}/export.json?source=digest&status=warn&limit=1`);
    expect(sustained.body.alerts[0].details.findings[0]).toMatchObject({ kind: "sustained_spike", observed: 100 });

    // Two quiet hours later the window holds no spike: the alert resolves, and that is sent.
    h.clock.set("2026-04-01T13:15:00.000Z");
    await runAlertsMonitor(h.ctx);
    await send();
    const all = about(rx, "digest/403_spike");
    expect(all).toHaveLength(2);
    // It says what resolved, in words: the finding now gone and the last one while it fired — not a bare "(0)".
    expect(all[1]).toStartWith(
      "[Herald] Alert resolved: digest/403_spike (was warn since 2026-04-01T10:15:00.000Z) — now: no 403 spike in the last 2 hours; " +
        "while firing: all routes: 100 403s in 2 consecutive hours (2026-04-01T10 to 2026-04-01T11)",
    );
    expect(all[1]).not.toContain("(0)");
    expect(all[1]).toMatch(/\w… http:\/\/localhost:3000\/admin\/ops\/alerts-monitor\/alerts\/\d+$/);
    expect((await get(`${B}/firing.json?source=digest`)).body.count).toBe(0);
    const window = await get("/admin/ops/link-inbox/events/export.json?window_preset=last_digest_warn");
    expect(window.body.window).toMatchObject({ from: "2026-04-01T10:15:00.000Z", to: "2026-04-01T13:15:00.000Z" });
  });

  test("an active suppression rule keeps the spike out of the alerts, as it keeps it out of the digest's findings", async () => {
    const { rx, auth } = await setup();
    const rule = await h.json("/admin/ops/403-digest/suppressions", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ client_prefix: "127.0.0.0/24", reason: "pen test", owner: "secops", expires_at: "2026-04-02T00:00:00Z" }),
    });
    expect(rule.status).toBe(201);
    await forbidden(60);
    await runAlertsMonitor(h.ctx);
    await send();
    const rows = await h.json(`${B}/export.json?source=digest`, { headers: auth });
    // The four findings the spike would have made (all routes, the route, the key "", the client prefix) are suppressed.
    expect(rows.body.alerts.find((a: any) => a.name === "403_spike")).toMatchObject({
      status: "ok",
      details: { findings_total: 0, suppressed: 4, summary: "no 403 spike in the last 2 hours; 4 findings held back by suppression rules" },
    });
    expect(about(rx, "digest/")).toEqual([]);
  });
});

describe("item 3: state changes reach people", () => {
  test("warn alerts are sent; the first monitor run with 3 dead letters already present warns; the next quiet run sends alert.resolved", async () => {
    const { rx, get } = await setup();
    await plantDeadLetters(h.ctx.store, 3, T0);
    await runAlertsMonitor(h.ctx);
    await send();
    const r = await get(`${B}/export.json?source=webhooks`);
    expect(r.body.alerts[0]).toMatchObject({ status: "warn", value: "3", details: { dead_letters: 3, previous: null, growth: 3 } });
    // The notice says what the number counts.
    expect(about(rx, "dead_letter_growth")).toEqual([
      expect.stringMatching(
        /^\[Herald\] Alert fired: webhooks\/dead_letter_growth \[warn\] \(3\) — 3 webhook dead letters kept, 3 new since monitoring began at /,
      ),
    ]);

    h.clock.advanceSeconds(15 * 60);
    await runAlertsMonitor(h.ctx);
    await send();
    const notices = about(rx, "dead_letter_growth");
    expect(notices).toHaveLength(2);
    expect(notices[1]).toStartWith(
      "[Herald] Alert resolved: webhooks/dead_letter_growth (was warn since 2026-04-01T10:05:00.000Z) — now: 3 webhook dead letters kept, none new; " +
        "while firing: 3 webhook dead letters kept, 3 new since monitoring began",
    );
    expect((await events()).filter((e) => e.issue_id === "alert:webhooks:dead_letter_growth").map((e) => e.event)).toEqual(["alert.fired", "alert.resolved"]);
  });

  test("every audit run since the last evaluation is judged: a bad run followed 5 s later by a clean one fires and resolves", async () => {
    const { rx, get } = await setup();
    await runAlertsMonitor(h.ctx); // no audit run yet: no_run
    const run = (...args: Array<string | number>) =>
      h.ctx.store.run(
        `INSERT INTO audit_runs (label, day, started_at, finished_at, mint, decimals, is_complete, rows_total, signatures_with_anomalies, overall, thresholds)
         VALUES (?, '2026-04-01', ?, ?, 'M', 6, 1, ?, ?, ?, '{}')`,
        args,
      );
    await run("2026-04-01T10:06:00Z", "2026-04-01T10:06:00Z", "2026-04-01T10:06:30Z", 4, 2, "bad"); // a manual run that found a critical anomaly
    await run("2026-04-01T10:06:35Z", "2026-04-01T10:06:35Z", "2026-04-01T10:06:35Z", 0, 0, "ok"); // the scheduled run 5 s later: empty
    h.clock.advanceSeconds(15 * 60);
    await runAlertsMonitor(h.ctx);
    await send();
    const rows = await get(`${B}/export.json?source=transparency&limit=10`);
    expect(rows.body.alerts.map((a: any) => [a.status, a.details.selected_run])).toEqual([
      ["ok", 2],
      ["warn", 1],
      ["ok", null],
    ]);
    const notices = about(rx, "transparency/audit_anomalies");
    expect(notices).toHaveLength(2);
    expect(notices[0]).toContain("Alert fired: transparency/audit_anomalies [warn] (warn) — the run's overall is bad");
    expect(notices[1]).toStartWith("[Herald] Alert resolved: transparency/audit_anomalies");
    // Nothing new: the next run judges the latest run again, and sends nothing.
    h.clock.advanceSeconds(15 * 60);
    await runAlertsMonitor(h.ctx);
    await send();
    expect(about(rx, "transparency/")).toHaveLength(2);
  });

  test("an escalation within one firing (warn → fail) is sent even inside the cooldown; a de-escalation is not", async () => {
    const { rx } = await setup({ LINK_INBOX_COOLDOWN_SECONDS: "900" });
    const row = (status: string) => plantAlertRun(h.ctx.store, { at: h.clock.now().toISOString(), source: "status", name: "database", status, value: status });
    await row("warn");
    await send();
    h.clock.advanceSeconds(60);
    await row("fail");
    await send();
    h.clock.advanceSeconds(60);
    await row("warn");
    await send();
    expect(about(rx, "status/database").map((t) => t.split(" at ")[0])).toEqual([
      "[Herald] Alert fired: status/database [warn] (warn)",
      "[Herald] Alert fired: status/database [fail] (fail)",
    ]);
    expect((await events()).map((e) => e.skip_reason)).toEqual([null, null, "cooldown"]);
  });

  test("silences: created and expired over HTTP (who, why, until when; audited); a silenced alert is recorded and firing but not sent", async () => {
    const { rx, auth, get } = await setup();
    const post = (path: string, body?: unknown, headers: Record<string, string> = auth) =>
      h.json(path, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const created = await post(`${B}/silences`, { matcher: "webhooks:*", reason: "replaying dead letters, OPS-7", ends_at: "2026-04-01T12:00:00Z" });
    expect(created.status).toBe(201);
    expect(created.body.silence).toMatchObject({
      id: 1,
      matcher: "webhooks:*",
      reason: "replaying dead letters, OPS-7",
      created_by: expect.stringMatching(/^admin:/),
      created_at: T0,
      ends_at: "2026-04-01T12:00:00.000Z",
      expired_at: null,
      state: "active",
    });

    await plantDeadLetters(h.ctx.store, 3, T0);
    await runAlertsMonitor(h.ctx);
    await send();
    expect(about(rx, "dead_letter_growth")).toEqual([]);
    const skipped = (await events()).filter((e) => e.issue_id === "alert:webhooks:dead_letter_growth");
    expect(skipped.map((e) => [e.event, e.skip_reason])).toEqual([["alert.fired", "silenced"]]);
    expect(skipped[0]!.error).toContain("silence 1 by admin:");
    const firing = await get(`${B}/firing.json`);
    const dl = firing.body.alerts.find((a: any) => a.key === "webhooks:dead_letter_growth");
    expect(dl).toMatchObject({ level: "warn", silenced_by: { id: 1, matcher: "webhooks:*" }, notified_level: null });
    expect(firing.body.silenced).toBeGreaterThanOrEqual(1);

    const list = await get(`${B}/silences?state=active`);
    expect(list.body.silences.map((s: any) => s.id)).toEqual([1]);
    const expired = await post(`${B}/silences/1/expire`);
    expect(expired.status).toBe(200);
    expect(expired.body.silence).toMatchObject({ state: "expired", expired_at: T0, expired_by: expect.stringMatching(/^admin:/) });
    expect((await post(`${B}/silences/1/expire`)).body.error).toBe("conflict");
    expect((await post(`${B}/silences/99/expire`)).status).toBe(404);
    const audit = await h.ctx.store.all("SELECT action, target FROM admin_audit WHERE action LIKE 'ops.alert_silence.%' ORDER BY id");
    expect(audit).toEqual([
      { action: "ops.alert_silence.create", target: "ops_alert_silence:1" },
      { action: "ops.alert_silence.expire", target: "ops_alert_silence:1" },
    ]);
    expect((await get(`${B}/silences?state=expired`)).body.count).toBe(1);

    // Bad input: 400 naming the field; no credentials: 403.
    for (const [body, field] of [
      [{ matcher: "a b", reason: "x", ends_at: "2026-04-01T12:00:00Z" }, "body.matcher"],
      [{ matcher: "x", reason: "x", ends_at: "2026-03-01T00:00:00Z" }, "body.ends_at"],
      [{ matcher: "x", reason: "x", ends_at: "2026-06-01T00:00:00Z" }, "body.ends_at"],
      [{ matcher: "x", reason: "x", ends_at: "soon" }, "body.ends_at"],
    ] as const) {
      const r = await post(`${B}/silences`, body);
      expect([r.status, r.body.details?.[0]?.field]).toEqual([400, field]);
    }
    expect((await post(`${B}/silences`, { matcher: "x", reason: "x", ends_at: "2026-04-01T12:00:00Z", extra: 1 })).status).toBe(400);
    expect((await post(`${B}/silences`, { matcher: "x", reason: "x", ends_at: "2026-04-01T12:00:00Z" }, {})).status).toBe(403);
    expect((await h.json(`${B}/firing.json`)).status).toBe(403);
    expect((await get(`${B}/firing.json?level=bad`)).status).toBe(400);
    expect((await get(`${B}/silences?limit=0`)).status).toBe(400);
  });
});

describe("export filters know the new names", () => {
  test("source=digest, event=alert.resolved and skip_reason=silenced are accepted", async () => {
    const { get, auth } = await setup();
    expect((await get(`${B}/export.json?source=digest`)).status).toBe(200);
    expect((await h.request(`${B}/runs/export?source=digest`, { headers: auth })).status).toBe(200);
    expect((await get("/admin/ops/link-inbox/events/export.json?event=alert.resolved&skip_reason=silenced")).status).toBe(200);
  });
});
