import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import bs58 from "bs58";
import { afterResponses } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { TARGET } from "../support/target";
import { eventually, expectRefusal, row, rows, startE2E, type E2E } from "./support";

/**
 * Until `n` requests of the key are in the log: in process, a few turns of the event loop (the after-response hooks
 * buffer them, and the routes under test flush the buffer); served, the rows its flush timer wrote (a bounded poll).
 */
async function requestsLogged(e: E2E, keyId: string, n: number): Promise<void> {
  await afterResponses();
  if (TARGET.kind === "app") return;
  await eventually(`${n} logged requests of ${keyId}`, async () => {
    const r = await row<{ n: number }>(e.h, "SELECT count(*) AS n FROM request_log l JOIN request_log_keys k ON k.ref = l.key_ref WHERE k.key_id = ?", keyId);
    return r.n >= n ? true : undefined;
  });
}

// A partner's first day, over HTTP (docs/partner-users.md, docs/partner-status.md): check what the key may do,
// create a user, find and edit them, link wallets, check a wallet's verification, then read the key's own status
// and usage. Runs against the in-process app, `bun src/main.ts serve` or dist/herald (HERALD_TEST_TARGET).

let e: E2E;
beforeAll(async () => {
  e = await startE2E();
});
afterAll(() => e?.stop());

const wallet = (n: number) => bs58.encode(new Uint8Array(32).fill(n));

describe(`partner over HTTP (${TARGET.label})`, () => {
  test("capabilities name the key, its mode and scopes; a sandbox key of the same partner sees its own mode", async () => {
    const live = await signedJson(e.h, e.live, "GET", "/api/partner/capabilities");
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ success: true, partner: "Acme", key_id: e.live.keyId, key_mode: "live", sandbox: { enabled_for_key: false } });
    expect(live.body.scopes).toEqual(expect.arrayContaining(["read", "credit", "debit", "ledger", "users", "webhooks"]));
    expect(live.body.signing.timestamp_skew_seconds).toBe(300);
    const sandbox = await signedJson(e.h, await createKey(e.h, { partner: "Acme", mode: "sandbox" }), "GET", "/api/partner/capabilities");
    expect(sandbox.body).toMatchObject({
      key_mode: "sandbox",
      sandbox: { enabled_for_key: true },
      docs: { token_status: "/api/partner/sandbox/token-status" },
    });
  });

  test("users: create, refuse a duplicate, list, look up, read, patch; the effects are rows and users.updated events", async () => {
    const created = await signedJson(e.h, e.live, "POST", "/api/partner/users", {
      body: { external_id: "e2e-user-1", username: "Alice_01", email: "Alice@Example.com", display_name: "Alice" },
    });
    expect(created.status).toBe(201);
    const user = created.body.user;
    expect(user).toMatchObject({ external_id: "e2e-user-1", username: "alice_01", email: "alice@example.com", status: "active", wallets: [] });
    expect(await row(e.h, "SELECT partner, mode, external_id FROM partner_users WHERE id = ?", user.id)).toEqual({
      partner: "Acme",
      mode: "live",
      external_id: "e2e-user-1",
    });

    const dup = await signedJson(e.h, e.live, "POST", "/api/partner/users", { body: { external_id: "e2e-user-1" } });
    expectRefusal(dup, 409, "external_id_taken");
    const badField = await signedJson(e.h, e.live, "POST", "/api/partner/users", { body: { external_id: "e2e-user-2", nickname: "x" } });
    expectRefusal(badField, 400, "invalid_payload");
    expect(badField.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: "nickname" })]));

    const list = await signedJson(e.h, e.live, "GET", "/api/partner/users?limit=10&q=alice");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ count: 1, pagination: { has_more: false } });
    expect(list.body.users[0].id).toBe(user.id);
    const lookup = await signedJson(e.h, e.live, "GET", "/api/partner/user-lookup?email=ALICE%40example.com");
    expect(lookup.body.users.map((u: { id: number }) => u.id)).toEqual([user.id]);
    expect(lookup.body.query.email).toBe("alice@example.com");

    const one = await signedJson(e.h, e.live, "GET", `/api/partner/users/${user.id}`);
    expect(one.body.user).toMatchObject({ id: user.id, display_name: "Alice" });
    expectRefusal(await signedJson(e.h, e.live, "GET", "/api/partner/users/999999"), 404, "not_found");

    const patched = await signedJson(e.h, e.live, "PATCH", `/api/partner/users/${user.id}`, { body: { display_name: "Alice B.", is_verified: true } });
    expect(patched.status).toBe(200);
    expect(patched.body.user).toMatchObject({ display_name: "Alice B.", is_verified: true });

    const events = (await rows<{ data: string }>(e.h, "SELECT data FROM events WHERE partner = 'Acme' AND event_type = 'users.updated' ORDER BY id")).map((r) =>
      JSON.parse(r.data),
    );
    expect(events.map((d) => d.changes)).toEqual([["created"], expect.arrayContaining(["display_name", "is_verified"])]);
    expect(events.every((d) => d.user_id === user.id || d.user_id === String(user.id))).toBe(true);

    // Another partner's key cannot see the user: the same 404 as an unknown id.
    const other = await createKey(e.h, { partner: "Globex", mode: "live" });
    expectRefusal(await signedJson(e.h, other, "GET", `/api/partner/users/${user.id}`), 404, "not_found");
  });

  test("wallets: the first is primary, a verified second one takes over, verification is fresh; one owner per address", async () => {
    const u = (await signedJson(e.h, e.live, "POST", "/api/partner/users", { body: { external_id: "e2e-wallets" } })).body.user;
    const first = await signedJson(e.h, e.live, "POST", `/api/partner/users/${u.id}/wallets`, { body: { wallet_address: wallet(1), label: "cold" } });
    expect(first.status).toBe(200);
    expect(first.body.wallets).toEqual([expect.objectContaining({ wallet_address: wallet(1), is_primary: 1, verified: 0 })]);
    const second = await signedJson(e.h, e.live, "POST", `/api/partner/users/${u.id}/wallets`, {
      body: { wallet_address: wallet(2), is_primary: true, verified: true },
    });
    expect(second.body.wallets.map((w: { wallet_address: string; is_primary: number }) => [w.wallet_address, w.is_primary])).toEqual([
      [wallet(2), 1],
      [wallet(1), 0],
    ]);
    const read = await signedJson(e.h, e.live, "GET", `/api/partner/users/${u.id}`);
    expect(read.body.user.wallet_address).toBe(wallet(2));

    const verification = await signedJson(e.h, e.live, "GET", `/api/partner/wallet-verification/${wallet(2)}`);
    expect(verification.status).toBe(200);
    expect(verification.body).toMatchObject({
      wallet: wallet(2),
      blockchain: "solana",
      wallet_states: { linked: true, verified: true, stale_verification: false },
      verification: { verified: true, freshness: "fresh", verification_age_days: 0, status_text: "Verified today (0 days ago)" },
      owner: { user_id: u.id, is_primary: true },
    });
    const unverified = await signedJson(e.h, e.live, "GET", `/api/partner/wallet-verification/${wallet(1)}`);
    expect(unverified.body.verification).toMatchObject({ verified: false, freshness: "unverified", status_text: "Not verified" });
    const unlinked = await signedJson(e.h, e.live, "GET", `/api/partner/wallet-verification/${wallet(3)}`);
    expect([unlinked.status, unlinked.body.wallet_states.linked, unlinked.body.owner]).toEqual([200, false, null]);
    expectRefusal(await signedJson(e.h, e.live, "GET", "/api/partner/wallet-verification/not-a-wallet"), 400, "invalid_query");

    const other = (await signedJson(e.h, e.live, "POST", "/api/partner/users", { body: { external_id: "e2e-wallets-2" } })).body.user;
    const taken = await signedJson(e.h, e.live, "POST", `/api/partner/users/${other.id}/wallets`, { body: { wallet_address: wallet(1) } });
    expectRefusal(taken, 409, "wallet_already_linked");
    expect(await row(e.h, "SELECT count(*) AS n FROM wallet_links WHERE wallet_address = ?", wallet(1))).toEqual({ n: 1 });
  });

  test("status and usage count this key's own requests; a sandbox key sees only its own", async () => {
    const key = await createKey(e.h, { partner: "Acme", mode: "live", scopes: ["read"] });
    for (let i = 0; i < 3; i++) expect((await signedJson(e.h, key, "GET", "/api/partner/users?limit=1")).status).toBe(200);
    expect((await signedJson(e.h, key, "GET", "/api/partner/users/999999")).status).toBe(404);
    // Status and usage flush the request-log buffer first, so each request already logged counts. A request is
    // logged by the after-response hook, after its answer left: in process on the next tick; in a served process
    // usually before the next request arrives, but not on a loaded machine — so wait until the rows are written.
    await requestsLogged(e, key.keyId, 4);

    const status = await signedJson(e.h, key, "GET", "/api/partner/status");
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      success: true,
      overall_status: "ok",
      key_id: key.keyId,
      key_mode: "live",
      window: { hours: 1 },
      request_metrics: { total_requests: 4, error_requests: 1 },
      endpoint_percentiles_available: true,
      webhook_delivery_health: { dead_letter_events: 0 },
    });
    await requestsLogged(e, key.keyId, 5);
    const usage = await signedJson(e.h, key, "GET", "/api/partner/analytics/usage?hours=24");
    expect(usage.status).toBe(200);
    // The status call itself is now in the log too.
    expect(usage.body.request_metrics).toMatchObject({ total_requests: 5, success_requests: 4, error_requests: 1 });
    const byPath = Object.fromEntries(usage.body.request_metrics.endpoint_breakdown.map((b: { path: string; requests: number }) => [b.path, b.requests]));
    expect(byPath).toEqual({ "/api/partner/users": 3, "/api/partner/users/:user_id": 1, "/api/partner/status": 1 });
    expectRefusal(await signedJson(e.h, key, "GET", "/api/partner/analytics/usage?hours=0"), 400, "invalid_query");

    // A sandbox key of the same partner reads its own status and traffic, none of the live key's.
    const sandbox = await createKey(e.h, { partner: "Acme", mode: "sandbox" });
    const sandboxStatus = await signedJson(e.h, sandbox, "GET", "/api/partner/status");
    expect(sandboxStatus.status).toBe(200);
    expect(sandboxStatus.body).toMatchObject({ key_id: sandbox.keyId, key_mode: "sandbox", request_metrics: { total_requests: 0, error_requests: 0 } });
  });
});
