// Spec conformance (second audit): salutes balances, credits, debits, ledger filters and pagination, idempotency
// and scopes against "Salutes operations", "Salutes balance, mutation result and ledger entry", "Scopes" and
// "Errors" of the service interface, and docs/design.md §4–§5. Runs on either engine (HERALD_TEST_ENGINE).
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

async function setup() {
  h = await openTestApp();
  const k = await createKey(h);
  const id = String((await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "s1" } })).body.user.id);
  return { k, id };
}
const entry = (k: TestKey, kind: "credit" | "debit", body: Record<string, unknown>, idempotencyKey?: string | null) =>
  signedJson(h, k, "POST", `/api/salutes/${kind}`, { body: { reason: "r", source: "s", ...body }, ...(idempotencyKey !== undefined && { idempotencyKey }) });

describe("amounts are exact (spec: amount (number); DESIGN §5)", () => {
  test("exact decimals add up; too many decimals, zero, negative, text and over the maximum are 400 invalid_payload", async () => {
    const { k, id } = await setup();
    // Amounts that are inexact in binary floating point sum exactly: 0.07 + 1.15 + 4.35 = 5.57.
    for (const amount of [0.07, 1.15, 4.35]) expect((await entry(k, "credit", { user_id: id, amount })).status).toBe(200);
    const d = await entry(k, "debit", { user_id: id, amount: 0.01 });
    expect(d.body).toMatchObject({ balance: 5.56, delta: -0.01 });
    for (const amount of [0.1 + 0.2, 12.345, 0, -1, "10", 1e21, 1000000000.01]) {
      const r = await entry(k, "credit", { user_id: id, amount });
      expect([r.status, r.body.error, r.body.details?.[0]?.field]).toEqual([400, "invalid_payload", "amount"]);
    }
    const led = (await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${id}&order=asc`)).body;
    expect(led.ledger.map((e: any) => e.balance_after)).toEqual([0.07, 1.22, 5.57, 5.56]);
    expect(led.balance).toBe(5.56);
  });

  test("a debit never takes the balance below zero: 409 insufficient_balance, down to exactly 0 allowed, concurrent debits included", async () => {
    const { k, id } = await setup();
    await entry(k, "credit", { user_id: id, amount: 1 });
    const rs = await Promise.all(Array.from({ length: 5 }, () => entry(k, "debit", { user_id: id, amount: 0.5 })));
    expect(rs.filter((r) => r.status === 200).length).toBe(2);
    for (const r of rs.filter((r) => r.status !== 200)) expect([r.status, r.body.error]).toEqual([409, "insufficient_balance"]);
    expect((await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${id}`)).body.balance).toBe(0);
  });
});

describe("idempotency (spec: Idempotency-Key required by default on mutations; idempotency_replay 409 safe no-op)", () => {
  test("missing or malformed key 400; completed replay 409 with the original answer and no second effect; other body 422", async () => {
    const { k, id } = await setup();
    expect((await entry(k, "credit", { user_id: id, amount: 1 }, null)).body.error).toBe("idempotency_key_required");
    expect((await entry(k, "credit", { user_id: id, amount: 1 }, "x".repeat(256))).status).toBe(400);
    const first = await entry(k, "credit", { user_id: id, amount: 2 }, "K1");
    const again = await entry(k, "credit", { user_id: id, amount: 2 }, "K1");
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toMatchObject({ error: "idempotency_replay", original_status: 200, original_response: first.body });
    expect((await entry(k, "credit", { user_id: id, amount: 3 }, "K1")).status).toBe(422);
    expect((await entry(k, "debit", { user_id: id, amount: 2 }, "K1")).status).toBe(422);
    expect((await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${id}`)).body.balance).toBe(2);
  });

  test("eight concurrent credits with one key take effect once", async () => {
    const { k, id } = await setup();
    const rs = await Promise.all(Array.from({ length: 8 }, () => entry(k, "credit", { user_id: id, amount: 1 }, "same")));
    expect(rs.filter((r) => r.status === 200).length).toBe(1);
    for (const r of rs.filter((r) => r.status !== 200)) expect(r.status).toBe(409);
    expect((await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${id}`)).body.balance).toBe(1);
  });

  test("a failed request stores nothing: a corrected retry with the same key takes effect", async () => {
    const { k, id } = await setup();
    expect((await entry(k, "debit", { user_id: id, amount: 5 }, "K2")).status).toBe(409);
    await entry(k, "credit", { user_id: id, amount: 5 });
    expect((await entry(k, "debit", { user_id: id, amount: 5 }, "K2")).status).toBe(200);
  });
});

describe("ledger (spec: user_id, limit, offset, order, reason, source; query and pagination echo)", () => {
  test("filters by reason and source, order asc and desc, cursor pages, bounds on limit/offset/order", async () => {
    const { k, id } = await setup();
    for (const [reason, source] of [
      ["quest", "app"],
      ["shop", "app"],
      ["quest", "bot"],
      ["quest", "app"],
    ])
      await entry(k, "credit", { user_id: id, amount: 1, reason, source });
    const q = (s: string) => signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${id}&${s}`);
    const both = (await q("reason=quest&source=app")).body;
    expect(both.ledger.map((e: any) => [e.reason, e.source, e.balance_after])).toEqual([
      ["quest", "app", 4],
      ["quest", "app", 1],
    ]);
    expect(both.query).toMatchObject({ reason: "quest", source: "app", order: "desc", limit: 50, offset: 0, cursor: null });
    expect(both.balance).toBe(4);
    const asc = (await q("order=asc&limit=3")).body;
    expect(asc.ledger.map((e: any) => e.balance_after)).toEqual([1, 2, 3]);
    expect(asc.pagination).toMatchObject({ has_more: true, next_offset: 3 });
    const rest = (await q(`order=asc&limit=3&cursor=${asc.pagination.next_cursor}`)).body;
    expect(rest.ledger.map((e: any) => e.balance_after)).toEqual([4]);
    expect(rest.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
    for (const bad of ["limit=0", "limit=201", "offset=-1", "order=ASC", "cursor=garbage"]) expect((await q(bad)).status).toBe(400);
    expect((await q("offset=10001")).body.error).toBe("offset_too_large");
  });

  test("another partner's user is 404 on balance, ledger and credit; a suspended user is read but not credited (409)", async () => {
    const { k, id } = await setup();
    const other = await createKey(h, { partner: "Other" });
    expect((await signedJson(h, other, "GET", `/api/salutes/balance?user_id=${id}`)).status).toBe(404);
    expect((await signedJson(h, other, "GET", `/api/salutes/ledger?user_id=${id}`)).status).toBe(404);
    expect((await entry(other, "credit", { user_id: id, amount: 1 })).status).toBe(404);
    await signedJson(h, k, "PATCH", `/api/partner/users/${id}`, { body: { status: "suspended" } });
    expect((await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${id}`)).status).toBe(200);
    expect((await entry(k, "credit", { user_id: id, amount: 1 })).status).toBe(409);
  });

  test("scopes: debit needs debit, ledger needs ledger; a sandbox key is 403 on the live salutes routes", async () => {
    const { id } = await setup();
    const creditOnly = await createKey(h, { scopes: ["credit"] });
    expect((await entry(creditOnly, "debit", { user_id: id, amount: 1 })).status).toBe(403);
    expect((await signedJson(h, creditOnly, "GET", `/api/salutes/ledger?user_id=${id}`)).status).toBe(403);
    const sb = await createKey(h, { mode: "sandbox" });
    expect((await signedJson(h, sb, "GET", `/api/salutes/balance?user_id=${id}`)).status).toBe(403);
  });
});
