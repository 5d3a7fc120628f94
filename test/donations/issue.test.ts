import { afterEach, describe, expect, test } from "bun:test";
import { parseAmount } from "../../src/donations/service";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";
import { startReceiver, type Receiver } from "../support/receiver";
import { count, events, insertUser, issue, WALLET } from "./support";

let h = undefined as unknown as TestApp;
let rx: Receiver | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
  h = undefined as unknown as TestApp;
});

const valid = { campaign_id: "spring-2026", amount: "12.50", recipient: { email: "fan@example.com", wallet_address: WALLET } };

describe("issuing a claim", () => {
  test("answers the claim, stores it, queues the email and emits donation.claim in one go", async () => {
    h = await openTestApp();
    const key = await createKey(h, { partner: "Acme" });
    const userId = await insertUser(h, "Acme");
    const r = await issue(h, key, { ...valid, user_id: String(userId) });
    expect(r.status).toBe(200);
    const code = r.body.claim_code as string;
    expect(code).toMatch(/^dc_[a-z2-7]{32}$/);
    expect(r.body).toEqual({
      success: true,
      status: "issued",
      claim_status: "issued",
      claim_code: code,
      partner_key_id: key.keyId,
      claim_id: expect.any(Number),
      campaign_id: "spring-2026",
      amount: "12.5",
      email_sent: false,
      email_status: "queued",
      claim_url: `http://localhost:3000/claim/${code}`,
      created_at: "2026-01-01T00:00:00.000Z",
    });

    const claims = await h.ctx.store.all<any>("SELECT * FROM donation_claims");
    expect(claims).toHaveLength(1);
    const row = claims[0];
    expect(row).toMatchObject({
      partner: "Acme",
      mode: "live",
      key_id: key.keyId,
      amount: "12.5",
      recipient_email: "fan@example.com",
      recipient_wallet: WALLET,
      user_id: userId,
      claim_code: code,
      status: "issued",
      email_sent: 0,
    });

    const mail = await h.ctx.store.all<any>("SELECT * FROM email_outbox");
    expect(mail).toHaveLength(1);
    expect(mail[0]).toMatchObject({ to_address: "fan@example.com", status: "queued" });
    expect(mail[0].body).toContain(`http://localhost:3000/claim/${code}`);

    expect(await events(h, "donation.claim")).toEqual([
      {
        partner: "Acme",
        mode: "live",
        data: {
          claim_code: code,
          campaign_id: "spring-2026",
          amount: "12.5",
          recipient: { email: "fan@example.com", wallet_address: WALLET },
          user_id: String(userId),
        },
      },
    ]);
  });

  test("a wallet-only claim queues no email and says so", async () => {
    h = await openTestApp();
    const r = await issue(h, await createKey(h), { campaign_id: "c1", amount: 3, recipient: { wallet_address: WALLET } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ amount: "3", email_sent: false, email_status: "not_requested" });
    expect(await count(h, "email_outbox")).toBe(0);
    expect((await events(h, "donation.claim"))[0]!.data).toMatchObject({ recipient: { email: null, wallet_address: WALLET }, user_id: null });
  });

  test("claim codes differ and carry at least 128 bits", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const codes = new Set<string>();
    for (let i = 0; i < 5; i++) codes.add((await issue(h, key, valid)).body.claim_code);
    expect(codes.size).toBe(5);
    for (const c of codes) expect((c.length - 3) * 5).toBeGreaterThanOrEqual(128);
  });

  test("the same Idempotency-Key replays the answer with no second claim, email or event", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const first = await issue(h, key, valid, { idempotencyKey: "claim-1" });
    const again = await issue(h, key, valid, { idempotencyKey: "claim-1" });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("idempotency_replay");
    expect(again.body.original_response.claim_code).toBe(first.body.claim_code);
    expect(await count(h, "donation_claims")).toBe(1);
    expect(await count(h, "email_outbox")).toBe(1);
    expect(await events(h, "donation.claim")).toHaveLength(1);
    const other = await issue(h, key, { ...valid, amount: "13" }, { idempotencyKey: "claim-1" });
    expect(other.status).toBe(422);
    expect(other.body.error).toBe("idempotency_key_reused");
  });

  test("a subscribed webhook receives the signed donation.claim delivery", async () => {
    rx = startReceiver();
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } });
    const key = await createKey(h);
    expect((await signedJson(h, key, "POST", "/api/partner/webhooks", { body: { event_type: "donation.claim", target_url: rx.url() } })).status).toBe(201);
    const r = await issue(h, key, valid);
    await h.ctx.dispatcher.runOnce();
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0]!.headers["x-webhook-event"]).toBe("donation.claim");
    expect(JSON.parse(rx.received[0]!.rawBody).data).toMatchObject({ claim_code: r.body.claim_code, amount: "12.5" });
  });
});

describe("amounts are exact decimal strings", () => {
  test.each([
    ["12.50", "12.5"],
    ["0012.500", "12.5"],
    ["0.000000001", "0.000000001"],
    ["123456789012345678", "123456789012345678"],
    ["123456789.123456789", "123456789.123456789"],
    ["1.0000000000", "1"],
    [12.5, "12.5"],
    [1e-7, "0.0000001"],
    [1e17, "100000000000000000"],
    [123456789012345, "123456789012345"],
  ])("%p → %p", (input, expected) => {
    expect(parseAmount(input)).toEqual({ value: expected });
  });

  test.each([
    [0, "greater than 0"],
    [-1, "greater than 0"],
    ["0", "greater than 0"],
    ["0.000", "greater than 0"],
    ["-1", "positive decimal"],
    ["+1", "positive decimal"],
    ["1e3", "positive decimal"],
    [" 1", "positive decimal"],
    ["", "positive decimal"],
    ["1.", "positive decimal"],
    [".5", "positive decimal"],
    ["abc", "positive decimal"],
    ["0.1234567891", "9 decimal places"],
    ["1234567890123456789", "18 digits"],
    ["123456789012.1234567", "18 digits"],
    [1e21, "18 digits"],
    [0.1 + 0.2, "significant digits"],
    [9007199254740993, "significant digits"],
    [Number.NaN, "finite"],
  ])("%p is refused (%s)", (input, why) => {
    const r = parseAmount(input as number | string);
    expect("problem" in r && r.problem).toContain(why);
  });

  test.each([[0], [-5], ["-5"], ["1e3"], ["0.1234567891"], ["1234567890123456789"], [true], [null], [{}], [[1]]])(
    "amount %p → 400 and nothing stored",
    async (amount) => {
      h = await openTestApp();
      const r = await issue(h, await createKey(h), { ...valid, amount });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(JSON.stringify(r.body.details)).toContain("amount");
      expect((await count(h, "donation_claims")) + (await count(h, "email_outbox")) + (await count(h, "events"))).toBe(0);
    },
  );

  test("1e309 (Infinity once parsed) is 400", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const raw = `{"campaign_id":"c","amount":1e309,"recipient":{"wallet_address":"${WALLET}"}}`;
    const r = await signedJson(h, key, "POST", "/api/partner/donation-claim", { body: raw });
    expect(r.status).toBe(400);
    expect(await count(h, "donation_claims")).toBe(0);
  });
});

describe("bad input", () => {
  test.each([
    [{ ...valid, recipient: {} }, "recipient"],
    [{ ...valid, recipient: { email: "not-an-email" } }, "recipient.email"],
    [{ ...valid, recipient: { email: "a b@example.com" } }, "recipient.email"],
    [{ ...valid, recipient: { email: "x@" + "a".repeat(250) + ".com" } }, "recipient.email"],
    [{ ...valid, recipient: { wallet_address: "0xdeadbeef" } }, "recipient.wallet_address"],
    [{ ...valid, recipient: { wallet_address: "1".repeat(31) } }, "recipient.wallet_address"],
    [{ ...valid, recipient: { email: "fan@example.com", phone: "123" } }, "recipient.phone"],
    [{ campaign_id: "c", amount: "1" }, "recipient"],
    [{ ...valid, campaign_id: "" }, "campaign_id"],
    [{ ...valid, campaign_id: "a".repeat(65) }, "campaign_id"],
    [{ ...valid, campaign_id: "spring 2026" }, "campaign_id"],
    [{ ...valid, campaign_id: 42 }, "campaign_id"],
    [{ amount: "1", recipient: { wallet_address: WALLET } }, "campaign_id"],
    [{ ...valid, extra: true }, "extra"],
    [{ ...valid, user_id: 1.5 }, "user_id"],
  ])("%j → 400 naming %s", async (body, field) => {
    h = await openTestApp();
    const r = await issue(h, await createKey(h), body);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect((r.body.details as Array<{ field: string }>).map((d) => d.field)).toContain(field);
    expect(await count(h, "donation_claims")).toBe(0);
  });

  test("a field of two kinds names both when given a third: user_id true → 'must be a string or an integer'", async () => {
    h = await openTestApp();
    const r = await issue(h, await createKey(h), { ...valid, user_id: true });
    expect([r.status, r.body.error]).toEqual([400, "invalid_payload"]);
    expect(r.body.details).toContainEqual({ field: "user_id", problem: expect.stringMatching(/^must be (a string or an integer|an integer or a string)$/) });
  });

  test("malformed JSON is 400; an oversize body is 413", async () => {
    h = await openTestApp({ env: { MAX_BODY_BYTES: "2048" } });
    const key = await createKey(h);
    expect((await signedJson(h, key, "POST", "/api/partner/donation-claim", { body: "{nope" })).body.error).toBe("invalid_payload");
    const big = await issue(h, key, { ...valid, campaign_id: "c", pad: "x".repeat(4096) });
    expect(big.status).toBe(413);
    expect(big.body.error).toBe("payload_too_large");
  });
});

describe("users on claims", () => {
  test("another partner's user, a sandbox user, an unknown or malformed id are 404; a suspended user is 409", async () => {
    h = await openTestApp();
    const key = await createKey(h, { partner: "Acme" });
    const theirs = await insertUser(h, "Other");
    const sandbox = await insertUser(h, "Acme", { mode: "sandbox" });
    const suspended = await insertUser(h, "Acme", { status: "suspended" });
    for (const user_id of [theirs, String(sandbox), 999_999, "abc"]) {
      const r = await issue(h, key, { ...valid, user_id });
      expect({ user_id, status: r.status, error: r.body.error }).toEqual({ user_id, status: 404, error: "not_found" });
    }
    const s = await issue(h, key, { ...valid, user_id: suspended });
    expect(s.status).toBe(409);
    expect(s.body.error).toBe("conflict");
    expect((await count(h, "donation_claims")) + (await count(h, "email_outbox")) + (await count(h, "events"))).toBe(0);
  });
});

describe("authentication and authorisation", () => {
  test("unsigned 401; no donation scope 403; sandbox key 403; no nonce 401; no Idempotency-Key 400", async () => {
    h = await openTestApp();
    const unsigned = await h.json("/api/partner/donation-claim", jsonInit("POST", valid));
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error).toBe("unauthorized");
    const noScope = await issue(h, await createKey(h, { scopes: ["read", "users"] }), valid);
    expect(noScope.status).toBe(403);
    expect(noScope.body.message).toContain('"donation"');
    const sandbox = await issue(h, await createKey(h, { mode: "sandbox" }), valid);
    expect(sandbox.status).toBe(403);
    expect(sandbox.body.message).toContain("live key");
    const key = await createKey(h);
    const noNonce = await signedJson(h, key, "POST", "/api/partner/donation-claim", { body: valid, nonce: null });
    expect(noNonce.status).toBe(401);
    const noIdem = await signedJson(h, key, "POST", "/api/partner/donation-claim", { body: valid, idempotencyKey: null });
    expect(noIdem.status).toBe(400);
    expect(noIdem.body.error).toBe("idempotency_key_required");
    expect(await count(h, "donation_claims")).toBe(0);
  });

  test("a reused nonce is 409 replay_detected", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const nonce = "ab".repeat(16);
    expect((await signedJson(h, key, "POST", "/api/partner/donation-claim", { body: valid, nonce })).status).toBe(200);
    const again = await signedJson(h, key, "POST", "/api/partner/donation-claim", { body: valid, nonce });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("replay_detected");
    expect(await count(h, "donation_claims")).toBe(1);
  });
});
