import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit, signedJson } from "../support/partner";
import { body, createUser, credit, debit, eventRows, expectLedgerConsistent, fixture, ledgerRows } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const idemRows = async (h: TestApp) => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM idempotency_records"))!.n;

describe("credit", () => {
  test("appends a ledger entry, moves the balance and emits salutes.credit in the same transaction", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const r = await credit(h, key, body(user, 12.5), { idempotencyKey: "credit-1" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, user_id: user, balance: 12.5, delta: 12.5, ledger_entry_id: expect.any(Number), idempotency_key: "credit-1" });
    const rows = await ledgerRows(h, user);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: r.body.ledger_entry_id,
      partner: "Acme",
      mode: "live",
      delta_minor: 1250,
      balance_after_minor: 1250,
      reason: "quest_reward",
      source: "game.arena",
      key_id: key.keyId,
      idempotency_key: "credit-1",
    });
    expect(await h.ctx.store.get("SELECT balance_minor FROM salutes_balances WHERE user_id = ?", [Number(user)])).toEqual({ balance_minor: 1250 });
    const events = await eventRows(h);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ partner: "Acme", mode: "live", event_type: "salutes.credit" });
    expect(events[0]!.data).toEqual({
      user_id: user,
      delta: 12.5,
      balance: 12.5,
      ledger_entry_id: r.body.ledger_entry_id,
      reason: "quest_reward",
      source: "game.arena",
    });

    const second = await credit(h, key, body(user, 0.29));
    expect(second.body).toMatchObject({ balance: 12.79, delta: 0.29 });
    expect((await ledgerRows(h, user))[1]).toMatchObject({ delta_minor: 29, balance_after_minor: 1279 });
    await expectLedgerConsistent(h);
  });

  test("include_meta adds meta; the answer has no extra fields", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const r = await signedJson(h, key, "POST", "/api/salutes/credit?include_meta=1", { body: body(user, 1) });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["balance", "delta", "idempotency_key", "ledger_entry_id", "meta", "success", "user_id"]);
    expect(r.body.meta.request_id).toBe(r.headers.get("x-request-id")!);
  });

  test("an idempotent retry answers 409 idempotency_replay with the original response and writes nothing", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const first = await credit(h, key, body(user, 5), { idempotencyKey: "same-key" });
    const again = await credit(h, key, body(user, 5), { idempotencyKey: "same-key" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ success: false, error: "idempotency_replay", original_status: 200, original_response: first.body });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const reused = await credit(h, key, body(user, 6), { idempotencyKey: "same-key" });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toBe("idempotency_key_reused");
    expect(await ledgerRows(h)).toHaveLength(1);
    expect(await eventRows(h)).toHaveLength(1);
  });

  test("a reused nonce is 409 replay_detected and writes nothing", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const nonce = "ab".repeat(16);
    expect((await credit(h, key, body(user, 5), { nonce })).status).toBe(200);
    const replay = await credit(h, key, body(user, 5), { nonce });
    expect(replay.status).toBe(409);
    expect(replay.body.error).toBe("replay_detected");
    expect(await ledgerRows(h)).toHaveLength(1);
  });

  test("a suspended user cannot be credited or debited (409 conflict)", async () => {
    h = await openTestApp();
    const key = await createKey(h);
    const user = await createUser(h, { status: "suspended" });
    for (const call of [credit, debit]) {
      const r = await call(h, key, body(user, 1));
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("conflict");
      expect(r.body.message).toContain("suspended");
    }
    expect(await ledgerRows(h)).toHaveLength(0);
  });

  test("amounts and balances stop at 15 significant digits (what a JSON number carries exactly): past that 400 / 409", async () => {
    h = await openTestApp({ env: { SALUTES_DECIMALS: "6", SALUTES_MAX_AMOUNT: "1000000000000" } });
    const { key, user } = await fixture(h);
    // SALUTES_MAX_AMOUNT (1e12 at 6 decimals = 19 digits) is capped at 999999999.999999.
    const huge = await credit(h, key, body(user, 1000000000));
    expect(huge.status).toBe(400);
    expect(huge.body.details[0].problem).toBe("must be at most 999999999.999999");
    const full = await credit(h, key, body(user, 999999999.999999));
    expect(full.status).toBe(200);
    expect(full.body.balance).toBe(999999999.999999);
    expect((await ledgerRows(h, user))[0]!.delta_minor).toBe(999_999_999_999_999);
    const over = await credit(h, key, body(user, 0.000001));
    expect(over.status).toBe(409);
    expect(over.body.error).toBe("conflict");
    expect(await ledgerRows(h)).toHaveLength(1);
  });
});

describe("debit", () => {
  test("a debit is a negative entry and emits salutes.debit", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    await credit(h, key, body(user, 10));
    const r = await debit(h, key, body(user, 3.75, { reason: "shop.purchase" }), { idempotencyKey: "debit-1" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, user_id: user, balance: 6.25, delta: -3.75, ledger_entry_id: expect.any(Number), idempotency_key: "debit-1" });
    expect((await ledgerRows(h, user))[1]).toMatchObject({ delta_minor: -375, balance_after_minor: 625, reason: "shop.purchase" });
    const events = await eventRows(h);
    expect(events.map((e) => e.event_type)).toEqual(["salutes.credit", "salutes.debit"]);
    expect(events[1]!.data).toEqual({
      user_id: user,
      delta: -3.75,
      balance: 6.25,
      ledger_entry_id: r.body.ledger_entry_id,
      reason: "shop.purchase",
      source: "game.arena",
    });
    // Down to exactly zero is allowed.
    expect((await debit(h, key, body(user, 6.25))).body.balance).toBe(0);
    await expectLedgerConsistent(h);
  });

  test("below zero is 409 insufficient_balance: no entry, no event, no stored response (a corrected retry may reuse the key)", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    await credit(h, key, body(user, 1));
    const before = await idemRows(h);
    const r = await debit(h, key, body(user, 1.01), { idempotencyKey: "too-much" });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ success: false, error: "insufficient_balance", details: { balance: 1, requested: 1.01 } });
    expect(await ledgerRows(h)).toHaveLength(1);
    expect(await eventRows(h)).toHaveLength(1);
    expect(await idemRows(h)).toBe(before);
    // A never-credited user has a balance of 0.
    const empty = await debit(h, key, body(await createUser(h), 0.01));
    expect(empty.body.error).toBe("insufficient_balance");
    await credit(h, key, body(user, 5));
    const retry = await debit(h, key, body(user, 1.01), { idempotencyKey: "too-much" });
    expect(retry.status).toBe(200);
    expect(retry.body.balance).toBe(4.99);
    await expectLedgerConsistent(h);
  });
});

describe("amounts", () => {
  const refused: Array<[string, unknown]> = [
    ["zero", 0],
    ["negative zero", -0],
    ["negative", -5],
    ["a numeric string", "10"],
    ["null", null],
    ["a boolean", true],
    ["an object", { value: 1 }],
    ["too many decimals", 12.345],
    ["0.1 + 0.2", 0.1 + 0.2],
    ["1e-7 (exponent form, 7 decimals)", 1e-7],
    ["1e21 (over SALUTES_MAX_AMOUNT)", 1e21],
    ["just over SALUTES_MAX_AMOUNT", 1000000000.01],
  ];
  test.each(refused)("%s is 400 on credit and debit, and writes nothing", async (_label, amount) => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    await credit(h, key, body(user, 100));
    for (const call of [credit, debit]) {
      const r = await call(h, key, body(user, amount));
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.details[0].field).toBe("amount");
    }
    expect(await ledgerRows(h)).toHaveLength(1);
  });

  test.each([
    ["1e309 (parses to Infinity)", '"amount":1e309'],
    ["-1e309", '"amount":-1e309'],
    ["NaN (not JSON)", '"amount":NaN'],
    ["Infinity (not JSON)", '"amount":Infinity'],
  ])("raw body %s is 400", async (_label, fragment) => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const raw = `{"user_id":"${user}",${fragment},"reason":"quest_reward","source":"game.arena"}`;
    const r = await credit(h, key, raw);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect(await ledgerRows(h)).toHaveLength(0);
  });

  test("accepted forms: 1e-2, the maximum, a whole number; SALUTES_DECIMALS=0 refuses fractions", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    expect((await credit(h, key, body(user, 1e-2))).body.delta).toBe(0.01);
    expect((await credit(h, key, body(user, 1000000000))).body.delta).toBe(1000000000);
    expect((await credit(h, key, body(user, 7))).body.balance).toBe(1000000007.01);
    await h.close();
    h = await openTestApp({ env: { SALUTES_DECIMALS: "0" } });
    const f = await fixture(h);
    expect((await credit(h, f.key, body(f.user, 1.5))).status).toBe(400);
    expect((await credit(h, f.key, body(f.user, 2))).body.balance).toBe(2);
  });
});

describe("body validation", () => {
  const cases: Array<[string, (user: string) => unknown, string]> = [
    ["missing amount", (u) => ({ user_id: u, reason: "r", source: "s" }), "amount"],
    ["missing user_id", () => ({ amount: 1, reason: "r", source: "s" }), "user_id"],
    ["missing reason", (u) => ({ user_id: u, amount: 1, source: "s" }), "reason"],
    ["missing source", (u) => ({ user_id: u, amount: 1, reason: "r" }), "source"],
    ["numeric user_id", (u) => body(Number(u) as unknown as string, 1), "user_id"],
    ["unknown field", (u) => body(u, 1, { memo: "hi" }), "memo"],
    ["control character in reason", (u) => body(u, 1, { reason: "quest\nreward" }), "reason"],
    ["empty reason", (u) => body(u, 1, { reason: "" }), "reason"],
    ["65-character reason", (u) => body(u, 1, { reason: "a".repeat(65) }), "reason"],
    ["empty source", (u) => body(u, 1, { source: "" }), "source"],
    ["65-character source", (u) => body(u, 1, { source: "s".repeat(65) }), "source"],
    ["control character in source", (u) => body(u, 1, { source: "game\narena" }), "source"],
  ];
  test.each(cases)("%s is 400 naming the field", async (_label, make, field) => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const r = await credit(h, key, make(user));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect(r.body.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(await ledgerRows(h)).toHaveLength(0);
  });

  test("malformed JSON is 400", async () => {
    h = await openTestApp();
    const { key } = await fixture(h);
    const r = await credit(h, key, "{nope");
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
  });
});

describe("users and partners", () => {
  test("unknown, malformed, another partner's and a sandbox user's ids are all 404", async () => {
    h = await openTestApp();
    const { key } = await fixture(h);
    const foreign = await createUser(h, { partner: "Beta" });
    const sandboxUser = await createUser(h, { mode: "sandbox" });
    for (const id of ["999999", "abc", "0", "-1", "1.5", foreign, sandboxUser]) {
      for (const call of [credit, debit]) {
        const r = await call(h, key, body(id, 1));
        expect({ id, status: r.status, error: r.body.error }).toEqual({ id, status: 404, error: "not_found" });
      }
    }
    expect(await ledgerRows(h)).toHaveLength(0);
  });

  test("partner B cannot credit or debit partner A's users", async () => {
    h = await openTestApp();
    const a = await fixture(h);
    await credit(h, a.key, body(a.user, 10));
    const b = await createKey(h, { partner: "Beta" });
    expect((await credit(h, b, body(a.user, 1))).status).toBe(404);
    expect((await debit(h, b, body(a.user, 1))).status).toBe(404);
    expect(await ledgerRows(h)).toHaveLength(1);
  });
});

describe("authentication", () => {
  test("unsigned is 401; a missing nonce is 401; a missing Idempotency-Key is 400", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const unsigned = await h.json("/api/salutes/credit", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body(user, 1)),
    });
    expect(unsigned.status).toBe(401);
    expect((await credit(h, key, body(user, 1), { nonce: null })).status).toBe(401);
    const noKey = await credit(h, key, body(user, 1), { idempotencyKey: null });
    expect(noKey.status).toBe(400);
    expect(noKey.body.error).toBe("idempotency_key_required");
    expect(await ledgerRows(h)).toHaveLength(0);
  });

  test("credit needs the credit scope and debit the debit scope", async () => {
    h = await openTestApp();
    const user = await createUser(h);
    const creditOnly = await createKey(h, { scopes: ["credit"] });
    const debitOnly = await createKey(h, { scopes: ["debit", "read"] });
    expect((await credit(h, creditOnly, body(user, 5))).status).toBe(200);
    const noDebit = await debit(h, creditOnly, body(user, 1));
    expect(noDebit.status).toBe(403);
    expect(noDebit.body.message).toContain('"debit"');
    expect((await credit(h, debitOnly, body(user, 1))).status).toBe(403);
    expect((await debit(h, debitOnly, body(user, 1))).status).toBe(200);
  });

  test("a sandbox key is 403 on the live routes", async () => {
    h = await openTestApp();
    const sandbox = await createKey(h, { mode: "sandbox" });
    const user = await createUser(h, { mode: "sandbox" });
    for (const call of [credit, debit]) {
      const r = await call(h, sandbox, body(user, 1));
      expect(r.status).toBe(403);
      expect(r.body.error).toBe("forbidden");
    }
  });

  test("a signature over another body is 401", async () => {
    h = await openTestApp();
    const { key, user } = await fixture(h);
    const init = signedInit(h, key, "POST", "/api/salutes/credit", { body: body(user, 1) });
    const r = await h.json("/api/salutes/credit", { ...init, body: JSON.stringify(body(user, 1000)) });
    expect(r.status).toBe(401);
    expect(await ledgerRows(h)).toHaveLength(0);
  });
});
