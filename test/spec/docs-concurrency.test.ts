// Docs audit: the "at the same moment" claims of docs/donations.md, docs/messenger.md and docs/sandbox.md, sent
// concurrently to the real app (on either engine).
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("concurrent requests as documented", () => {
  // docs/donations.md:24-26 — redeem moves a claim once, however many arrive at the same moment
  test("ten concurrent redeems: one 200, nine 409 claim_already_redeemed", async () => {
    h = await openMessengerApp();
    const k = await createKey(h);
    const c = (
      await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { campaign_id: "c", amount: "1", recipient: { email: "fan@example.com" } } })
    ).body;
    const all = await Promise.all(Array.from({ length: 10 }, () => signedJson(h, k, "POST", `/api/partner/donation-claims/${c.claim_code}/redeem`)));
    const codes = all.map((r) => (r.status === 200 ? "ok" : r.body.error)).sort();
    expect(codes).toEqual(["claim_already_redeemed", ...Array(8).fill("claim_already_redeemed"), "ok"].sort());
  });

  // docs/messenger.md:647-648 — a promo's cap is enforced in the claim's UPDATE: racing claims cannot pass it
  test("racing promo claims never pass max_claims", async () => {
    h = await openMessengerApp();
    const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
    await h.json("/api/messenger/admin/games/promos", jsonInit("POST", { code: "RACE", reward: { points: 10 }, max_claims: 3, audience_group: "all" }, admin));
    const all = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        h.request("/api/messenger/games/promos/claim", tmaPost(initDataFor(h, { id: 1000 + i }), { request_id: `r-${i}`, code: "RACE" })),
      ),
    );
    const statuses = await Promise.all(all.map(async (r) => [r.status, ((await r.json()) as any).error ?? "ok"]));
    expect(statuses.filter(([s]) => s === 200).length).toBe(3);
    expect(statuses.filter(([, e]) => e === "promo_exhausted").length).toBe(9);
    const l = await h.json("/api/messenger/admin/games/promos", { headers: admin });
    expect(l.body.promos[0].claims).toBe(3);
  });

  // docs/messenger.md:345-348 — the same request_id sent concurrently applies once and replays
  test("the same purchase request_id sent eight times at once is applied once", async () => {
    h = await openMessengerApp();
    const init = initDataFor(h, { id: 4242 });
    await h.request("/api/messenger/games/welcome-gift/open", tmaPost(init));
    const all = await Promise.all(
      Array.from({ length: 8 }, () =>
        h.request("/api/messenger/games/items/purchase", tmaPost(init, { request_id: "buy-1", item_key: "missile", quantity: 1 })),
      ),
    );
    const bodies = (await Promise.all(all.map((r) => r.json()))) as any[];
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(bodies.filter((b) => b.replayed === false).length).toBe(1);
    const v = (await (await h.request("/api/messenger/init/verify", tmaPost(init))).json()) as any;
    expect(v.balances).toMatchObject({ missile_balance: 6, points_balance: 30 });
  });

  // docs/sandbox.md:177-186 — resets of one partner take turns; every one answers 200
  test("five concurrent sandbox resets all answer 200 and leave the fixtures", async () => {
    h = await openMessengerApp();
    const s = await createKey(h, { mode: "sandbox" });
    await signedJson(h, s, "POST", "/api/partner/sandbox/users", { body: { external_id: "sbx-1", username: "sandy" } });
    const all = await Promise.all(Array.from({ length: 5 }, () => signedJson(h, s, "POST", "/api/partner/sandbox/reset")));
    expect(all.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const users = (await signedJson(h, s, "GET", "/api/partner/sandbox/users")).body.users.map((u: any) => u.external_id).sort();
    expect(users).toEqual(["fx-alice", "fx-bob", "fx-carol"]);
    const counts = all.map((r) => r.body.fixtures.reset_count).sort();
    expect(new Set(counts).size).toBe(5);
  });
});
