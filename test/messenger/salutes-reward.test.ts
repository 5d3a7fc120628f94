// Salutes rewards (issue 18, Economy): paid to the linked MESSENGER_SALUTES_PARTNER user only, through the
// salutes service (a ledger entry and a salutes.credit event), once per claim even when the claim is replayed.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { createMessengerApp, initDataFor, tmaPost } from "./support";

let h: TestApp;
afterEach(() => h?.close());

describe("salutes rewards", () => {
  test("a promo's salutes go to the linked partner user once; an unlinked player gets the game reward only", async () => {
    h = createMessengerApp({ env: { MESSENGER_SALUTES_PARTNER: "Acme" } });
    const admin = createAdminToken(h);
    const key = createKey(h, { partner: "Acme", mode: "live" });
    const user = await signedJson(h, key, "POST", "/api/partner/users", { body: { external_id: "ext-9", username: "linked" } });
    const userId = String(user.body.user.id);
    const adminPost = (path: string, body: unknown) => h.json(path, jsonInit("POST", body, { authorization: `Bearer ${admin}` }));
    expect((await adminPost("/api/messenger/admin/games/promos", { code: "SALUTE5", reward: { points: 5, salutes: "2.5" }, max_claims: 10 })).status).toBe(200);
    const as = (id: number, body: Record<string, unknown>) => h.json("/api/messenger/games/promos/claim", tmaPost(initDataFor(h, { id }), body));

    await h.json("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 1 }), {}));
    expect((await adminPost("/api/messenger/admin/players/1/link", { user_id: userId, reason: "test" })).status).toBe(200);
    const paid = await as(1, { request_id: "claim-salute-1", code: "SALUTE5" });
    expect(paid.status).toBe(200);
    expect(paid.body.salutes).toMatchObject({ amount: "2.5", paid: true, partner_user_id: userId, reason: null });
    const replay = await as(1, { request_id: "claim-salute-1", code: "SALUTE5" });
    expect(replay.body).toMatchObject({ replayed: true, salutes: { paid: true } });
    const balance = await signedJson(h, key, "GET", `/api/salutes/balance?user_id=${userId}`);
    expect(balance.body.balance).toBe(2.5);
    const events = h.ctx.db.sqlite.query("SELECT event_type, data FROM events WHERE partner = 'Acme' AND event_type = 'salutes.credit'").all() as Array<{
      data: string;
    }>;
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ user_id: userId, delta: 2.5, reason: "messenger_promo", source: "messenger" });

    const unlinked = await as(2, { request_id: "claim-salute-2", code: "SALUTE5" });
    expect(unlinked.status).toBe(200);
    expect(unlinked.body.balances.points_balance).toBe(5);
    expect(unlinked.body.salutes).toMatchObject({ paid: false, partner_user_id: null });
    expect(unlinked.body.salutes.reason).toContain("not linked");
  });
});
