import { afterEach, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/log";
import { runAlertsMonitor } from "../../src/ops/alerts/monitor";
import { linkInboxSender } from "../../src/ops/link-inbox/outbox";
import { redactTarget } from "../../src/ops/link-inbox/notify";
import { readinessOverview } from "../../src/ops/readiness/overview";
import { openTestApp, type TestApp } from "../support/app";
import { plantDeadLetters } from "./support";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { type Receiver, startReceiver } from "../support/receiver";
import { operator } from "../status/support";

// Item 5 of issue 31: link-inbox targets the private-address policy refuses used to fail in silence — no start-up
// line, no readiness reason, "no success" on the page without why. And the readiness verdict now counts what an
// operator would be paged for: dead notification targets, open incidents, firing alerts, dead-letter growth.

const T0 = "2026-04-01T10:00:00.000Z";
const REFUSED = [
  ["http://127.0.0.1:9/hook", "points at a non-public address (127.0.0.1)"],
  ["http://169.254.169.254/latest/meta-data", "points at a non-public address (169.254.169.254)"],
  ["http://[::1]/hook", "points at a non-public address (::1)"],
  ["http://10.0.0.1/hook", "points at a non-public address (10.0.0.1)"],
  ["http://0x7f000001/hook", "points at a non-public address (127.0.0.1)"],
  ["http://127.1/hook", "points at a non-public address (127.0.0.1)"],
  ["http://[fd00::1]/hook", "points at a non-public address (fd00::1)"],
] as const;

let h: TestApp;
let rx: Receiver | undefined;
afterEach(async () => {
  await h?.close();
  rx?.stop();
});

describe("refused targets are not silent", () => {
  test("a warning per refused target at start, the reason in targets.json, on the link-inbox page and in the readiness verdict", async () => {
    const lines: string[] = [];
    h = await openTestApp({
      clock: new FakeClock(T0),
      log: createLogger("warn", (l) => lines.push(l)),
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "0", LINK_INBOX_WEBHOOK_URLS: REFUSED.map(([u]) => u).join(",") },
    });
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.msg.startsWith("link-inbox target refused"));
    expect(warnings.map((w) => [w.level, w.target, w.problem])).toEqual(REFUSED.map(([u, p]) => ["warn", redactTarget(u), p]));
    // The URL is a secret (a chat webhook's path): only its label is logged.
    expect(lines.join("\n")).not.toContain("meta-data");

    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    const t = await h.json("/admin/ops/link-inbox/targets.json", { headers: auth });
    expect(t.status).toBe(200);
    expect([t.body.count, t.body.down, t.body.dead]).toEqual([7, 7, 7]);
    expect(t.body.targets.map((x: any) => [x.target, x.state, x.dead, x.reason])).toEqual(
      REFUSED.map(([u, p]) => [redactTarget(u), "down", true, `refused by the target policy: ${p}`]),
    );

    const page = await (await h.request("/admin/ops/link-inbox", { headers: auth })).text();
    expect(page).toContain("refused by the target policy: points at a non-public address (169.254.169.254)");
    expect(page).toContain(">refused</span>");

    const o = await readinessOverview(h.ctx);
    const dead = o.summary.reasons.filter((r) => r.startsWith("notification target dead"));
    expect(dead).toEqual(REFUSED.map(([u, p]) => `notification target dead: ${redactTarget(u)} (refused by the target policy: ${p})`));
    expect((await h.request("/metrics", { headers: auth })).status).toBe(200);
  });

  test("a target whose messages are given up on is dead too, with the newest failure as the reason; a working one is up", async () => {
    rx = startReceiver({ status: 200 });
    const bad = startReceiver({ status: 500 });
    h = await openTestApp({
      clock: new FakeClock(T0),
      env: {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
        LINK_INBOX_WEBHOOK_URLS: `${rx.url("/ok")},${bad.url("/bad")}`,
        LINK_INBOX_MAX_ATTEMPTS: "1",
      },
    });
    try {
      const admin = operator(h, await createAdminToken(h));
      await admin.post("/admin/status/incidents", { title: "Slow", message: "Slow.", severity: "warn", components: ["webhooks"] });
      await linkInboxSender(h.ctx).runOnce();
      const t = await admin.get("/admin/ops/link-inbox/targets.json");
      expect(t.body.targets.map((x: any) => [x.state, x.dead, x.reason, x.failing_streak, x.dead_messages])).toEqual([
        ["up", false, null, 0, 0],
        ["down", true, "target answered HTTP 500", 1, 1],
      ]);
      const o = await readinessOverview(h.ctx);
      expect(o.summary.reasons).toContain(`notification target dead: ${redactTarget(bad.url("/bad"))} (target answered HTTP 500)`);
    } finally {
      bad.stop();
    }
  });
});

describe("the readiness verdict counts what pages people", () => {
  test("open incidents, firing alerts (silenced ones too) and dead-letter growth are reasons; the page lists them with links", async () => {
    rx = startReceiver({ status: 200 });
    h = await openTestApp({ clock: new FakeClock(T0), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", LINK_INBOX_WEBHOOK_URLS: rx.url("/ok") } });
    const token = await createAdminToken(h);
    const admin = operator(h, token);
    const before = await readinessOverview(h.ctx);
    expect(before.summary.reasons.filter((r) => /incident|alert|dead letters|notification/.test(r))).toEqual([]);

    const created = await admin.post("/admin/status/incidents", { title: "Deliveries delayed", message: "Late.", severity: "bad", components: ["webhooks"] });
    await plantDeadLetters(h.ctx.store, 3, T0);
    await admin.post("/admin/ops/alerts-monitor/silences", { matcher: "webhooks:*", reason: "known", ends_at: "2026-04-02T00:00:00Z" });
    await runAlertsMonitor(h.ctx);

    const o = await readinessOverview(h.ctx);
    expect(o.summary.ready).toBe(false);
    expect(o.summary.reasons).toContain(`open incident: #${created.body.incident.id} Deliveries delayed (bad)`);
    expect(o.summary.reasons.find((r) => r.startsWith("alert firing:"))).toContain("webhooks:dead_letter_growth (warn, silenced)");
    expect(o.summary.reasons).toContain("webhook dead letters grew in the last 24 h: +3 (now 3)");

    const page = await (await h.request("/admin/ops/readiness", { headers: { authorization: `Bearer ${token}` } })).text();
    expect(page).toContain(`href="/admin/ops/incidents/${created.body.incident.id}"`);
    expect(page).toMatch(/href="\/admin\/ops\/alerts-monitor\/alerts\/\d+"><code>webhooks:dead_letter_growth<\/code>/);
    expect(page).toContain("Webhook dead letters: 3, +3 in the last 24 h");

    // A day later, with the incident resolved and the queue quiet, those reasons are gone.
    await admin.post(`/admin/status/incidents/${created.body.incident.id}/updates`, { state: "resolved", message: "Back." });
    h.clock.advanceSeconds(86_400 + 60);
    await runAlertsMonitor(h.ctx);
    const later = await readinessOverview(h.ctx);
    expect(later.summary.reasons.filter((r) => /incident|dead letters|dead_letter/.test(r))).toEqual([]);
  });
});
