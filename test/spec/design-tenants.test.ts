// Design audit: one partner never reaches another's rows, on every signed route that names a row (docs/design.md §7
// "Sandbox keys see only sandbox state"; brief: "a tenant seeing another's data"), and a donation claim is
// redeemed once under concurrency (docs/donations.md "exactly once … however many arrive at the same moment").
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

test("partner B gets 404 (or an empty list) on every route naming partner A's user, webhook, delivery or claim", async () => {
  h = await openTestApp();
  const a = await createKey(h);
  const b = await createKey(h, { partner: "Other" });
  const user = (await signedJson(h, a, "POST", "/api/partner/users", { body: { external_id: "ta", username: "uta" } })).body.user.id as number;
  await signedJson(h, a, "POST", "/api/salutes/credit", { body: { user_id: String(user), amount: 5, reason: "r", source: "s" } });
  const wh = (await signedJson(h, a, "POST", "/api/partner/webhooks", { body: { event_type: "webhook.test", target_url: "https://example.com/h" } })).body
    .webhook.id as number;
  const test1 = (await signedJson(h, a, "POST", `/api/partner/webhooks/${wh}/test`)).body;
  const claim = await signedJson(h, a, "POST", "/api/partner/donation-claim", {
    body: { campaign_id: "c1", amount: "1.5", recipient: { email: "fan@example.com" }, user_id: String(user) },
  });
  expect(claim.status).toBe(200);
  const code = claim.body.claim_code as string;

  const notFound: Array<[string, string, unknown?]> = [
    ["GET", `/api/partner/users/${user}`],
    ["PATCH", `/api/partner/users/${user}`, { display_name: "B" }],
    ["POST", `/api/partner/users/${user}/wallets`, { wallet_address: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" }],
    ["GET", `/api/salutes/balance?user_id=${user}`],
    ["GET", `/api/salutes/ledger?user_id=${user}`],
    ["POST", "/api/salutes/credit", { user_id: String(user), amount: 1, reason: "r", source: "s" }],
    ["POST", "/api/salutes/debit", { user_id: String(user), amount: 1, reason: "r", source: "s" }],
    ["POST", `/api/partner/webhooks/${wh}/test`],
    ["POST", `/api/partner/webhooks/${wh}/rotate-secret`, {}],
    ["DELETE", `/api/partner/webhooks/${wh}`],
    ["GET", `/api/partner/donation-claims/${code}`],
    ["POST", `/api/partner/donation-claims/${code}/redeem`],
    ["POST", "/api/partner/donation-claim", { campaign_id: "c1", amount: "1", recipient: { email: "x@example.com" }, user_id: String(user) }],
  ];
  for (const [method, path, body] of notFound) {
    const r = await signedJson(h, b, method, path, body === undefined ? {} : { body });
    expect(`${method} ${path} ${r.status}`).toBe(`${method} ${path} 404`);
  }
  const events = await signedJson(h, b, "GET", `/api/partner/webhook-events?webhook_id=${wh}`);
  expect(events.body.count ?? events.body.events.length).toBe(0);
  const replay = await signedJson(h, b, "POST", "/api/partner/webhook-events/replay", { body: { event_ids: [test1.event_id] } });
  expect(replay.body.results[0]).toMatchObject({ replayed: false, error: "not_found" });
  expect((await signedJson(h, b, "GET", "/api/partner/user-lookup?q=ta")).body.count).toBe(0);
  expect((await signedJson(h, b, "GET", "/api/partner/webhooks")).body.count).toBe(0);
  // A's rows are unchanged.
  expect((await signedJson(h, a, "GET", `/api/salutes/balance?user_id=${user}`)).body.balance).toBe(5);
  expect((await signedJson(h, a, "GET", `/api/partner/donation-claims/${code}`)).body.claim_status ?? "issued").toBe("issued");
});

// docs/donations.md: "redeem moves it to redeemed exactly once; every later redeem is 409 claim_already_redeemed,
// however many arrive at the same moment"
test("six concurrent redeems of one claim: one 200, five 409 claim_already_redeemed", async () => {
  h = await openTestApp();
  const a = await createKey(h);
  const claim = await signedJson(h, a, "POST", "/api/partner/donation-claim", {
    body: { campaign_id: "c1", amount: "2", recipient: { email: "fan@example.com" } },
  });
  const path = `/api/partner/donation-claims/${claim.body.claim_code}/redeem`;
  const answers = await Promise.all(Array.from({ length: 6 }, () => h.json(path, signedInit(h, a, "POST", path))));
  expect(answers.filter((r) => r.status === 200).length).toBe(1);
  for (const r of answers.filter((r) => r.status !== 200)) expect([r.status, r.body.error]).toEqual([409, "claim_already_redeemed"]);
});
