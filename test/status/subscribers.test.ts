import { afterEach, describe, expect, test } from "bun:test";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Level } from "../../src/status/checks/types";
import { CHECK_NAMES } from "../../src/status/checks/engine";
import { StatusAdminModel } from "../../src/status/model-admin";
import { STATUS_EVENT_TYPES, statusNotifier } from "../../src/status/incidents/notify";
import { storeSnapshot } from "../../src/status/snapshots";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { startReceiver, type Receiver, type Received } from "../support/receiver";
import { iso, operator } from "./support";

// Status subscribers: admin routes, and incident events delivered to a real receiver on 127.0.0.1, signed
// like partner webhooks (verified here with node:crypto, independently of our signer), retried on failure,
// dead-lettered on 410, never sent from inside the request.

let h: TestApp | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  rx?.stop(); // releases a hanging receiver: a pass still sending ends at once
  rx = undefined;
  if (h) await statusNotifier(h.ctx).idle(); // a pass a route's nudge began ends before the database goes
  await h?.close();
  h = undefined;
});

const T0 = "2026-02-01T10:00:00.000Z";
const SUBS = "/admin/status/subscribers";

async function setup(env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" }) {
  h = await openTestApp({ clock: new FakeClock(T0), env });
  rx = startReceiver();
  return { h, rx, admin: operator(h, await createAdminToken(h)) };
}

/** X-Webhook-Signature = hex(HMAC-SHA256(secret, timestamp + "." + raw body)), compared in constant time. */
function verify(r: Received, secret: string): boolean {
  const expected = createHmac("sha256", secret).update(`${r.headers["x-webhook-timestamp"]}.${r.rawBody}`).digest();
  const got = Buffer.from(r.headers["x-webhook-signature"] ?? "", "hex");
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** Every outcome is recorded once the notifier's pass (started by the route's nudge, or a new one) is over. */
const drain = (h: TestApp) => statusNotifier(h.ctx).runOnce();

const deliveries = (h: TestApp) =>
  h.ctx.store.all<Record<string, unknown>>(
    "SELECT event_type, status, attempts, last_status_code, next_attempt_at FROM status_subscriber_deliveries ORDER BY id",
  );

describe("status subscribers", () => {
  test("register (secret once), the same URL again is a no-op, other event types a 409; list; delete", async () => {
    const { h, rx, admin } = await setup();
    const created = await admin.post(SUBS, { url: rx.url("/status-hook"), description: "on-call bridge" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      created: true,
      subscriber: { id: 1, url: rx.url("/status-hook"), description: "on-call bridge", event_types: [...STATUS_EVENT_TYPES].sort() },
    });
    expect(created.body.secret).toStartWith("whsec_");
    const again = await admin.post(SUBS, { url: rx.url("/status-hook") });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, secret: null, subscriber: { id: 1 } });
    const other = await admin.post(SUBS, { url: rx.url("/status-hook"), event_types: ["status.incident.resolved"] });
    expect(other.status).toBe(409);
    expect(other.body.details).toMatchObject({ subscriber_id: 1 });
    // The secret is sealed at rest, never stored as given.
    const row = (await h.ctx.store.get<{ secret_ciphertext: string }>("SELECT secret_ciphertext FROM status_subscribers"))!;
    expect(row.secret_ciphertext).not.toContain(created.body.secret);
    const list = await admin.get(SUBS);
    expect(list.body).toMatchObject({
      count: 1,
      subscribers: [{ id: 1, deliveries: { pending: 0, succeeded: 0, failed: 0, dead_letter: 0, last_attempt_at: null } }],
    });
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
    const gone = await admin.del(`${SUBS}/1`);
    expect(gone.status).toBe(200);
    expect((await admin.del(`${SUBS}/1`)).status).toBe(404);
    const actions = await h.ctx.store.all("SELECT action FROM admin_audit WHERE action LIKE 'status.subscriber.%' ORDER BY id");
    expect(actions).toEqual([{ action: "status.subscriber.create" }, { action: "status.subscriber.delete" }]);
  });

  test("SSRF policy: private targets refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS; bad URLs refused; 403 without the admin token", async () => {
    const { h, admin } = await setup({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "0" });
    for (const url of [
      "http://127.0.0.1:9/hook",
      "http://169.254.169.254/latest",
      "http://localhost/x",
      "ftp://example.com/x",
      "not a url",
      "https://user:pw@example.com/x",
    ]) {
      const r = await admin.post(SUBS, { url });
      expect([url, r.status, r.body.error]).toEqual([url, 400, "invalid_payload"]);
    }
    expect((await admin.post(SUBS, { url: "https://example.com/hook", event_types: ["status.incident.opened"] })).status).toBe(400);
    expect((await admin.post(SUBS, { url: "https://example.com/hook", extra: 1 })).status).toBe(400);
    for (const [method, path] of [
      ["GET", SUBS],
      ["POST", SUBS],
      ["DELETE", `${SUBS}/1`],
    ] as const) {
      const r = await h.json(path, {
        method,
        headers: { "content-type": "application/json" },
        body: method === "POST" ? JSON.stringify({ url: "https://example.com/h" }) : undefined,
      });
      expect([path, r.status]).toEqual([path, 403]);
    }
  });

  test("an operator incident's created, updated and resolved events reach the receiver, signed, one event id per event", async () => {
    const { h, rx, admin } = await setup();
    const secret = (await admin.post(SUBS, { url: rx.url("/status-hook") })).body.secret as string;
    const id = (await admin.post("/admin/status/incidents", { title: "API errors", message: "Looking.", severity: "bad", components: ["api"] })).body.incident
      .id;
    await drain(h);
    h.clock.set(iso(T0, 5));
    await admin.post(`/admin/status/incidents/${id}/updates`, { state: "identified", message: "Found." });
    await drain(h);
    h.clock.set(iso(T0, 9));
    await admin.post(`/admin/status/incidents/${id}/updates`, { state: "resolved", message: "Fixed." });
    await drain(h);
    expect(rx.received).toHaveLength(3);
    const bodies = rx.received.map((r) => JSON.parse(r.rawBody));
    expect(bodies.map((b) => b.event_type)).toEqual(["status.incident.created", "status.incident.updated", "status.incident.resolved"]);
    for (const [i, r] of rx.received.entries()) {
      expect(r.method).toBe("POST");
      expect(r.path).toBe("/status-hook");
      expect(r.headers["content-type"]).toBe("application/json");
      expect(verify(r, secret)).toBe(true);
      expect(r.headers["x-webhook-id"]).toBe(bodies[i].event_id);
      expect(r.headers["x-webhook-event"]).toBe(bodies[i].event_type);
    }
    expect(verify({ ...rx.received[0]!, rawBody: rx.received[0]!.rawBody + " " }, secret)).toBe(false);
    expect(bodies[2].data.incident).toMatchObject({
      id,
      source: "operator",
      status: "resolved",
      state: "resolved",
      updates: [{ message: "Fixed." }, { message: "Found." }, { message: "Looking." }],
    });
    expect((await deliveries(h)).map((d) => d.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    const sub = (await admin.get(SUBS)).body.subscribers[0];
    expect(sub.deliveries).toMatchObject({ succeeded: 3, pending: 0, failed: 0, dead_letter: 0, last_error: null });
  });

  test("a failing receiver is retried on the webhook schedule until it answers; the same bytes and event id each time", async () => {
    const { h, rx, admin } = await setup();
    const secret = (await admin.post(SUBS, { url: rx.url("/hook") })).body.secret as string;
    rx.then({ status: 500 }, { status: 503, headers: { "retry-after": "120" } });
    await admin.post("/admin/status/incidents", { title: "Queue stuck", message: "Looking.", severity: "warn" });
    await drain(h);
    expect(rx.received).toHaveLength(1);
    let [d] = await deliveries(h);
    expect(d).toMatchObject({ status: "failed", attempts: 1, last_status_code: 500 });
    // Not due yet: nothing is sent before its time.
    await drain(h);
    expect(rx.received).toHaveLength(1);
    h.clock.set(d!.next_attempt_at as string);
    await drain(h);
    [d] = await deliveries(h);
    expect(d).toMatchObject({ status: "failed", attempts: 2, last_status_code: 503 });
    // Retry-After: 120 is honoured (longer than the base delay).
    expect(Date.parse(d!.next_attempt_at as string) - h.clock.now().getTime()).toBeGreaterThanOrEqual(120_000);
    h.clock.set(d!.next_attempt_at as string);
    await drain(h);
    expect((await deliveries(h))[0]).toMatchObject({ status: "succeeded", attempts: 3, last_status_code: 204 });
    expect(new Set(rx.received.map((r) => r.rawBody)).size).toBe(1);
    expect(new Set(rx.received.map((r) => r.headers["x-webhook-id"])).size).toBe(1);
    for (const r of rx.received) expect(verify(r, secret)).toBe(true);
  });

  test("410 Gone dead-letters at once; the subscriber's health shows it", async () => {
    const { h, rx, admin } = await setup();
    await admin.post(SUBS, { url: rx.url("/hook") });
    rx.then({ status: 410 });
    await admin.post("/admin/status/incidents", { title: "x", message: "y", severity: "warn" });
    await drain(h);
    expect((await deliveries(h))[0]).toMatchObject({ status: "dead_letter", attempts: 1, last_status_code: 410 });
    const sub = (await admin.get(SUBS)).body.subscribers[0];
    expect(sub.deliveries).toMatchObject({ dead_letter: 1, last_error: "receiver answered HTTP 410" });
  });

  test("automatic incidents notify on opening, real changes and closing — not on every degraded minute", async () => {
    const { h, rx, admin } = await setup();
    await admin.post(SUBS, { url: rx.url("/hook"), event_types: ["status.incident.created", "status.incident.resolved", "status.incident.updated"] });
    const ev = async (minute: number, overall: Level, degraded: Record<string, Level> = {}) =>
      await storeSnapshot(
        h.ctx,
        {
          generated_at: iso(T0, minute),
          overall,
          policy_version: "t",
          checks: Object.fromEntries(CHECK_NAMES.map((n) => [n, { status: degraded[n] ?? ("ok" as Level), summary: "s" }])),
        },
        null,
      );
    expect((await ev(1, "warn", { jobs: "warn" })).notifications).toBe(1); // opened
    expect((await ev(2, "warn", { jobs: "warn" })).notifications).toBe(0); // the same: no news
    expect((await ev(3, "bad", { jobs: "warn", database: "bad" })).notifications).toBe(1); // worse: updated
    expect((await ev(4, "ok")).notifications).toBe(1); // closed
    await drain(h);
    // One delivery each, sent side by side in one batch: their order of arrival is not promised (a notification
    // carries its incident whole), so they are compared as a set. Busy machines saw updated and resolved swapped.
    const bodies = rx.received.map((r) => JSON.parse(r.rawBody));
    expect(bodies.map((b) => b.event_type).sort()).toEqual(["status.incident.created", "status.incident.resolved", "status.incident.updated"]);
    expect(bodies.find((b) => b.event_type === "status.incident.resolved").data.incident).toMatchObject({
      source: "automatic",
      status: "resolved",
      severity: "bad",
      components: ["api", "jobs"],
    });
  });

  test("a subscriber of resolved only hears of resolutions; the route answers before any delivery is made", async () => {
    const { h, rx, admin } = await setup();
    await admin.post(SUBS, { url: rx.url("/hook"), event_types: ["status.incident.resolved"] });
    rx.then({ hang: true });
    const created = await admin.post("/admin/status/incidents", { title: "x", message: "y", severity: "warn" });
    expect(created.status).toBe(201);
    const r = await admin.post(`/admin/status/incidents/${created.body.incident.id}/updates`, { state: "resolved", message: "done" });
    // The answer came back although the receiver holds the only delivery open: sending is off the request.
    expect(r.status).toBe(201);
    expect((await deliveries(h)).map((d) => d.event_type)).toEqual(["status.incident.resolved"]);
  });

  test("the body schema's event types are the notifier's", () => {
    const schema = StatusAdminModel.subscriberBody.properties.event_types as unknown as { items: { anyOf: Array<{ const: string }> } };
    expect(schema.items.anyOf.map((b) => b.const)).toEqual([...STATUS_EVENT_TYPES]);
  });
});
