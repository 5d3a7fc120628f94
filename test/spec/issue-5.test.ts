// Issue 5 (partner domain), re-verified over HTTP against the suite's target (test/support/target.ts): the in-process
// app by default, `bun src/main.ts serve` with HERALD_TEST_TARGET=source. test/partner, test/salutes and
// test/donations hold every claim in process; test/e2e covers users, wallets and credits served. These are the
// claims no served pass covered: donation claims and their redeem, conversions, usage's window bounds, isolation.
import { afterEach, expect, test } from "bun:test";
import { createKey, signedJson } from "../support/partner";
import { startTarget, type TargetApp } from "../support/target";

let h: TargetApp | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const newUser = async (t: TargetApp, key: Awaited<ReturnType<typeof createKey>>, ext: string) => {
  const r = await signedJson(t, key, "POST", "/api/partner/users", { body: { external_id: ext, username: `u_${ext}` } });
  expect(r.status).toBe(201);
  return String(r.body.user.id);
};

test("issue 5: a donation claim is issued with an unguessable code and redeemed exactly once; another partner sees 404", async () => {
  h = await startTarget();
  const a = await createKey(h);
  const b = await createKey(h, { partner: "Other" });
  const claim = await signedJson(h, a, "POST", "/api/partner/donation-claim", {
    body: { campaign_id: "spring", amount: 12.5, recipient: { email: "r@example.com" } },
  });
  expect(claim.status).toBe(200);
  expect(claim.body).toMatchObject({ status: "issued", claim_status: "issued", partner_key_id: a.keyId, email_sent: false });
  expect(claim.body.claim_code).toMatch(/^dc_[a-z2-7]{26,}$/);
  const none = await signedJson(h, a, "POST", "/api/partner/donation-claim", { body: { campaign_id: "spring", amount: 1, recipient: {} } });
  expect([none.status, none.body.error]).toEqual([400, "invalid_payload"]);
  const path = `/api/partner/donation-claims/${claim.body.claim_code}/redeem`;
  expect((await signedJson(h, b, "POST", path, { body: {} })).status).toBe(404);
  const first = await signedJson(h, a, "POST", path, { body: {} });
  expect([first.status, first.body.claim.claim_status]).toEqual([200, "redeemed"]);
  const again = await signedJson(h, a, "POST", path, { body: {} });
  expect([again.status, again.body.error]).toEqual([409, "claim_already_redeemed"]);
  const events = await h.ctx.store.all<{ event_type: string }>("SELECT event_type FROM events WHERE event_type LIKE 'donation.%' ORDER BY id", []);
  expect(events.map((e) => e.event_type)).toEqual(["donation.claim", "donation.claim_redeemed"]);
});

test("issue 5: conversion off is 403 conversion_disabled; on, it debits the ledger and records a completed conversion", async () => {
  h = await startTarget();
  const key = await createKey(h);
  const user = await newUser(h, key, "conv1");
  expect((await signedJson(h, key, "POST", "/api/salutes/credit", { body: { user_id: user, amount: 100, reason: "r", source: "s" } })).status).toBe(200);
  const off = await signedJson(h, key, "POST", "/api/salutes/convert", { body: { user_id: user, amount: 20 } });
  expect([off.status, off.body.error]).toEqual([403, "conversion_disabled"]);
  const policy = await signedJson(h, key, "GET", "/api/salutes/conversion-policy");
  expect(Object.keys(policy.body.policy)).toEqual(expect.arrayContaining(["enabled", "rate", "min", "max", "daily_cap"]));
  await h.stop();

  h = await startTarget({ env: { SALUTES_CONVERSION_ENABLED: "1", SALUTES_CONVERSION_RATE: "0.5" } });
  const k2 = await createKey(h);
  const u2 = await newUser(h, k2, "conv2");
  await signedJson(h, k2, "POST", "/api/salutes/credit", { body: { user_id: u2, amount: 100, reason: "r", source: "s" } });
  const below = await signedJson(h, k2, "POST", "/api/salutes/convert", { body: { user_id: u2, amount: 1 } });
  expect(below.status).toBe(400);
  const conv = await signedJson(h, k2, "POST", "/api/salutes/convert", { body: { user_id: u2, amount: 20 } });
  expect(conv.status).toBe(200);
  expect(conv.body).toMatchObject({ conversion: { amount: 20, converted_amount: "10", status: "completed" }, balance: 80 });
  const ledger = await signedJson(h, k2, "GET", `/api/salutes/ledger?user_id=${u2}`);
  expect(ledger.body.balance).toBe(80);
  expect(ledger.body.ledger.reduce((s: number, e: { delta: number }) => s + e.delta, 0)).toBe(80);
});

test("issue 5: usage analytics takes hours 1–720 only; salutes of another partner's user are 404", async () => {
  h = await startTarget();
  const a = await createKey(h);
  const b = await createKey(h, { partner: "Other" });
  for (const [hours, status] of [
    ["0", 400],
    ["721", 400],
    ["abc", 400],
    ["1", 200],
    ["720", 200],
  ] as const) {
    const r = await signedJson(h, a, "GET", `/api/partner/analytics/usage?hours=${hours}`);
    expect([hours, r.status]).toEqual([hours, status]);
    if (status === 200) expect(r.body.window.hours).toBe(Number(hours));
  }
  const user = await newUser(h, a, "iso1");
  expect((await signedJson(h, b, "GET", `/api/salutes/balance?user_id=${user}`)).status).toBe(404);
  expect((await signedJson(h, b, "GET", `/api/salutes/ledger?user_id=${user}`)).status).toBe(404);
  expect((await signedJson(h, b, "POST", "/api/salutes/credit", { body: { user_id: user, amount: 1, reason: "r", source: "s" } })).status).toBe(404);
  expect((await signedJson(h, b, "GET", `/api/partner/users/${user}`)).status).toBe(404);
});
