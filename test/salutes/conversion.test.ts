import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type SignOptions, type TestKey } from "../support/partner";
import { body, createUser, credit, eventRows, expectLedgerConsistent, fixture, ledgerRows } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const ENABLED = {
  SALUTES_CONVERSION_ENABLED: "1",
  SALUTES_CONVERSION_MIN: "10",
  SALUTES_CONVERSION_MAX: "1000",
  SALUTES_CONVERSION_DAILY_CAP: "1500",
  SALUTES_CONVERSION_RATE: "0.015",
};
const convert = (key: TestKey, b: unknown, opts: SignOptions = {}) => signedJson(h, key, "POST", "/api/salutes/convert", { body: b, ...opts });
const conversions = () => h.ctx.store.all("SELECT * FROM salutes_conversions ORDER BY id");

async function funded(amount = 5000) {
  h = await openTestApp({ env: ENABLED });
  const f = await fixture(h);
  await credit(h, f.key, body(f.user, amount));
  return f;
}

describe("GET /api/salutes/conversion-policy", () => {
  test("the default policy is off and shows the configured values", async () => {
    h = await openTestApp();
    const r = await signedJson(h, await createKey(h), "GET", "/api/salutes/conversion-policy");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, policy: { enabled: false, target: "token", rate: "0.01", min: 10, max: 10000, daily_cap: 50000, decimals: 2 } });
  });

  test("bounds with more decimals than salutes are shown as enforced (min up, max and cap down)", async () => {
    h = await openTestApp({
      env: {
        SALUTES_CONVERSION_ENABLED: "1",
        SALUTES_CONVERSION_MIN: "10.001",
        SALUTES_CONVERSION_MAX: "99.999",
        SALUTES_CONVERSION_DAILY_CAP: "500.009",
        SALUTES_CONVERSION_RATE: "0.0100",
        SALUTES_CONVERSION_TARGET: "gems",
      },
    });
    const r = await signedJson(h, await createKey(h), "GET", "/api/salutes/conversion-policy?include_meta=1");
    expect(r.body.policy).toEqual({ enabled: true, target: "gems", rate: "0.01", min: 10.01, max: 99.99, daily_cap: 500, decimals: 2 });
    expect(r.body.meta).toBeDefined();
  });

  test("auth: unsigned 401, read scope needed, sandbox key 403", async () => {
    h = await openTestApp();
    expect((await h.json("/api/salutes/conversion-policy")).status).toBe(401);
    expect((await signedJson(h, await createKey(h, { scopes: ["credit"] }), "GET", "/api/salutes/conversion-policy")).status).toBe(403);
    expect((await signedJson(h, await createKey(h, { mode: "sandbox" }), "GET", "/api/salutes/conversion-policy")).status).toBe(403);
  });
});

describe("POST /api/salutes/convert", () => {
  test("debits the ledger, records a completed conversion with the exact product, and emits salutes.debit", async () => {
    const { key, user } = await funded();
    const r = await convert(key, { user_id: user, amount: 123.45 }, { idempotencyKey: "conv-1" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      conversion: {
        id: expect.any(Number),
        user_id: user,
        amount: 123.45,
        rate: "0.015",
        converted_amount: "1.85175",
        target: "token",
        status: "completed",
        ledger_entry_id: expect.any(Number),
        created_at: "2026-01-01T00:00:00.000Z",
      },
      balance: 4876.55,
    });
    const entry = (await ledgerRows(h, user))[1]!;
    expect(entry).toMatchObject({
      id: r.body.conversion.ledger_entry_id,
      delta_minor: -12345,
      balance_after_minor: 487655,
      reason: "conversion",
      source: "salutes.convert",
      idempotency_key: "conv-1",
      key_id: key.keyId,
    });
    expect(await conversions()).toEqual([
      {
        id: r.body.conversion.id,
        user_id: Number(user),
        partner: "Acme",
        mode: "live",
        amount_minor: 12345,
        rate: "0.015",
        converted_amount: "1.85175",
        target: "token",
        status: "completed",
        ledger_entry_id: entry.id,
        created_at: "2026-01-01T00:00:00.000Z",
      },
    ]);
    const events = await eventRows(h);
    expect(events.map((e) => e.event_type)).toEqual(["salutes.credit", "salutes.debit"]);
    expect(events[1]!.data).toEqual({
      user_id: user,
      delta: -123.45,
      balance: 4876.55,
      ledger_entry_id: entry.id,
      reason: "conversion",
      source: "salutes.convert",
    });
    const ledger = await signedJson(h, key, "GET", `/api/salutes/ledger?user_id=${user}&reason=conversion`);
    expect(ledger.body.ledger).toHaveLength(1);
    await expectLedgerConsistent(h);
  });

  test("switched off: 403 conversion_disabled, nothing written", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    await credit(h, key, body(user, 100));
    const r = await convert(key, { user_id: user, amount: 50 });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe("conversion_disabled");
    expect(await conversions()).toHaveLength(0);
    expect(await ledgerRows(h)).toHaveLength(1);
  });

  test.each([
    ["under the minimum", 9.99, "must be between 10 and 1000 for a conversion"],
    ["over the maximum", 1000.01, "must be between 10 and 1000 for a conversion"],
    ["too many decimals", 12.345, "must have at most 2 decimal places (got 12.345)"],
    ["a string", "50", "must be a number written as a JSON number, not text"],
    ["zero", 0, "must be greater than 0"],
  ])("amount %s is 400", async (_label, amount, problem) => {
    const { key, user } = await funded();
    const r = await convert(key, { user_id: user, amount });
    expect(r.status).toBe(400);
    expect(r.body.details[0]).toEqual({ field: "amount", problem });
    expect(await conversions()).toHaveLength(0);
  });

  test("unknown fields and missing fields are 400", async () => {
    const { key, user } = await funded();
    expect((await convert(key, { user_id: user, amount: 50, target: "btc" })).body.details).toEqual([{ field: "target", problem: "is not a known field" }]);
    expect((await convert(key, { user_id: user })).status).toBe(400);
    expect(await conversions()).toHaveLength(0);
  });

  test("the per-user UTC-day cap: 409 conversion_limit_exceeded says what is left; the next UTC day starts fresh", async () => {
    const { key, user } = await funded();
    h.clock.set("2026-01-01T08:00:00.000Z");
    expect((await convert(key, { user_id: user, amount: 1000 })).status).toBe(200);
    expect((await convert(key, { user_id: user, amount: 400 })).status).toBe(200);
    const over = await convert(key, { user_id: user, amount: 100.01 });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ error: "conversion_limit_exceeded", details: { daily_cap: 1500, used_today: 1400, remaining_today: 100 } });
    expect(over.body.message).toContain("100 left");
    expect((await convert(key, { user_id: user, amount: 100 })).status).toBe(200);
    // Another user of the same partner has their own cap.
    const other = await createUser(h);
    await credit(h, key, body(other, 50));
    expect((await convert(key, { user_id: other, amount: 50 })).status).toBe(200);
    h.clock.set("2026-01-01T23:59:59.999Z");
    expect((await convert(key, { user_id: user, amount: 10 })).body.error).toBe("conversion_limit_exceeded");
    h.clock.set("2026-01-02T00:00:00.000Z");
    expect((await convert(key, { user_id: user, amount: 1000 })).status).toBe(200);
    expect(await conversions()).toHaveLength(5);
    await expectLedgerConsistent(h);
  });

  test("more than the balance is 409 insufficient_balance and records no conversion", async () => {
    const { key, user } = await funded(20);
    const r = await convert(key, { user_id: user, amount: 20.01 });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe("insufficient_balance");
    expect(await conversions()).toHaveLength(0);
    expect(await ledgerRows(h)).toHaveLength(1);
  });

  test("an idempotent retry converts once", async () => {
    const { key, user } = await funded();
    const first = await convert(key, { user_id: user, amount: 10 }, { idempotencyKey: "conv-once" });
    const again = await convert(key, { user_id: user, amount: 10 }, { idempotencyKey: "conv-once" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: "idempotency_replay", original_response: first.body });
    expect(await conversions()).toHaveLength(1);
  });

  test("users: unknown and foreign 404, suspended 409; auth: debit scope, sandbox 403, unsigned 401", async () => {
    const { key, user } = await funded();
    expect((await convert(key, { user_id: "999999", amount: 10 })).status).toBe(404);
    expect((await convert(key, { user_id: await createUser(h, { partner: "Beta" }), amount: 10 })).status).toBe(404);
    expect((await convert(await createKey(h, { partner: "Beta" }), { user_id: user, amount: 10 })).status).toBe(404);
    const suspended = await convert(key, { user_id: await createUser(h, { status: "suspended" }), amount: 10 });
    expect(suspended.status).toBe(409);
    expect(suspended.body.error).toBe("conflict");
    expect((await convert(await createKey(h, { scopes: ["credit", "read"] }), { user_id: user, amount: 10 })).status).toBe(403);
    expect((await convert(await createKey(h, { mode: "sandbox" }), { user_id: user, amount: 10 })).status).toBe(403);
    expect(
      (
        await h.json("/api/salutes/convert", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ user_id: user, amount: 10 }),
        })
      ).status,
    ).toBe(401);
    expect(await conversions()).toHaveLength(0);
  });
});
