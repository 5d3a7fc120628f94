// Docs audit: the conversion policy, field rules and ledger parameters of docs/salutes.md against the real app.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedJson } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});
const CONV = { SALUTES_CONVERSION_ENABLED: "1", SALUTES_CONVERSION_RATE: "0.015", SALUTES_CONVERSION_DAILY_CAP: "200" };

async function userWith(k: Awaited<ReturnType<typeof createKey>>, amount: number) {
  const u = (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: "e42", username: "user42" } })).body.user;
  await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: String(u.id), amount, reason: "quest", source: "app" } });
  return String(u.id);
}

describe("docs/salutes.md", () => {
  // docs/salutes.md:190-199 — policy defaults
  test("conversion-policy defaults and conversions off → 403 conversion_disabled", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const p = await signedJson(h, k, "GET", "/api/salutes/conversion-policy");
    expect(p.status).toBe(200);
    const pol = p.body.policy ?? p.body;
    expect(pol).toMatchObject({ enabled: false, target: "token", rate: "0.01", min: 10, max: 10000, daily_cap: 50000 });
    const uid = await userWith(k, 100);
    const c = await signedJson(h, k, "POST", "/api/salutes/convert", { body: { user_id: uid, amount: 50 } });
    expect([c.status, c.body.error]).toEqual([403, "conversion_disabled"]);
  });

  // docs/salutes.md:200-215 — exact converted_amount, ledger reason/source, bounds, daily cap, balance
  test("conversion: exact amount, ledger entry, bounds, cap and balance refusals", async () => {
    h = await openTestApp({ env: CONV });
    const k = await createKey(h);
    const uid = await userWith(k, 1000);
    const c = await signedJson(h, k, "POST", "/api/salutes/convert", { body: { user_id: uid, amount: 123.45 } });
    expect(c.status).toBe(200);
    expect(c.body.conversion).toMatchObject({ user_id: uid, amount: 123.45, rate: "0.015", converted_amount: "1.85175", target: "token", status: "completed" });
    expect(c.body.balance).toBe(876.55);
    const led = (await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${uid}&limit=1`)).body.ledger[0];
    expect(led).toMatchObject({ reason: "conversion", source: "salutes.convert", delta: -123.45 });
    const low = await signedJson(h, k, "POST", "/api/salutes/convert", { body: { user_id: uid, amount: 9.99 } });
    expect([low.status, low.body.error]).toEqual([400, "invalid_payload"]);
    const extra = await signedJson(h, k, "POST", "/api/salutes/convert", { body: { user_id: uid, amount: 10, note: "x" } });
    expect([extra.status, extra.body.error]).toEqual([400, "invalid_payload"]);
    const cap = await signedJson(h, k, "POST", "/api/salutes/convert", { body: { user_id: uid, amount: 80 } });
    expect([cap.status, cap.body.error]).toEqual([409, "conversion_limit_exceeded"]);
    expect(cap.body.details).toMatchObject({ daily_cap: 200, used_today: 123.45, remaining_today: 76.55 });
    h.clock.set("2026-01-02T00:00:00.000Z");
    const next = await signedJson(h, k, "POST", "/api/salutes/convert", { body: { user_id: uid, amount: 80 } });
    expect(next.status).toBe(200);
    const nf = await signedJson(h, k, "POST", "/api/salutes/convert", { body: { user_id: "999999", amount: 10 } });
    expect([nf.status, nf.body.error]).toEqual([404, "not_found"]);
  });

  // docs/salutes.md:214 — more than the balance → 409 insufficient_balance
  test("conversion past the balance", async () => {
    h = await openTestApp({ env: CONV });
    const k = await createKey(h);
    const uid = await userWith(k, 20);
    const c = await signedJson(h, k, "POST", "/api/salutes/convert", { body: { user_id: uid, amount: 30 } });
    expect([c.status, c.body.error]).toEqual([409, "insufficient_balance"]);
  });

  // docs/salutes.md:78-83 — reason and source 1–64 characters, no control characters
  test("reason and source rules", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await userWith(k, 1);
    for (const [f, v] of [
      ["reason", ""],
      ["reason", "x".repeat(65)],
      ["reason", "a\nb"],
      ["source", ""],
      ["source", "x".repeat(65)],
      ["source", "a\tb"],
    ] as const) {
      const r = await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: uid, amount: 1, reason: "r", source: "s", [f]: v } });
      expect([f, v, r.status, r.body.error]).toEqual([f, v, 400, "invalid_payload"]);
    }
    const ok = await signedJson(h, k, "POST", "/api/salutes/credit", { body: { user_id: uid, amount: 1, reason: "x".repeat(64), source: "Daily quest" } });
    expect(ok.status).toBe(200);
  });

  // docs/salutes.md:130-138, 224 — ledger: user_id required (invalid_query), limit 1–200 default 50, query echo
  test("ledger parameters", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await userWith(k, 1);
    const l = await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${uid}`);
    expect(l.body.query).toMatchObject({ limit: 50, offset: 0, order: "desc", reason: null, source: null });
    const none = await signedJson(h, k, "GET", "/api/salutes/ledger");
    expect([none.status, none.body.error]).toEqual([400, "invalid_query"]);
    const bal = await signedJson(h, k, "GET", "/api/salutes/balance");
    expect([bal.status, bal.body.error]).toEqual([400, "invalid_query"]);
    expect((await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${uid}&limit=201`)).status).toBe(400);
  });
});
