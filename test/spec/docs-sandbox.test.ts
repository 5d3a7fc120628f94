// Docs audit: the route table, defaults, fixtures, simulator and promotion of docs/sandbox.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const S = "/api/partner/sandbox";

describe("docs/sandbox.md", () => {
  // docs/sandbox.md:9-12 — a live key on a sandbox route and a sandbox key on a live route are 403 forbidden
  test("mode mismatch is 403 forbidden both ways", async () => {
    h = await openTestApp();
    const live = await createKey(h, { mode: "live" });
    const sbx = await createKey(h, { mode: "sandbox" });
    const a = await signedJson(h, live, "GET", `${S}/verify`);
    expect([a.status, a.body.error]).toEqual([403, "forbidden"]);
    const b = await signedJson(h, sbx, "GET", "/api/partner/users");
    expect([b.status, b.body.error]).toEqual([403, "forbidden"]);
  });

  // docs/sandbox.md:13-15 — nonce optional on sandbox mutations; Idempotency-Key required
  test("sandbox mutations take no nonce but need an Idempotency-Key", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    const ok = await signedJson(h, sbx, "POST", `${S}/salutes/credit`, { nonce: null });
    expect(ok.status).toBe(200);
    const noKey = await signedJson(h, sbx, "POST", `${S}/salutes/credit`, { idempotencyKey: null });
    expect([noKey.status, noKey.body.error]).toEqual([400, "idempotency_key_required"]);
  });

  // docs/sandbox.md:16-20 — mode, fixture_profile herald-sandbox-v1, source; rate limit 30 per minute per key
  test("answers carry mode, fixture_profile and source; X-RateLimit-Limit is 30", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    const v = await signedJson(h, sbx, "GET", `${S}/verify`);
    expect(v.body).toMatchObject({ mode: "sandbox", fixture_profile: "herald-sandbox-v1", source: "sandbox_fixture" });
    expect(v.headers.get("x-ratelimit-limit")).toBe("30");
    const u = await signedJson(h, sbx, "GET", `${S}/users`);
    expect(u.body.source).toBe("sandbox_state");
    const ts = await signedJson(h, sbx, "GET", `${S}/token-status`);
    expect(ts.body.rpc_url).toBe("sandbox://fixture");
    expect(ts.body.source).toBe("sandbox_fixture");
  });

  // docs/sandbox.md:37 — promotion-report limit 1–200, default 10
  test("promotion-report limit bounds", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    const r = await signedJson(h, sbx, "GET", `${S}/promotion-report`);
    expect(r.status).toBe(200);
    expect((await signedJson(h, sbx, "GET", `${S}/promotion-report?limit=201`)).status).toBe(400);
    expect((await signedJson(h, sbx, "GET", `${S}/promotion-report?limit=200`)).status).toBe(200);
    expect(JSON.stringify(r.body.checklist)).toContain("signed_calls_succeeded");
    for (let i = 0; i < 12; i++) await signedJson(h, sbx, "GET", `${S}/users/99999${i}`);
    await h.ctx.requestLog.flush();
    const again = await signedJson(h, sbx, "GET", `${S}/promotion-report`);
    expect(again.body.recent_errors.length).toBe(10);
    const three = await signedJson(h, sbx, "GET", `${S}/promotion-report?limit=3`);
    expect(three.body.recent_errors.length).toBe(3);
    expect(r.body).toMatchObject({ ready: false });
    expect(Object.keys(r.body.score).sort()).toEqual(["passed", "percent", "required"]);
  });

  // docs/sandbox.md:38 — donation-claim defaults: campaign sandbox-campaign, amount "10", recipient@sandbox.example.com
  test("donation-claim with an empty body uses the documented defaults", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    const r = await signedJson(h, sbx, "POST", `${S}/donation-claim`, { body: {} });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ claim_status: "sandbox_preview", email_sent: false, email_status: "not_sent_sandbox", live_side_effects_performed: false });
    expect(r.body.claim_url).toMatch(/\?sandbox=1$/);
    expect(JSON.stringify(r.body.requested_claim)).toContain("sandbox-campaign");
    expect(JSON.stringify(r.body.requested_claim)).toContain("recipient@sandbox.example.com");
    expect(r.body.claim_campaign_id).toBe("sandbox-campaign");
  });

  // docs/sandbox.md:39-41 — credit defaults: fx-alice, amount 1, reason sandbox_test, source sandbox; currency salutes
  test("credit with headers alone credits fx-alice 1 with reason sandbox_test, source sandbox", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    const users = (await signedJson(h, sbx, "GET", `${S}/users`)).body.users as any[];
    const alice = users.find((u) => u.external_id === "fx-alice");
    expect(alice).toMatchObject({ username: "fx_alice", status: "active", is_verified: true });
    expect(users.find((u) => u.external_id === "fx-carol").status).toBe("suspended");
    const before = (await signedJson(h, sbx, "GET", `${S}/salutes/balance?user_id=${alice.id}`)).body;
    expect(before.currency).toBe("salutes");
    const c = await signedJson(h, sbx, "POST", `${S}/salutes/credit`);
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ user_id: String(alice.id), delta: 1, balance: before.balance + 1, live_side_effects_performed: false });
    const led = (await signedJson(h, sbx, "GET", `${S}/salutes/ledger?user_id=${alice.id}&limit=1`)).body;
    expect(led.ledger[0]).toMatchObject({ reason: "sandbox_test", source: "sandbox", delta: 1 });
    const d = await signedJson(h, sbx, "POST", `${S}/salutes/debit`);
    expect(d.body).toMatchObject({ delta: -1, balance: before.balance });
  });

  // docs/sandbox.md:44 — GET users/{id}?external_id mismatch → 404
  test("users/{id} with a mismatched external_id is 404", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    const users = (await signedJson(h, sbx, "GET", `${S}/users`)).body.users as any[];
    const alice = users.find((u) => u.external_id === "fx-alice");
    expect((await signedJson(h, sbx, "GET", `${S}/users/${alice.id}?external_id=fx-alice`)).status).toBe(200);
    expect((await signedJson(h, sbx, "GET", `${S}/users/${alice.id}?external_id=fx-bob`)).status).toBe(404);
  });

  // docs/sandbox.md:50 — sandbox webhook-events order desc default, asc accepted, other refused
  test("webhook-events order", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    expect((await signedJson(h, sbx, "GET", `${S}/webhook-events`)).status).toBe(200);
    expect((await signedJson(h, sbx, "GET", `${S}/webhook-events?order=asc`)).status).toBe(200);
    expect((await signedJson(h, sbx, "GET", `${S}/webhook-events?order=up`)).status).toBe(400);
  });

  // docs/sandbox.md:200-212 — simulator: default secret, unknown scenario 404 with valid ids, secret+webhook_id 400, deterministic
  test("webhook simulator run details", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    const a = await signedJson(h, sbx, "POST", `${S}/webhook-simulator/run`, { body: { scenario_id: "claim_created" } });
    expect(a.status).toBe(200);
    expect(a.body.selected_scenario_id).toBe("claim_created");
    expect(a.body.payload.sandbox).toBe(true);
    expect(a.body.simulation).toMatchObject({ secret: "whsec_sandbox_simulator_default", sent: false });
    const hd = a.body.simulation.headers;
    expect(Object.keys(hd).sort()).toEqual(
      expect.arrayContaining(["X-Partner-Key", "X-Webhook-Event", "X-Webhook-Id", "X-Webhook-Signature", "X-Webhook-Timestamp"]),
    );
    expect(hd["X-Partner-Key"]).toBe(sbx.keyId);
    expect(hd["X-Webhook-Signature"]).toBe(createHmac("sha256", "whsec_sandbox_simulator_default").update(a.body.simulation.signed_string).digest("hex"));
    const b = await signedJson(h, sbx, "POST", `${S}/webhook-simulator/run`, { body: { scenario_id: "claim_created" } });
    expect(b.body.simulation.body).toBe(a.body.simulation.body);
    const nf = await signedJson(h, sbx, "POST", `${S}/webhook-simulator/run`, { body: { scenario_id: "nope" } });
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
    expect(nf.body.details.valid_scenario_ids).toContain("claim_created");
    const both = await signedJson(h, sbx, "POST", `${S}/webhook-simulator/run`, { body: { scenario_id: "claim_created", secret: "s", webhook_id: 1 } });
    expect(both.status).toBe(400);
    const sc = (await signedJson(h, sbx, "GET", `${S}/webhook-simulator/scenarios`)).body;
    expect(sc.scenarios.map((s: any) => s.id).sort()).toEqual([
      "claim_created",
      "claim_redeemed",
      "delivery_failed",
      "salutes_credit",
      "salutes_debit",
      "user_updated",
    ]);
    for (const s of sc.scenarios) expect(Object.keys(s)).toEqual(expect.arrayContaining(["id", "title", "event_type", "description"]));
    const kid = await signedJson(h, sbx, "POST", `${S}/webhook-simulator/run`, { body: { scenario_id: "claim_created", key_id: "hk_test_other" } });
    expect(kid.body.simulation.headers["X-Partner-Key"]).toBe("hk_test_other");
  });

  // docs/sandbox.md:257-266 — promote: not ready 409 promotion_not_ready; force without reason 400; force with reason 201; again 409 conflict; unknown 404
  test("operator promotion answers", async () => {
    h = await openTestApp();
    await createKey(h, { mode: "sandbox", partner: "Acme" });
    const admin = await createAdminToken(h);
    const auth = { authorization: `Bearer ${admin}` };
    const nr = await h.json("/admin/partners/Acme/promote", jsonInit("POST", {}, auth));
    expect([nr.status, nr.body.error]).toEqual([409, "promotion_not_ready"]);
    expect(nr.body.details).toBeDefined();
    const noReason = await h.json("/admin/partners/Acme/promote", jsonInit("POST", { force: true }, auth));
    expect(noReason.status).toBe(400);
    const forced = await h.json("/admin/partners/Acme/promote", jsonInit("POST", { force: true, reason: "pilot" }, auth));
    expect(forced.status).toBe(201);
    expect(forced.body.forced).toBe(true);
    expect(typeof forced.body.secret).toBe("string");
    const again = await h.json("/admin/partners/Acme/promote", jsonInit("POST", { force: true, reason: "pilot" }, auth));
    expect([again.status, again.body.error]).toEqual([409, "conflict"]);
    const none = await h.json("/admin/partners/Nobody/promote", jsonInit("POST", {}, auth));
    expect(none.status).toBe(404);
  });

  // docs/sandbox.md:165-174 — reset answers deleted counts and reseeds
  test("reset with no body answers 200 and reseeds the fixtures", async () => {
    h = await openTestApp();
    const sbx = await createKey(h, { mode: "sandbox" });
    await signedJson(h, sbx, "POST", `${S}/users`, { body: { external_id: "sbx-docs-1", username: "sandy" } });
    const r = await signedJson(h, sbx, "POST", `${S}/reset`);
    expect(r.status).toBe(200);
    expect(r.body.live_side_effects_performed).toBe(false);
    expect(r.body.deleted).toBeDefined();
    const users = (await signedJson(h, sbx, "GET", `${S}/users`)).body.users as any[];
    expect(users.map((u) => u.external_id).sort()).toEqual(["fx-alice", "fx-bob", "fx-carol"]);
  });
});
