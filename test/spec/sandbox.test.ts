// Spec conformance: the sandbox variants' extra fields (spec "Sandbox operations" and the resource notes).
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});
const SB = "/api/partner/sandbox";

test("sandbox answers carry mode, fixture_profile, source; mutations live_side_effects_performed=false; variants add their fields", async () => {
  h = await openTestApp();
  const sb = await createKey(h, { mode: "sandbox" });
  const users = (await signedJson(h, sb, "GET", `${SB}/users?include_wallets=1&status=active`)).body;
  const uid = String(users.users[0].id);
  const reads = [
    `${SB}/verify`,
    `${SB}/token-status`,
    `${SB}/promotion-report`,
    `${SB}/users`,
    `${SB}/webhooks`,
    `${SB}/webhook-events`,
    `${SB}/salutes/balance?user_id=${uid}`,
    `${SB}/salutes/ledger?user_id=${uid}`,
    `${SB}/webhook-simulator/scenarios`,
  ];
  for (const p of reads) {
    const r = await signedJson(h, sb, "GET", p);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ mode: "sandbox", fixture_profile: expect.any(String), source: expect.any(String) });
  }
  // Nonce optional for sandbox mutations (sandbox policy), Idempotency-Key sent.
  const credit = await signedJson(h, sb, "POST", `${SB}/salutes/credit`, { body: { user_id: uid, amount: 1, reason: "r", source: "s" }, nonce: null });
  expect(credit.body).toMatchObject({ mode: "sandbox", live_side_effects_performed: false, user_id: uid, delta: 1 });
  const bal = (await signedJson(h, sb, "GET", `${SB}/salutes/balance?user_id=${uid}`)).body;
  expect(Object.keys(bal)).toEqual(expect.arrayContaining(["user_id", "balance", "partner_key_id", "currency"]));
  const ts = (await signedJson(h, sb, "GET", `${SB}/token-status`)).body;
  expect(Object.keys(ts.chain)).toEqual(
    expect.arrayContaining([
      "total_supply",
      "treasury_balance",
      "reserve_balance",
      "tracked_treasury_balance",
      "circulating_supply",
      "holders",
      "holders_source",
    ]),
  );
  expect(Object.keys(ts)).toEqual(expect.arrayContaining(["mint", "decimals", "rpc_url"]));
  const claim = (await signedJson(h, sb, "POST", `${SB}/donation-claim`, { body: { campaign_id: "c", amount: 5, recipient: { email: "a@b.co" } } })).body;
  expect(claim).toMatchObject({ claim_status: "sandbox_preview", live_side_effects_performed: false, email_sent: false });
  expect(Object.keys(claim)).toEqual(expect.arrayContaining(["status", "claim_code", "partner_key_id", "claim_url", "claim_campaign_id", "requested_claim"]));
  const wh = (await signedJson(h, sb, "POST", `${SB}/webhooks`, { body: { event_type: "salutes.credit", target_url: "https://example.com/sb" } })).body.webhook;
  const t = (await signedJson(h, sb, "POST", `${SB}/webhooks/${wh.id}/test`)).body;
  expect(t).toMatchObject({ queued: true, webhook_id: wh.id, event_type: "webhook.test", live_side_effects_performed: false });
  expect(t.simulation.headers["X-Webhook-Signature"]).toMatch(/^[0-9a-f]{64}$/);
  const rp = (await signedJson(h, sb, "POST", `${SB}/webhook-events/replay`, { body: { event_ids: [t.delivery_id, 999_999] } })).body;
  // The test delivery is still pending (not yet sent), so it is not replayed; the unknown id is not_found.
  expect(rp).toMatchObject({ count: 2, replayed_count: 0, failed_count: 2, live_side_effects_performed: false });
  expect(rp.results.map((r: any) => [r.event_id, r.replayed, r.error])).toEqual([
    [t.delivery_id, false, "already_pending"],
    [999_999, false, "not_found"],
  ]);
  for (const r of rp.results) expect("simulation" in r).toBe(true);
  const del = (await signedJson(h, sb, "DELETE", `${SB}/webhooks/${wh.id}`)).body;
  expect(del).toMatchObject({ deleted: true, webhook_id: wh.id, live_side_effects_performed: false });
});

test("webhook simulator: scenarios, run metadata and a run's signed simulation", async () => {
  h = await openTestApp();
  const sb = await createKey(h, { mode: "sandbox" });
  const sc = (await signedJson(h, sb, "GET", `${SB}/webhook-simulator/scenarios`)).body;
  expect(sc.scenarios_count).toBe(sc.scenarios.length);
  expect(sc.scenarios).toContainEqual(expect.objectContaining({ id: "claim_created", title: "Donation Claim Created", event_type: "donation.claim" }));
  const titles = sc.scenarios.map((s: any) => `${s.title}|${s.event_type}`);
  expect(titles).toEqual(expect.arrayContaining(["Donation Claim Redeemed|donation.claim_redeemed", "Webhook Delivery Failed|webhook.delivery_failed"]));
  const meta = (await signedJson(h, sb, "GET", `${SB}/webhook-simulator/run`)).body;
  expect(meta).toMatchObject({ method: "POST", required_fields: ["scenario_id"], optional_fields: ["secret", "key_id"] });
  const run = (await signedJson(h, sb, "POST", `${SB}/webhook-simulator/run`, { body: { scenario_id: "claim_created" } })).body;
  expect(run.selected_scenario_id).toBe("claim_created");
  expect(Object.keys(run.simulation.headers)).toEqual(expect.arrayContaining(["X-Webhook-Timestamp", "X-Webhook-Signature", "X-Partner-Key"]));
});
