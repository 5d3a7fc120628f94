// Docs audit: the field rules, answers and statuses of docs/donations.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { startReceiver } from "../support/receiver";

let h: TestApp;
let rx: ReturnType<typeof startReceiver> | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
  h = undefined as unknown as TestApp;
});
const W = "So11111111111111111111111111111111111111112";

describe("docs/donations.md", () => {
  // docs/donations.md:31-89 — the issue example and its answer; amount canonicalised
  test("issue answers the documented fields, a canonical amount and the dc_ code form", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const u = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "e42", username: "u42" } })).body.user;
    const r = await signedJson(h, k, "POST", "/api/partner/donation-claim", {
      body: { campaign_id: "spring-2026", amount: "0012.500", recipient: { email: "fan@example.com", wallet_address: W }, user_id: String(u.id) },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      status: "issued",
      claim_status: "issued",
      partner_key_id: k.keyId,
      campaign_id: "spring-2026",
      amount: "12.5",
      email_sent: false,
      email_status: "queued",
      created_at: "2026-01-01T00:00:00.000Z",
    });
    expect(r.body.claim_code).toMatch(/^dc_[a-z2-7]{32}$/);
    expect(r.body.claim_url).toBe(`http://localhost:3000/claim/${r.body.claim_code}`);
    expect(typeof r.body.claim_id).toBe("number");
    const noEmail = await signedJson(h, k, "POST", "/api/partner/donation-claim", {
      body: { campaign_id: "c", amount: 12.5, recipient: { wallet_address: W } },
    });
    expect(noEmail.body).toMatchObject({ email_status: "not_requested", email_sent: false, amount: "12.5" });
  });

  // docs/donations.md:40-50 — field rules
  test("field rules refuse what the table refuses", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const base = { campaign_id: "spring-2026", amount: "1", recipient: { email: "fan@example.com" } };
    const bad: unknown[] = [
      { ...base, campaign_id: "" },
      { ...base, campaign_id: "x".repeat(65) },
      { ...base, campaign_id: "a b" },
      { ...base, amount: "0" },
      { ...base, amount: "-1" },
      { ...base, amount: "1e3" },
      { ...base, amount: " 1" },
      { ...base, amount: "1.0000000001" },
      { ...base, amount: "1234567890123456789" },
      { ...base, amount: 1.2345678901234567 },
      { ...base, recipient: {} },
      { ...base, recipient: { email: "fan@example.com", phone: "1" } },
      { ...base, recipient: { wallet_address: "abc" } },
      { ...base, extra: 1 },
      { campaign_id: "c", recipient: { email: "fan@example.com" } },
    ];
    for (const body of bad) {
      const r = await signedJson(h, k, "POST", "/api/partner/donation-claim", { body });
      expect([JSON.stringify(body), r.status, r.body.error]).toEqual([JSON.stringify(body), 400, "invalid_payload"]);
    }
    for (const amount of ["123456789.123456789", "999999999999999999", 12.5]) {
      const ok = await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { ...base, amount } });
      expect([amount, ok.status]).toEqual([amount, 200]);
    }
    const ok64 = await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { ...base, campaign_id: "A.b_c-9".padEnd(64, "x") } });
    expect(ok64.status).toBe(200);
    const unknownUser = await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { ...base, user_id: "999999" } });
    expect([unknownUser.status, unknownUser.body.error]).toEqual([404, "not_found"]);
  });

  // docs/donations.md:47 — a suspended user is 409 conflict; user_id as an integer is accepted
  test("user_id: integer accepted, suspended user 409 conflict", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const u = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "e1", username: "user1" } })).body.user;
    const base = { campaign_id: "c", amount: "1", recipient: { email: "fan@example.com" } };
    expect((await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { ...base, user_id: u.id } })).status).toBe(200);
    await signedJson(h, k, "PATCH", `/api/partner/users/${u.id}`, { body: { status: "suspended" } });
    const s = await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { ...base, user_id: String(u.id) } });
    expect([s.status, s.body.error]).toEqual([409, "conflict"]);
  });

  // docs/donations.md:103-119 — read; not yours / malformed 404; over 128 characters 400 invalid_query
  test("read a claim", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const other = await createKey(h, { partner: "Other" });
    const c = (
      await signedJson(h, k, "POST", "/api/partner/donation-claim", {
        body: { campaign_id: "spring-2026", amount: "12.50", recipient: { email: "fan@example.com" } },
      })
    ).body;
    const r = await signedJson(h, k, "GET", `/api/partner/donation-claims/${c.claim_code}`);
    expect(r.status).toBe(200);
    expect(r.body.claim).toMatchObject({
      claim_id: c.claim_id,
      claim_code: c.claim_code,
      status: "issued",
      claim_status: "issued",
      amount: "12.5",
      recipient: { email: "fan@example.com", wallet_address: null },
      user_id: null,
      partner_key_id: k.keyId,
      email_status: "queued",
      redeemed_at: null,
      redeemed_by: null,
    });
    expect((await signedJson(h, other, "GET", `/api/partner/donation-claims/${c.claim_code}`)).status).toBe(404);
    expect((await signedJson(h, k, "GET", "/api/partner/donation-claims/nope")).status).toBe(404);
    const long = await signedJson(h, k, "GET", `/api/partner/donation-claims/${"a".repeat(129)}`);
    expect([long.status, long.body.error]).toEqual([400, "invalid_query"]);
    expect((await signedJson(h, k, "GET", `/api/partner/donation-claims/${"a".repeat(128)}`)).status).toBe(404);
  });

  // docs/donations.md:121-133 — redeem: 200 once, then 409 claim_already_redeemed with details; bad redeemed_by 400
  test("redeem", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const c = (
      await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { campaign_id: "c", amount: "1", recipient: { email: "fan@example.com" } } })
    ).body;
    const bad = await signedJson(h, k, "POST", `/api/partner/donation-claims/${c.claim_code}/redeem`, { body: { redeemed_by: "x".repeat(129) } });
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_payload"]);
    const unk = await signedJson(h, k, "POST", `/api/partner/donation-claims/${c.claim_code}/redeem`, { body: { who: "x" } });
    expect([unk.status, unk.body.error]).toEqual([400, "invalid_payload"]);
    const r = await signedJson(h, k, "POST", `/api/partner/donation-claims/${c.claim_code}/redeem`, { body: { redeemed_by: "wallet-app:user-7" } });
    expect(r.status).toBe(200);
    expect(r.body.claim).toMatchObject({
      status: "redeemed",
      claim_status: "redeemed",
      redeemed_by: "wallet-app:user-7",
      redeemed_at: "2026-01-01T00:00:00.000Z",
    });
    const again = await signedJson(h, k, "POST", `/api/partner/donation-claims/${c.claim_code}/redeem`);
    expect([again.status, again.body.error]).toEqual([409, "claim_already_redeemed"]);
    expect(again.body.details).toEqual({ claim_code: c.claim_code, redeemed_at: "2026-01-01T00:00:00.000Z" });
    const noBody = (
      await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { campaign_id: "c", amount: "1", recipient: { email: "fan@example.com" } } })
    ).body;
    const nb = await signedJson(h, k, "POST", `/api/partner/donation-claims/${noBody.claim_code}/redeem`);
    expect(nb.status).toBe(200);
    expect(nb.body.claim.redeemed_by).toBeNull();
    expect((await signedJson(h, k, "POST", "/api/partner/donation-claims/dc_nope/redeem")).status).toBe(404);
  });

  // docs/donations.md:135-152 — the recipient's page: headers; 404 page or JSON; over 200 chars 400; any case
  test("the recipient's page", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const c = (
      await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { campaign_id: "c", amount: "1", recipient: { email: "fan@example.com" } } })
    ).body;
    const p = await h.request(`/claim/${c.claim_code}`, { headers: { accept: "text/html" } });
    expect(p.status).toBe(200);
    expect(p.headers.get("cache-control")).toBe("no-store");
    expect(p.headers.get("referrer-policy")).toBe("no-referrer");
    expect(p.headers.get("x-robots-tag")).toBe("noindex, nofollow");
    expect(p.headers.get("x-frame-options")).toBe("DENY");
    expect(p.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(p.headers.get("x-ratelimit-limit")).toBe("90");
    expect((await h.request(`/claim/${c.claim_code.toUpperCase()}`, { headers: { accept: "text/html" } })).status).toBe(200);
    const nfHtml = await h.request("/claim/dc_nope", { headers: { accept: "text/html" } });
    expect(nfHtml.status).toBe(404);
    expect(nfHtml.headers.get("content-type")).toContain("text/html");
    const nfJson = await h.json("/claim/dc_nope");
    expect([nfJson.status, nfJson.body.error]).toEqual([404, "not_found"]);
    const long = await h.json(`/claim/${"a".repeat(201)}`);
    expect([long.status, long.body.error]).toEqual([400, "invalid_query"]);
  });

  // docs/donations.md:156-162 — donation.claim and donation.claim_redeemed data fields
  test("event data fields", async () => {
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_TIMEOUT_SECONDS: "1" } });
    rx = startReceiver();
    const k = await createKey(h);
    await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "donation.claim", target_url: rx.url("/c") } });
    await signedJson(h, k, "POST", "/api/partner/webhooks", { body: { event_type: "donation.claim_redeemed", target_url: rx.url("/r") } });
    const c = (
      await signedJson(h, k, "POST", "/api/partner/donation-claim", { body: { campaign_id: "c", amount: "12.50", recipient: { email: "fan@example.com" } } })
    ).body;
    await signedJson(h, k, "POST", `/api/partner/donation-claims/${c.claim_code}/redeem`);
    await h.ctx.dispatcher.runOnce();
    await h.ctx.dispatcher.runOnce();
    const claim = JSON.parse(rx.received.find((x) => x.path === "/c")!.rawBody).data;
    expect(claim).toEqual({
      claim_code: c.claim_code,
      campaign_id: "c",
      amount: "12.5",
      recipient: { email: "fan@example.com", wallet_address: null },
      user_id: null,
    });
    const red = JSON.parse(rx.received.find((x) => x.path === "/r")!.rawBody).data;
    expect(red).toEqual({ claim_code: c.claim_code, campaign_id: "c", amount: "12.5", redeemed_at: "2026-01-01T00:00:00.000Z", redeemed_by: null });
  });
});
