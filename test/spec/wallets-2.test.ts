// Spec conformance (second audit): partner users, wallet links, live wallet info (against the Solana JSON-RPC
// fixture), wallet verification and its states, and donation claims, against "Partner user", "Wallet link",
// "Wallet info (live)", "Wallet verification", "Wallet states", "Donation claim", "Scopes" and the status guide.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { chainEnv, type DevRpcServer, startSolanaRpc } from "../support/solana-rpc";

let h: TestApp;
let rpc: DevRpcServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
  await rpc?.stop();
  rpc = undefined;
});
const W1 = "So11111111111111111111111111111111111111112";
const W2 = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const W3 = "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi";

describe("users and wallet links", () => {
  test("user fields and types; 409 on a taken external_id or username; 400 on a bad status; 404 for a malformed id", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const c = await signedJson(h, k, "POST", "/api/partner/users", {
      body: { external_id: "e1", username: "Alice_01", display_name: "A", wallet_address: W1 },
    });
    // Partner user: id integer, external_id/username/display_name/wallet_address strings, status, is_verified boolean.
    expect(c.body.user).toMatchObject({ external_id: "e1", username: "alice_01", display_name: "A", status: "active", is_verified: false, wallet_address: W1 });
    expect(Number.isInteger(c.body.user.id)).toBe(true);
    const bare = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "e2" } })).body.user;
    expect([bare.username, bare.display_name, bare.wallet_address]).toEqual(["", "", ""]);
    expect((await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "e1" } })).body.error).toBe("external_id_taken");
    expect((await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "e3", username: "ALICE_01" } })).status).toBe(409);
    expect((await signedJson(h, k, "PATCH", `/api/partner/users/${c.body.user.id}`, { body: { status: "banned" } })).status).toBe(400);
    expect((await signedJson(h, k, "PATCH", `/api/partner/users/${c.body.user.id}`, { body: {} })).status).toBe(400);
    for (const bad of ["0", "abc", "99999999999999999999999"]) expect((await signedJson(h, k, "GET", `/api/partner/users/${bad}`)).status).toBe(404);
    // wallets appear only when include_wallets is requested.
    expect((await signedJson(h, k, "GET", `/api/partner/users/${c.body.user.id}`)).body.user.wallets).toBeUndefined();
    expect((await signedJson(h, k, "GET", `/api/partner/users/${c.body.user.id}?include_wallets=1`)).body.user.wallets).toHaveLength(1);
  });

  test("one primary per user (is_primary 0/1), concurrent first links included; an address belongs to one user (409)", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "p1" } })).body.user.id;
    const rs = await Promise.all([W1, W2, W3].map((w) => signedJson(h, k, "POST", `/api/partner/users/${id}/wallets`, { body: { wallet_address: w } })));
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200]);
    let u = (await signedJson(h, k, "GET", `/api/partner/users/${id}?include_wallets=1`)).body.user;
    expect(u.wallets.filter((w: any) => w.is_primary === 1)).toHaveLength(1);
    const w = await signedJson(h, k, "POST", `/api/partner/users/${id}/wallets`, { body: { wallet_address: W3, is_primary: true, label: "hot" } });
    expect(w.body.wallets[0]).toMatchObject({ blockchain: "solana", wallet_address: W3, label: "hot", is_primary: 1, verified: 0 });
    u = (await signedJson(h, k, "GET", `/api/partner/users/${id}`)).body.user;
    expect(u.wallet_address).toBe(W3);
    const other = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "p2" } })).body.user.id;
    expect((await signedJson(h, k, "POST", `/api/partner/users/${other}/wallets`, { body: { wallet_address: W3 } })).body.error).toBe("wallet_already_linked");
  });
});

describe("wallet verification and wallet states", () => {
  test("fresh → stale after reverify_days; hidden and connected_session flags; an unlinked or foreign wallet has every state false", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const id = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "v1" } })).body.user.id;
    await signedJson(h, k, "POST", `/api/partner/users/${id}/wallets`, {
      body: { wallet_address: W2, verified: true, connected_session: true, is_hidden: true },
    });
    const v = (await signedJson(h, k, "GET", `/api/partner/wallet-verification/${W2}`)).body;
    expect(v.wallet_states).toEqual({ linked: true, connected_session: true, verified: true, stale_verification: false, hidden: true });
    expect(v.verification).toMatchObject({ verified: true, verification_age_days: 0, freshness: "fresh", reverify_days: 30 });
    expect(v.owner).toEqual({ user_id: id, external_id: "v1", is_primary: true, is_hidden: true });
    h.clock.advance(31 * 86_400_000);
    const s = (await signedJson(h, k, "GET", `/api/partner/wallet-verification/${W2}`)).body;
    expect(s.wallet_states).toMatchObject({ verified: true, stale_verification: true });
    // "The verification freshness text reports the age in days."
    expect(s.verification).toMatchObject({ verification_age_days: 31, freshness: "stale" });
    expect(s.verification.status_text).toContain("31 days");
    const foreign = await createKey(h, { partner: "Other" });
    for (const [key, wallet] of [
      [foreign, W2],
      [k, W3],
    ] as const) {
      const f = (await signedJson(h, key, "GET", `/api/partner/wallet-verification/${wallet}`)).body;
      expect(Object.values(f.wallet_states).every((x) => x === false)).toBe(true);
      expect(f.owner).toBeNull();
    }
    expect((await signedJson(h, k, "GET", "/api/partner/wallet-verification/not-an-address")).status).toBe(400);
  });
});

describe("wallet info (live)", () => {
  test("wallet, native_balance, token_balance, lp_mint, lp_amount with their types; an empty wallet is zeros; RPC down is 503", async () => {
    rpc = startSolanaRpc({ holders: 50, seed: "audit2" });
    h = await openTestApp({ env: chainEnv(rpc) });
    const k = await createKey(h, { scopes: ["read"] });
    const owner = rpc.fixture.holderOwner(3);
    const r = (await signedJson(h, k, "GET", `/api/partner/wallet-info/${owner}`)).body;
    expect(r.wallet).toBe(owner);
    for (const f of ["native_balance", "token_balance", "lp_amount"]) expect(typeof r[f]).toBe("number");
    expect(typeof r.lp_mint).toBe("string");
    expect(r.token_balance).toBeGreaterThan(0);
    const empty = (await signedJson(h, k, "GET", `/api/partner/wallet-info/${W2}`)).body;
    expect([empty.native_balance, empty.token_balance, empty.lp_amount]).toEqual([0, 0, 0]);
    expect((await signedJson(h, k, "GET", "/api/partner/wallet-info/abc")).status).toBe(400);
    expect((await signedJson(h, await createKey(h, { scopes: ["users"] }), "GET", `/api/partner/wallet-info/${owner}`)).status).toBe(403);
    await rpc.stop();
    const down = await signedJson(h, k, "GET", `/api/partner/wallet-info/${owner}`);
    // Status guide: 503 = dependency unavailable (database or RPC).
    expect(down.status).toBe(503);
    expect(down.body.success).toBe(false);
  });
});

describe("donation claims", () => {
  test("live: status and claim_status issued, claim_code, partner_key_id; exact amount; replay is 409; sandbox: sandbox_preview", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const body = { campaign_id: "c1", amount: "0012.500", recipient: { email: "fan@example.com" } };
    const c = await signedJson(h, k, "POST", "/api/partner/donation-claim", { body, idempotencyKey: "D1" });
    expect(c.body).toMatchObject({ success: true, status: "issued", claim_status: "issued", partner_key_id: k.keyId, amount: "12.5" });
    expect(typeof c.body.claim_code).toBe("string");
    const again = await signedJson(h, k, "POST", "/api/partner/donation-claim", { body, idempotencyKey: "D1" });
    expect([again.status, again.body.original_response.claim_code]).toEqual([409, c.body.claim_code]);
    expect((await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { ...body, amount: "0" } })).status).toBe(400);
    expect((await signedJson(h, await createKey(h, { scopes: ["read"] }), "POST", "/api/partner/donation-claim", { body })).status).toBe(403);
    const sb = await createKey(h, { mode: "sandbox" });
    expect((await signedJson(h, sb, "POST", "/api/partner/donation-claim", { body })).status).toBe(403);
    const p = (await signedJson(h, sb, "POST", "/api/partner/sandbox/donation-claim", { body: {} })).body;
    expect(p).toMatchObject({ status: "sandbox_preview", claim_status: "sandbox_preview", email_sent: false, live_side_effects_performed: false });
    expect(Object.keys(p)).toEqual(expect.arrayContaining(["claim_url", "claim_campaign_id", "requested_claim", "claim_code", "partner_key_id"]));
  });
});
