import { afterEach, describe, expect, test } from "bun:test";
import { verificationOf } from "../../src/partner/wallet-verification";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { createUser, expectPartnerAuth, linkWallet, sol } from "./user-fixtures";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const DAY_S = 86_400;
const verify = (key: TestKey, address: string, qs = "") => signedJson(h, key, "GET", `/api/partner/wallet-verification/${address}${qs}`);

describe("GET /api/partner/wallet-verification/{wallet_address}", () => {
  test("an unverified link: states, verification, owner and the state model", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const user = (await createUser(h, key, { external_id: "ext-1", wallet_address: sol(1) })).body.user;
    const r = await verify(key, sol(1), "?include_meta=1");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      wallet: sol(1),
      blockchain: "solana",
      wallet_states: { linked: true, connected_session: false, verified: false, stale_verification: false, hidden: false },
      verification: {
        verified: false,
        verified_at_utc: null,
        // An integer, as the spec types it: 0 with no verification.
        verification_age_days: 0,
        freshness: "unverified",
        status_text: "Not verified",
        reverify_days: 30,
      },
      owner: { user_id: user.id, external_id: "ext-1", is_primary: true, is_hidden: false },
      state_model: ["linked", "connected_session", "verified", "stale_verification", "hidden"],
      meta: expect.objectContaining({ request_id: expect.any(String) }),
    });
  });

  test("hidden and connected_session come from the link: set, kept on a re-link that leaves them out, cleared", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = (await createUser(h, key, { external_id: "ext-1" })).body.user.id;
    const linked = await linkWallet(h, key, id, { wallet_address: sol(3), is_hidden: true, connected_session: 1 });
    const at = h.clock.now().toISOString();
    expect(linked.body.wallets[0]).toMatchObject({ wallet_address: sol(3), is_hidden: 1, session_connected_at: at });
    const states = async () => {
      const b = (await verify(key, sol(3))).body;
      return [b.wallet_states.hidden, b.wallet_states.connected_session, b.owner.is_hidden];
    };
    expect(await states()).toEqual([true, true, true]);
    h.clock.advanceSeconds(60);
    await linkWallet(h, key, id, { wallet_address: sol(3), label: "cold" });
    expect(await states()).toEqual([true, true, true]);
    const cleared = await linkWallet(h, key, id, { wallet_address: sol(3), is_hidden: 0, connected_session: false });
    expect(cleared.body.wallets[0]).toMatchObject({ label: "cold", is_hidden: 0, session_connected_at: null });
    expect(await states()).toEqual([false, false, false]);
    // Unchanged flags are no change: nothing is written, no users.updated event.
    const events = async () => (await h.ctx.store.all("SELECT id FROM events WHERE event_type = 'users.updated'")).length;
    const before = await events();
    await linkWallet(h, key, id, { wallet_address: sol(3), is_hidden: false, connected_session: false });
    expect(await events()).toBe(before);
  });

  test("freshness follows WALLET_REVERIFY_DAYS on the clock: fresh through day N, stale from day N+1, fresh again after re-verifying", async () => {
    h = await openTestApp({ env: { WALLET_REVERIFY_DAYS: "7" } });
    const key = await createKey(h);
    const id = (await createUser(h, key, { external_id: "ext-1" })).body.user.id;
    await linkWallet(h, key, id, { wallet_address: sol(2), verified: true });
    const at = h.clock.now().toISOString();

    const today = (await verify(key, sol(2))).body;
    expect(today.verification).toEqual({
      verified: true,
      verified_at_utc: at,
      verification_age_days: 0,
      freshness: "fresh",
      status_text: "Verified today (0 days ago)",
      reverify_days: 7,
    });
    expect(today.wallet_states).toMatchObject({ verified: true, stale_verification: false });

    h.clock.advanceSeconds(3 * DAY_S);
    expect((await verify(key, sol(2))).body.verification).toMatchObject({ verification_age_days: 3, freshness: "fresh", status_text: "Verified 3 days ago" });

    h.clock.advanceSeconds(4 * DAY_S + DAY_S - 1); // 7 days 23:59:59: still day 7
    expect((await verify(key, sol(2))).body.verification).toMatchObject({ verification_age_days: 7, freshness: "fresh" });

    h.clock.advanceSeconds(1);
    const stale = (await verify(key, sol(2))).body;
    expect(stale.verification).toMatchObject({
      verified: true,
      verification_age_days: 8,
      freshness: "stale",
      status_text: "Verification is 8 days old; re-verify (policy 7 days)",
    });
    expect(stale.wallet_states).toMatchObject({ verified: true, stale_verification: true });

    await linkWallet(h, key, id, { wallet_address: sol(2), verified: true });
    expect((await verify(key, sol(2))).body.verification).toMatchObject({
      verification_age_days: 0,
      freshness: "fresh",
      verified_at_utc: h.clock.now().toISOString(),
    });
    await linkWallet(h, key, id, { wallet_address: sol(2), verified: false });
    expect((await verify(key, sol(2))).body.verification.freshness).toBe("unverified");
  });

  test("status texts", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const on = (days: number) => new Date(Date.parse(at) + days * DAY_S * 1000);
    expect(verificationOf(at, on(1), 30).status_text).toBe("Verified 1 day ago");
    expect(verificationOf(at, on(30), 30).status_text).toBe("Verified 30 days ago");
    expect(verificationOf(at, on(45), 30).status_text).toBe("Verification is 45 days old; re-verify (policy 30 days)");
    expect(verificationOf(at, on(2), 1).status_text).toBe("Verification is 2 days old; re-verify (policy 1 day)");
    expect(verificationOf(null, on(2), 30).status_text).toBe("Not verified");
  });

  test("connected_session and hidden come from the link's row", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = (await createUser(h, key, { external_id: "ext-1", wallet_address: sol(1) })).body.user.id;
    await linkWallet(h, key, id, { wallet_address: sol(3) });
    // No partner route sets these yet (the messenger mini-app will); the read model reports them faithfully.
    const hidden = await h.ctx.store.run("UPDATE wallet_links SET is_hidden = 1, session_connected_at = ? WHERE wallet_address = ?", [
      h.clock.now().toISOString(),
      sol(3),
    ]);
    expect(hidden.changes).toBe(1);
    const r = (await verify(key, sol(3))).body;
    expect(r.wallet_states).toEqual({ linked: true, connected_session: true, verified: false, stale_verification: false, hidden: true });
    expect(r.owner).toEqual({ user_id: id, external_id: "ext-1", is_primary: false, is_hidden: true });
  });

  test("other chains take ?blockchain=; an invalid address is 400; one linked to none of your users is linked: false", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = (await createUser(h, key, { external_id: "ext-1" })).body.user.id;
    const eth = "0x52908400098527886E0F7030069857D2E4169EE7";
    await linkWallet(h, key, id, { wallet_address: eth, blockchain: "ethereum" });
    expect((await verify(key, eth, "?blockchain=ethereum")).body).toMatchObject({ wallet: eth, blockchain: "ethereum" });
    for (const bad of [eth, "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl", "tVojvhToWjQ8Xvo4UPx2Xz9eRy7auyYMmZBjc2XfN"]) {
      const r = await verify(key, bad);
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 400, error: "invalid_query" });
    }
    expect((await verify(key, sol(1), "?blockchain=Bad!")).status).toBe(400);
    const missing = await verify(key, sol(9), "?include_meta=1");
    expect(missing.status).toBe(200);
    expect(missing.body).toEqual({
      success: true,
      wallet: sol(9),
      blockchain: "solana",
      wallet_states: { linked: false, connected_session: false, verified: false, stale_verification: false, hidden: false },
      verification: {
        verified: false,
        verified_at_utc: null,
        verification_age_days: 0,
        freshness: "unverified",
        status_text: "Not verified",
        reverify_days: 30,
      },
      owner: null,
      state_model: ["linked", "connected_session", "verified", "stale_verification", "hidden"],
      meta: expect.objectContaining({ request_id: expect.any(String) }),
    });
    // The chain is part of the link: the ethereum address is not linked as a polygon one.
    const polygon = await verify(key, eth, "?blockchain=polygon");
    expect([polygon.status, polygon.body.blockchain, polygon.body.wallet_states.linked, polygon.body.owner]).toEqual([200, "polygon", false, null]);
  });

  test("partner B never sees A's wallet; linking the same address itself shows B's own owner", async () => {
    h = await openTestApp();
    const a = await createKey(h, { partner: "Alpha" });
    const b = await createKey(h, { partner: "Beta" });
    await createUser(h, a, { external_id: "alpha-user", wallet_address: sol(5) });
    const foreign = await verify(b, sol(5));
    expect(foreign.status).toBe(200);
    expect(foreign.body.wallet_states.linked).toBe(false);
    expect(foreign.body.owner).toBeNull();
    // Word for word what an address nobody linked gets: nothing tells B that A has it.
    const never = await verify(b, sol(6));
    expect(JSON.stringify(foreign.body).replaceAll(sol(5), "W")).toBe(JSON.stringify(never.body).replaceAll(sol(6), "W"));
    const mine = (await createUser(h, b, { external_id: "beta-user", wallet_address: sol(5) })).body.user;
    expect((await verify(b, sol(5))).body.owner).toMatchObject({ user_id: mine.id, external_id: "beta-user" });
    expect((await verify(a, sol(5))).body.owner.external_id).toBe("alpha-user");
  });

  test("auth: read scope, live keys", async () => {
    h = await openTestApp();
    await expectPartnerAuth(h, { method: "GET", path: `/api/partner/wallet-verification/${sol(1)}`, scope: "read" });
  });
});
