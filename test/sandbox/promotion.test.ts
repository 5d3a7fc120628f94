import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { jsonInit } from "../support/app";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";
import { startReceiver, type Receiver } from "../support/receiver";
import { countWhere, drain, expectSandboxFields, fixtureUsers, rows, sandboxApp, sandboxKey, sb } from "./support";

let h = undefined as unknown as TestApp;
let rx: Receiver | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
  h = undefined as unknown as TestApp;
});

const promote = async (partner: string, body: unknown, token?: string) =>
  h.json(`/admin/partners/${encodeURIComponent(partner)}/promote`, jsonInit("POST", body, { authorization: `Bearer ${token ?? (await createAdminToken(h))}` }));

/** The request log is written after each response, on a later tick: yield once so the report sees the calls. */
const report = async (key: TestKey, qs = "") => {
  await Bun.sleep(0);
  return sb(h, key, "GET", `/promotion-report${qs}`);
};

const statusOf = (body: Record<string, any>) => Object.fromEntries((body.checklist as Array<{ id: string; status: string }>).map((c) => [c.id, c.status]));

/** What a finished integration does: signed calls, an idempotent mutation, a webhook its receiver acknowledges. */
async function practise(key: TestKey) {
  rx = startReceiver();
  const { bob } = await fixtureUsers(h, key);
  await sb(h, key, "POST", "/salutes/credit", {
    body: { user_id: String(bob.id), amount: 5, reason: "practice", source: "app" },
    idempotencyKey: "practice-1",
  });
  const hook = await sb(h, key, "POST", "/webhooks", { body: { event_type: "salutes.credit", target_url: rx.url("/ack") } });
  await sb(h, key, "POST", `/webhooks/${hook.body.webhook.id}/test`);
  await drain(h);
  for (let i = 0; i < 8; i++) await sb(h, key, "GET", "/token-status");
  await Bun.sleep(0);
}

describe("GET /api/partner/sandbox/promotion-report", () => {
  test("a fresh key is not ready: every required check fails, with thresholds and links", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const r = await report(key, "?include_meta=1");
    expect(r.status).toBe(200);
    expectSandboxFields(r.body, "sandbox_state");
    expect(r.body).toMatchObject({
      partner: "Acme",
      promotion_policy: "sandbox_to_live_manual_approval",
      ready: false,
      score: { passed: 0, required: 4, percent: 0 },
      active_live_keys: 0,
      user: null,
    });
    expect(statusOf(r.body)).toEqual({
      signed_calls_succeeded: "fail",
      idempotency_used: "fail",
      webhook_receiver_acknowledged: "fail",
      error_rate_below_threshold: "fail",
      webhook_simulator_used: "fail",
    });
    for (const c of r.body.checklist) expect(Object.keys(c.links).length).toBeGreaterThan(0);
    expect(r.body.sandbox_keys.map((k: { key_id: string }) => k.key_id)).toEqual([key.keyId]);
    expect(r.body.next_step).toContain("Not ready");
  });

  test("practice makes it ready; the simulator check is optional; user_id adds a section; limit bounds recent errors", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    await practise(key);
    await sb(h, key, "GET", "/users/424242"); // one failed call: listed, but the error rate stays low
    const r = await report(key);
    expect(r.body.ready).toBe(true);
    expect(r.body.score).toEqual({ passed: 4, required: 4, percent: 100 });
    expect(statusOf(r.body).webhook_simulator_used).toBe("fail");
    expect(r.body.recent_errors).toEqual([
      expect.objectContaining({ route: "/api/partner/sandbox/users/:user_id", status: 404, error_code: "not_found", key_id: key.keyId }),
    ]);
    expect(r.body.metrics.error_requests).toBe(1);
    const { bob } = await fixtureUsers(h, key);
    const withUser = await report(key, `?user_id=${bob.id}&limit=1`);
    expect(withUser.body.user).toEqual({
      user_id: String(bob.id),
      external_id: "fx-bob",
      status: "active",
      wallets: 1,
      ledger_entries: 2,
      idempotent_ledger_entries: 1,
    });
    expect((await sb(h, key, "GET", "/promotion-report?user_id=424242")).status).toBe(404);
    expect((await sb(h, key, "GET", "/promotion-report?limit=0")).status).toBe(400);
    expect((await sb(h, key, "GET", "/promotion-report?limit=abc")).status).toBe(400);
  });

  test("too many failing calls fail the error-rate check", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    await practise(key);
    for (let i = 0; i < 10; i++) await sb(h, key, "GET", `/users/${900000 + i}`);
    const r = await report(key);
    expect(statusOf(r.body).error_rate_below_threshold).toBe("fail");
    expect(r.body.ready).toBe(false);
    const check = r.body.checklist.find((c: { id: string }) => c.id === "error_rate_below_threshold");
    expect(check.observed).toBeGreaterThan(20);
  });
});

describe("POST /admin/partners/{partner}/promote", () => {
  test("refused with 409 promotion_not_ready carrying the report when not ready; nothing issued", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    await sb(h, key, "GET", "/verify");
    const r = await promote("Acme", {});
    expect(r.status).toBe(409);
    expect(r.body.error).toBe("promotion_not_ready");
    expect(r.body.details).toMatchObject({ partner: "Acme", ready: false, promotion_policy: "sandbox_to_live_manual_approval" });
    expect(r.body.details.checklist.length).toBeGreaterThan(0);
    expect(await countWhere(h, "partner_keys", "mode = 'live'")).toBe(0);
    expect(await countWhere(h, "admin_audit", "action = 'partner.promote'")).toBe(0);
    const catalog = await h.json("/api/partner/errors.json");
    expect(JSON.stringify(catalog.body)).toContain("promotion_not_ready");
  });

  test("granted when ready: a live key (secret shown once) with the sandbox scopes, and audit rows", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h, { scopes: ["read", "credit", "users", "webhooks"] });
    await practise(key);
    const r = await promote("Acme", { allowed_ips: ["10.0.0.0/8", "127.0.0.1"] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      success: true,
      partner: "Acme",
      promoted: true,
      forced: false,
      reason: null,
      promotion_policy: "sandbox_to_live_manual_approval",
      report: { ready: true },
    });
    expect(r.body.key).toMatchObject({
      partner: "Acme",
      mode: "live",
      status: "active",
      scopes: ["credit", "read", "users", "webhooks"],
      allowed_ips: ["10.0.0.0/8", "127.0.0.1/32"],
    });
    expect(r.body.key.key_id).toMatch(/^hk_live_/);
    expect(r.body.secret).toMatch(/^hsk_live_/);
    expect(JSON.stringify(await rows(h, "SELECT * FROM partner_keys"))).not.toContain(r.body.secret);
    const audit = await rows<{ action: string; target: string; details: string }>(
      h,
      "SELECT action, target, details FROM admin_audit WHERE action IN ('partner.promote', 'partner_key.create') AND target IN ('Acme', ?) ORDER BY id",
      r.body.key.key_id,
    );
    expect(audit.map((a) => a.action)).toEqual(["partner_key.create", "partner.promote"]);
    expect(JSON.parse(audit[1]!.details)).toMatchObject({ key_id: r.body.key.key_id, forced: false, ready: true, policy: "sandbox_to_live_manual_approval" });
    // The key works on live routes, and a second promotion is refused.
    const liveKey = { keyId: r.body.key.key_id, secret: r.body.secret, mode: "live" as const };
    expect((await signedJson(h, liveKey, "GET", "/api/partner/users")).status).toBe(200);
    const again = await promote("Acme", {});
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("conflict");
    // The partner's report now counts the live key.
    expect((await report(key)).body.active_live_keys).toBe(1);
  });

  test("forced with a reason when not ready; force without a reason is 400", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h, { partner: "Acme Corp" });
    await sb(h, key, "GET", "/verify");
    const noReason = await promote("Acme Corp", { force: true });
    expect(noReason.status).toBe(400);
    expect(noReason.body.details[0].field).toBe("reason");
    expect((await promote("Acme Corp", { force: true, reason: "   " })).status).toBe(400);
    const r = await promote("Acme Corp", { force: true, reason: "Launch partner; signed contract, integration reviewed by hand", scopes: ["read"] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ forced: true, reason: "Launch partner; signed contract, integration reviewed by hand", report: { ready: false } });
    expect(r.body.key).toMatchObject({ partner: "Acme Corp", scopes: ["read"] });
    const audit = await rows<{ details: string }>(h, "SELECT details FROM admin_audit WHERE action = 'partner.promote'");
    expect(JSON.parse(audit[0]!.details)).toMatchObject({
      forced: true,
      reason: "Launch partner; signed contract, integration reviewed by hand",
      ready: false,
    });
    expect(JSON.parse(audit[0]!.details).failing.length).toBeGreaterThan(0);
  });

  test("operators only; unknown partners 404; bad bodies 400", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    await sb(h, key, "GET", "/verify");
    const anon = await h.json("/admin/partners/Acme/promote", jsonInit("POST", {}));
    expect(anon.status).toBe(403);
    const partnerCred = await signedJson(h, key, "POST", "/admin/partners/Acme/promote", { body: {} });
    expect(partnerCred.status).toBe(403);
    expect((await promote("Nobody", { force: true, reason: "x" })).status).toBe(404);
    // A partner with only a live key has no sandbox history to judge.
    await createKey(h, { partner: "LiveOnly" });
    expect((await promote("LiveOnly", {})).status).toBe(404);
    for (const body of [{ scopes: ["admin"] }, { force: "yes" }, { allowed_ips: ["not-an-ip"] }, { extra: 1 }]) {
      const r = await promote("Acme", { force: true, reason: "x", ...body });
      expect(r.status).toBe(400);
    }
    expect(await countWhere(h, "partner_keys", "mode = 'live' AND partner = 'Acme'")).toBe(0);
  });
});
