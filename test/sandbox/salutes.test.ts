import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { countWhere, expectSandboxFields, fixtureUsers, rows, sandboxApp, sandboxKey, sb } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const entry = (userId: number, amount: unknown, extra: Record<string, unknown> = {}) => ({
  body: { user_id: String(userId), amount, reason: "quest_reward", source: "sandbox-test", ...extra },
});

describe("sandbox salutes balance and ledger", () => {
  test("the fixture balance equals the sum of its ledger, with currency", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { alice } = await fixtureUsers(h, key);
    const bal = await sb(h, key, "GET", `/salutes/balance?user_id=${alice.id}&include_meta=1`);
    expect(bal.status).toBe(200);
    expectSandboxFields(bal.body, "sandbox_state");
    expect(bal.body).toMatchObject({ user_id: String(alice.id), currency: "salutes", partner_key_id: key.keyId });
    const ledger = await sb(h, key, "GET", `/salutes/ledger?user_id=${alice.id}`);
    expectSandboxFields(ledger.body, "sandbox_state");
    expect(ledger.body.ledger.map((e: { reason: string }) => e.reason)).toEqual(["shop_purchase", "quest_reward", "welcome_bonus"]);
    const sum = ledger.body.ledger.reduce((s: number, e: { delta: number }) => s + e.delta, 0);
    expect(sum).toBe(bal.body.balance);
    expect(ledger.body.balance).toBe(bal.body.balance);
    const asc = await sb(h, key, "GET", `/salutes/ledger?user_id=${alice.id}&order=asc&reason=welcome_bonus&limit=1`);
    expect(asc.body.ledger).toHaveLength(1);
    expect(asc.body.query).toMatchObject({ order: "asc", reason: "welcome_bonus", source: null, limit: 1 });
  });

  test("unknown, foreign and live user ids are 404; bad queries are 400", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const live = await createKey(h, { partner: "Acme" });
    const liveUser = await signedJson(h, live, "POST", "/api/partner/users", { body: { external_id: "live-1" } });
    for (const id of ["0", "abc", "424242", String(liveUser.body.user.id)]) {
      expect((await sb(h, key, "GET", `/salutes/balance?user_id=${id}`)).status).toBe(404);
      expect((await sb(h, key, "GET", `/salutes/ledger?user_id=${id}`)).status).toBe(404);
    }
    expect((await sb(h, key, "GET", "/salutes/balance")).status).toBe(400);
    expect((await sb(h, key, "GET", "/salutes/ledger?user_id=1&order=sideways")).status).toBe(400);
    expect((await sb(h, key, "GET", "/salutes/ledger?user_id=1&limit=500")).status).toBe(400);
  });
});

describe("POST /api/partner/sandbox/salutes/credit and /debit", () => {
  test("credit and debit move the sandbox balance, write sandbox ledger rows and events", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { bob } = await fixtureUsers(h, key);
    const start = (await sb(h, key, "GET", `/salutes/balance?user_id=${bob.id}`)).body.balance as number;
    const c = await sb(h, key, "POST", "/salutes/credit", { ...entry(bob.id, 12.5), idempotencyKey: "credit-1" });
    expect(c.status).toBe(200);
    expectSandboxFields(c.body, "sandbox_state", true);
    expect(c.body).toMatchObject({ user_id: String(bob.id), balance: start + 12.5, delta: 12.5, idempotency_key: "credit-1" });
    const d = await sb(h, key, "POST", "/salutes/debit", entry(bob.id, 2.25));
    expect(d.body).toMatchObject({ balance: start + 10.25, delta: -2.25 });
    expect(await rows(h, "SELECT mode, key_id, idempotency_key FROM salutes_ledger WHERE id = ?", c.body.ledger_entry_id)).toEqual([
      { mode: "sandbox", key_id: key.keyId, idempotency_key: "credit-1" },
    ]);
    expect(await rows(h, "SELECT event_type, mode FROM events WHERE event_type LIKE 'salutes.%' ORDER BY id DESC LIMIT 2")).toEqual([
      { event_type: "salutes.debit", mode: "sandbox" },
      { event_type: "salutes.credit", mode: "sandbox" },
    ]);
    const replay = await sb(h, key, "POST", "/salutes/credit", { ...entry(bob.id, 12.5), idempotencyKey: "credit-1" });
    expect(replay.status).toBe(409);
    expect(replay.body.original_response.live_side_effects_performed).toBe(false);
    const reused = await sb(h, key, "POST", "/salutes/credit", { ...entry(bob.id, 13), idempotencyKey: "credit-1" });
    expect(reused.status).toBe(422);
  });

  test("never below zero (409 insufficient_balance); suspended fixture user refused; bad amounts 400", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { bob, carol } = await fixtureUsers(h, key);
    const before = await countWhere(h, "salutes_ledger");
    const over = await sb(h, key, "POST", "/salutes/debit", entry(bob.id, 1_000_000));
    expect(over.status).toBe(409);
    expect(over.body.error).toBe("insufficient_balance");
    expect((await sb(h, key, "POST", "/salutes/credit", entry(carol.id, 1))).status).toBe(409);
    for (const amount of [0, -1, 1.234, "5", null]) expect((await sb(h, key, "POST", "/salutes/credit", entry(bob.id, amount))).status).toBe(400);
    expect((await sb(h, key, "POST", "/salutes/credit", entry(bob.id, 1, { ammount: 1 }))).status).toBe(400);
    expect((await sb(h, key, "POST", "/salutes/credit", entry(bob.id, 1, { reason: "bad\u0007reason" }))).status).toBe(400);
    expect((await sb(h, key, "POST", "/salutes/credit", entry(424242, 1))).status).toBe(404);
    expect(await countWhere(h, "salutes_ledger")).toBe(before);
  });

  test("the nonce is optional for sandbox mutations unless SANDBOX_NONCE_REQUIRED; a reused nonce is 409", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { bob } = await fixtureUsers(h, key);
    expect((await sb(h, key, "POST", "/salutes/credit", { ...entry(bob.id, 1), nonce: null })).status).toBe(200);
    const nonce = "ab".repeat(16);
    expect((await sb(h, key, "POST", "/salutes/credit", { ...entry(bob.id, 1), nonce })).status).toBe(200);
    const again = await sb(h, key, "POST", "/salutes/credit", { ...entry(bob.id, 1), nonce });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("replay_detected");
  });

  test("each needs its own scope", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h, { scopes: ["read", "credit"] });
    const r = await sb(h, key, "POST", "/salutes/debit", entry(1, 1));
    expect(r.status).toBe(403);
    expect(r.body.message).toContain('"debit" scope');
    expect((await sb(h, key, "GET", "/salutes/ledger?user_id=1")).status).toBe(403);
  });
});

describe("sandbox mutations with only the headers the spec names", () => {
  test("credit, debit and donation-claim without a body use the fixture's defaults; given fields are validated as live", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const { alice } = await fixtureUsers(h, key);
    const before = (await sb(h, key, "GET", `/salutes/balance?user_id=${alice.id}`)).body.balance;
    const credit = await sb(h, key, "POST", "/salutes/credit", { body: "" });
    expect(credit.status).toBe(200);
    expectSandboxFields(credit.body, "sandbox_state", true);
    expect(credit.body).toMatchObject({ user_id: String(alice.id), delta: 1, balance: before + 1 });
    const debit = await sb(h, key, "POST", "/salutes/debit", { body: {} });
    expect(debit.body).toMatchObject({ user_id: String(alice.id), delta: -1, balance: before });
    const ledger = await sb(h, key, "GET", `/salutes/ledger?user_id=${alice.id}&limit=2`);
    expect(ledger.body.ledger.map((e: { reason: string; source: string }) => [e.reason, e.source])).toEqual([
      ["sandbox_test", "sandbox"],
      ["sandbox_test", "sandbox"],
    ]);
    const claim = await sb(h, key, "POST", "/donation-claim", { body: "" });
    expect(claim.status).toBe(200);
    expect(claim.body).toMatchObject({
      status: "sandbox_preview",
      claim_status: "sandbox_preview",
      claim_campaign_id: "sandbox-campaign",
      requested_claim: { campaign_id: "sandbox-campaign", recipient: { email: "recipient@sandbox.example.com" } },
    });
    // A field that is given is judged as on the live route; unknown fields are still refused.
    for (const body of [{ amount: -5 }, { reason: "tab\there" }, { colour: "red" }]) {
      const r = await sb(h, key, "POST", "/salutes/credit", { body });
      expect([JSON.stringify(body), r.status, r.body.error]).toEqual([JSON.stringify(body), 400, "invalid_payload"]);
    }
  });
});
