import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { count, createUser, expectPartnerAuth, linkWallet, sol, userEvents } from "./user-fixtures";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const newUser = async (key: TestKey, externalId = "u1", extra: Record<string, unknown> = {}) =>
  (await createUser(h, key, { external_id: externalId, ...extra })).body.user.id as number;
const primaries = (userId: number) =>
  h.ctx.store.all<{ wallet_address: string }>("SELECT wallet_address FROM wallet_links WHERE user_id = ? AND is_primary = 1", [userId]);

describe("POST /api/partner/users/{user_id}/wallets", () => {
  test("the first wallet becomes primary; later ones do not; the answer lists all the user's wallets", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key);
    const first = await linkWallet(h, key, id, { wallet_address: sol(1), label: "main" });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      wallets: [
        {
          blockchain: "solana",
          wallet_address: sol(1),
          label: "main",
          is_primary: 1,
          verified: 0,
          verified_at: null,
          is_hidden: 0,
          session_connected_at: null,
        },
      ],
    });
    const second = await linkWallet(h, key, id, { wallet_address: sol(2) });
    expect(second.body.wallets.map((w: { wallet_address: string; is_primary: number }) => [w.wallet_address, w.is_primary])).toEqual([
      [sol(1), 1],
      [sol(2), 0],
    ]);
    const user = await signedJson(h, key, "GET", `/api/partner/users/${id}`);
    expect(user.body.user.wallet_address).toBe(sol(1));
    // users.updated for each link; the primary's change is named as wallet_address.
    expect((await userEvents(h)).map((e) => e.changes)).toEqual([["created"], ["wallets", "wallet_address"], ["wallets"]]);
  });

  test("is_primary demotes the old primary in the same transaction: exactly one primary after many links", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key, "u1", { wallet_address: sol(1) });
    const links = await Promise.all(Array.from({ length: 20 }, (_, i) => linkWallet(h, key, id, { wallet_address: sol(i + 2), is_primary: true })));
    expect(links.every((r) => r.status === 200)).toBe(true);
    expect(await primaries(id)).toHaveLength(1);
    expect(await count(h, "wallet_links")).toBe(21);
    // Promote an older one back: still exactly one, and it is the one asked for.
    const back = await linkWallet(h, key, id, { wallet_address: sol(1), is_primary: true });
    expect(back.body.wallets.filter((w: { is_primary: number }) => w.is_primary === 1)).toEqual([expect.objectContaining({ wallet_address: sol(1) })]);
    expect(await primaries(id)).toEqual([{ wallet_address: sol(1) }]);
    expect(back.body.wallets[0].wallet_address).toBe(sol(1)); // primary listed first
  });

  // On PostgreSQL each statement sees what committed before it: the create once read the address free, then read it
  // again as an existing link (another user's, committed meanwhile), skipped the insert and answered 201 without it.
  test("concurrent creates naming one wallet: one 201 holding it, the rest 409; no user is made without the wallet it asked for", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    for (let round = 0; round < 15; round++) {
      const tries = await Promise.all(
        Array.from({ length: 5 }, (_, i) => createUser(h, key, { external_id: `race-${round}-${i}`, wallet_address: sol(100 + round) })),
      );
      const made = tries.filter((r) => r.status === 201);
      expect([round, made.length, tries.filter((r) => r.body.error === "wallet_already_linked").length]).toEqual([round, 1, 4]);
      expect(made[0]!.body.user.wallet_address).toBe(sol(100 + round));
    }
    expect(await count(h, "partner_users")).toBe(15);
  });

  test("a refused link leaves the old primary in place (the demotion rolls back with it)", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const a = await newUser(key, "a", { wallet_address: sol(1) });
    await newUser(key, "b", { wallet_address: sol(2) });
    const r = await linkWallet(h, key, a, { wallet_address: sol(2), is_primary: true });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe("wallet_already_linked");
    expect(await primaries(a)).toEqual([{ wallet_address: sol(1) }]);
  });

  test("is_primary=false never leaves a user without a primary", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key);
    const r = await linkWallet(h, key, id, { wallet_address: sol(1), is_primary: false });
    expect(r.body.wallets[0].is_primary).toBe(1);
    const again = await linkWallet(h, key, id, { wallet_address: sol(1), is_primary: false });
    expect(again.body.wallets[0].is_primary).toBe(1);
  });

  test("re-linking the same address to the same user updates it; an unchanged re-link writes and emits nothing", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key);
    await linkWallet(h, key, id, { wallet_address: sol(1), label: "old" });
    const relabel = await linkWallet(h, key, id, { wallet_address: sol(1), label: "new" });
    expect(relabel.body.wallets).toEqual([expect.objectContaining({ label: "new", is_primary: 1 })]);
    const events = (await userEvents(h)).length;
    const same = await linkWallet(h, key, id, { wallet_address: sol(1), label: "new" });
    expect(same.status).toBe(200);
    expect(same.body.wallets).toHaveLength(1);
    expect(await userEvents(h)).toHaveLength(events);
    const cleared = await linkWallet(h, key, id, { wallet_address: sol(1), label: null });
    expect(cleared.body.wallets[0].label).toBe(""); // the spec types label as a string: none is ""
    expect(await count(h, "wallet_links")).toBe(1);
  });

  test("verified=true stamps verified_at with the clock; verified=false clears it", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key);
    h.clock.set("2026-02-03T04:05:06.000Z");
    const v = await linkWallet(h, key, id, { wallet_address: sol(1), verified: true });
    expect(v.body.wallets[0]).toMatchObject({ verified: 1, verified_at: "2026-02-03T04:05:06.000Z" });
    const u = await linkWallet(h, key, id, { wallet_address: sol(1), verified: false });
    expect(u.body.wallets[0]).toMatchObject({ verified: 0, verified_at: null });
  });

  test("is_primary and verified also take 1 and 0, the values a wallet link shows; text and other numbers are 400", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key, "u1", { wallet_address: sol(1) });
    h.clock.set("2026-02-03T04:05:06.000Z");
    const one = await linkWallet(h, key, id, { wallet_address: sol(2), is_primary: 1, verified: 1 });
    expect(one.status).toBe(200);
    expect(one.body.wallets[0]).toMatchObject({ wallet_address: sol(2), is_primary: 1, verified: 1, verified_at: "2026-02-03T04:05:06.000Z" });
    const zero = await linkWallet(h, key, id, { wallet_address: sol(2), verified: 0 });
    expect(zero.body.wallets[0]).toMatchObject({ wallet_address: sol(2), is_primary: 1, verified: 0, verified_at: null });
    for (const bad of [{ is_primary: 2 }, { is_primary: "1" }, { verified: "true" }, { verified: -1 }]) {
      const r = await linkWallet(h, key, id, { wallet_address: sol(3), ...bad });
      expect([JSON.stringify(bad), r.status, r.body.error]).toEqual([JSON.stringify(bad), 400, "invalid_payload"]);
    }
  });

  test("one address belongs to one user of a partner; two partners may both link it", async () => {
    h = await openTestApp();
    const alpha = await createKey(h, { partner: "Alpha" });
    const beta = await createKey(h, { partner: "Beta" });
    const a1 = await newUser(alpha, "a1");
    const a2 = await newUser(alpha, "a2");
    const b1 = await newUser(beta, "b1");
    expect((await linkWallet(h, alpha, a1, { wallet_address: sol(7) })).status).toBe(200);
    const clash = await linkWallet(h, alpha, a2, { wallet_address: sol(7) });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toBe("wallet_already_linked");
    expect(clash.body.message).not.toContain("a1");
    expect((await linkWallet(h, beta, b1, { wallet_address: sol(7) })).status).toBe(200);
    expect(await count(h, "wallet_links")).toBe(2);
  });

  test("other chains: a chain name and a plain address shape", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key);
    const eth = "0x52908400098527886E0F7030069857D2E4169EE7";
    const r = await linkWallet(h, key, id, { wallet_address: eth, blockchain: "Ethereum", label: "cold" });
    expect(r.body.wallets).toEqual([expect.objectContaining({ blockchain: "ethereum", wallet_address: eth, is_primary: 1 })]);
    const lookup = await signedJson(h, key, "GET", `/api/partner/user-lookup?wallet=${eth}`);
    expect(lookup.body.users.map((u: { id: number }) => u.id)).toEqual([id]);
  });

  test.each([
    [{}, "wallet_address"],
    [{ wallet_address: "not-base58-0OIl" }, "wallet_address"],
    [{ wallet_address: "tVojvhToWjQ8Xvo4UPx2Xz9eRy7auyYMmZBjc2XfN" }, "wallet_address"],
    [{ wallet_address: "short", blockchain: "ethereum" }, "wallet_address"],
    [{ wallet_address: "0x" + "a".repeat(40) + "-", blockchain: "ethereum" }, "wallet_address"],
    [{ wallet_address: "x".repeat(129), blockchain: "ethereum" }, "wallet_address"],
    [{ wallet_address: sol(1), blockchain: "x" }, "blockchain"],
    [{ wallet_address: sol(1), blockchain: "has space" }, "blockchain"],
    [{ wallet_address: sol(1), label: "x".repeat(65) }, "label"],
    [{ wallet_address: sol(1), label: "a\nb" }, "label"],
    [{ wallet_address: sol(1), is_primary: "yes" }, "is_primary"],
    [{ wallet_address: sol(1), verified: 2 }, "verified"],
    [{ wallet_address: sol(1), primary: true }, "primary"],
  ])("bad body %j is 400 naming %s; nothing is written", async (body, field) => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key);
    const r = await linkWallet(h, key, id, body);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect(r.body.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(await count(h, "wallet_links")).toBe(0);
    expect(await userEvents(h)).toHaveLength(1); // only the create
  });

  test("unknown, malformed and foreign user ids are 404", async () => {
    h = await openTestApp();
    const alpha = await createKey(h, { partner: "Alpha" });
    const beta = await createKey(h, { partner: "Beta" });
    const id = await newUser(alpha);
    for (const bad of ["abc", "0", "424242"]) expect((await linkWallet(h, alpha, bad, { wallet_address: sol(1) })).status).toBe(404);
    const foreign = await linkWallet(h, beta, id, { wallet_address: sol(1) });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe("not_found");
    expect(await count(h, "wallet_links")).toBe(0);
  });

  test("auth: users scope, live keys; an unsigned body is never judged", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key);
    await expectPartnerAuth(h, { method: "POST", path: `/api/partner/users/${id}/wallets`, body: { wallet_address: sol(1) }, scope: "users" });
    const unsigned = await h.json(`/api/partner/users/${id}/wallets`, jsonInit("POST", { wallet_address: "bad", bogus: 1 }));
    expect(unsigned.status).toBe(401);
    expect(await count(h, "wallet_links")).toBe(0);
  });

  test("the same Idempotency-Key replays the original answer without a second effect", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const id = await newUser(key);
    const body = { wallet_address: sol(3), verified: true };
    const first = await signedJson(h, key, "POST", `/api/partner/users/${id}/wallets`, { body, idempotencyKey: "link-3" });
    h.clock.advanceSeconds(10);
    const again = await signedJson(h, key, "POST", `/api/partner/users/${id}/wallets`, { body, idempotencyKey: "link-3" });
    expect(again.status).toBe(409);
    expect(again.body.original_response).toEqual(first.body);
    expect(await userEvents(h)).toHaveLength(2);
  });
});
