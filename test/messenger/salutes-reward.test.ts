// Salutes rewards (issue 18, Economy): paid to the linked MESSENGER_SALUTES_PARTNER user only, through the
// salutes service (a ledger entry and a salutes.credit event), once per claim even when the claim is replayed —
// and once per partner user, however many players are linked to it (issue 30, item 10).
import { afterEach, describe, expect, test } from "bun:test";
import { ed25519 } from "@noble/curves/ed25519";
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import { jsonInit, type TestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { openMessengerApp, initDataFor, tmaPost } from "./support";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

describe("salutes rewards", () => {
  test("a promo's salutes go to the linked partner user once; an unlinked player gets the game reward only", async () => {
    h = await openMessengerApp({ env: { MESSENGER_SALUTES_PARTNER: "Acme" } });
    const admin = await createAdminToken(h);
    const key = await createKey(h, { partner: "Acme", mode: "live" });
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
    const events = (await h.ctx.store.all("SELECT event_type, data FROM events WHERE partner = 'Acme' AND event_type = 'salutes.credit'")) as Array<{
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

  test("one wallet proven by two players: both link to its partner user, whose salutes for a reward are paid once", async () => {
    h = await openMessengerApp({ env: { MESSENGER_SALUTES_PARTNER: "Acme" } });
    const admin = await createAdminToken(h);
    const key = await createKey(h, { partner: "Acme", mode: "live" });
    const kp = Keypair.generate();
    const address = kp.publicKey.toBase58();
    const user = await signedJson(h, key, "POST", "/api/partner/users", { body: { external_id: "ext-w", username: "holder" } });
    const userId = String(user.body.user.id);
    expect(
      (await signedJson(h, key, "POST", `/api/partner/users/${userId}/wallets`, { body: { wallet_address: address, is_primary: true } })).status,
    ).toBeLessThan(300);
    const adminPost = (path: string, body: unknown) => h.json(path, jsonInit("POST", body, { authorization: `Bearer ${admin}` }));
    const as = (id: number, path: string, body: Record<string, unknown> = {}) => h.json(path, tmaPost(initDataFor(h, { id }), body));
    // A server mission counting wallet proofs, with salutes: both players enroll before proving.
    const mission = {
      mission_key: "prove-1",
      title: "Prove a wallet",
      event_type: "wallet.proof",
      target: 1,
      reward: { points: 1, salutes: "1" },
      daily_cap: 1,
      per_minute_cap: 1,
    };
    expect((await adminPost("/api/messenger/admin/missions", mission)).status).toBe(200);
    expect((await adminPost("/api/messenger/admin/games/promos", { code: "SALUTE5", reward: { points: 5, salutes: "2.5" }, max_claims: 10 })).status).toBe(200);
    for (const id of [1, 2]) {
      await as(id, "/api/messenger/missions/enroll", { mission_key: "prove-1" });
      const { nonce, message } = (await as(id, "/api/messenger/wallet-proof/challenge", { address })).body.challenge;
      const signature = bs58.encode(ed25519.sign(new TextEncoder().encode(message), kp.secretKey.slice(0, 32)));
      const proved = await as(id, "/api/messenger/wallet-claim/verify", { address, nonce, message, signature });
      expect([id, proved.status, proved.body.linked_user_id]).toEqual([id, 200, userId]);
    }

    const first = await as(1, "/api/messenger/games/promos/claim", { request_id: "claim-w-0001", code: "SALUTE5" });
    expect(first.body.salutes).toMatchObject({ amount: "2.5", paid: true, partner_user_id: userId });
    const second = await as(2, "/api/messenger/games/promos/claim", { request_id: "claim-w-0002", code: "SALUTE5" });
    expect(second.status).toBe(200);
    expect(second.body.balances.points_balance).toBe(5); // the game reward is the player's own
    expect(second.body.salutes).toMatchObject({ amount: "2.5", paid: false, partner_user_id: userId, salutes_ledger_entry_id: null });
    expect(second.body.salutes.reason).toContain("once per partner user");

    const done = [];
    for (const id of [1, 2])
      done.push((await as(id, "/api/messenger/missions/progress", { mission_key: "prove-1", client_event_id: `prove-${id}-0001` })).body);
    expect(done.map((d) => [d.completed, d.observed, d.reward_paid?.points, d.salutes.paid])).toEqual([
      [true, 1, 1, true],
      [true, 1, 1, false],
    ]);

    // The user was credited 2.5 + 1 once each: one salutes.credit per reward, one guard row per reward.
    const balance = await signedJson(h, key, "GET", `/api/salutes/balance?user_id=${userId}`);
    expect(balance.body.balance).toBe(3.5);
    const credits = await h.ctx.store.get("SELECT COUNT(*) AS n FROM events WHERE partner = 'Acme' AND event_type = 'salutes.credit'");
    expect(credits).toEqual({ n: 2 });
    const guards = await h.ctx.store.all("SELECT reward_key, telegram_user_id FROM messenger_salutes_rewards ORDER BY reward_key");
    expect(guards).toEqual([
      { reward_key: "mission:prove-1", telegram_user_id: 1 },
      { reward_key: "promo:SALUTE5", telegram_user_id: 1 },
    ]);
  });
});
