// Design audit: money and points (docs/design.md §5, §2 "Token amounts from the chain: decimal strings").
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, signedInit, signedJson, type TestKey } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const newUser = async (k: TestKey, ext: string) =>
  (await signedJson(h, k, "POST", "/api/partner/users", { body: { external_id: ext, username: `u${ext}`, display_name: "U" } })).body.user.id as number;
const rawCredit = (k: TestKey, rawBody: string, path = "/api/salutes/credit") => h.json(path, signedInit(h, k, "POST", path, { body: rawBody }));
const move = (k: TestKey, uid: number, amount: unknown, path = "/api/salutes/credit") =>
  signedJson(h, k, "POST", path, { body: { user_id: String(uid), amount, reason: "r", source: "s" } });
const balance = async (k: TestKey, uid: number) => (await signedJson(h, k, "GET", `/api/salutes/balance?user_id=${uid}`)).body.balance as number;

describe("docs/design.md §5 salutes are exact", () => {
  // "stored as integers in minor units (SALUTES_DECIMALS, default 2), shown as JSON numbers"
  test("0.1 + 0.2 credited separately is a balance of exactly 0.3; amounts come back as JSON numbers", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "m1");
    const a = await move(k, uid, 0.1);
    expect(typeof a.body.balance).toBe("number");
    expect(typeof a.body.delta).toBe("number");
    await move(k, uid, 0.2);
    expect(await balance(k, uid)).toBe(0.3);
    for (let i = 0; i < 10; i++) await move(k, uid, 0.07);
    expect(await balance(k, uid)).toBe(1);
    const d = await move(k, uid, 0.29, "/api/salutes/debit");
    expect([d.body.balance, d.body.delta]).toEqual([0.71, -0.29]);
    const ledger = (await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${uid}&limit=200`)).body.ledger as Array<{
      delta: number;
      balance_after: number;
    }>;
    expect(ledger[0]!.balance_after).toBe(0.71);
    for (const e of ledger) expect(typeof e.delta).toBe("number");
  });

  // "More decimals than allowed, non-finite, zero or negative amounts → 400"
  test("too many decimals, zero, negative, a string, null, non-finite and over the maximum are 400", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "m2");
    for (const amount of [12.345, 0, -1, -0.01, "12.5", null, true, 1e-7, 1_000_000_000.01, 2e9]) {
      const r = await move(k, uid, amount);
      expect(r.status).toBe(400);
      expect(r.body.success).toBe(false);
    }
    // 1e400 is Infinity once parsed; -0 is zero.
    for (const raw of [`{"user_id":"${uid}","amount":1e400,"reason":"r","source":"s"}`, `{"user_id":"${uid}","amount":-0,"reason":"r","source":"s"}`]) {
      const r = await rawCredit(k, raw);
      expect(r.status).toBe(400);
    }
    expect(await balance(k, uid)).toBe(0);
  });

  // "A debit never takes a balance below zero (409 insufficient_balance)"
  test("a debit past the balance is 409 insufficient_balance and changes nothing; exactly the balance is allowed", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "m3");
    await move(k, uid, 5);
    const over = await move(k, uid, 5.01, "/api/salutes/debit");
    expect([over.status, over.body.error]).toEqual([409, "insufficient_balance"]);
    expect(await balance(k, uid)).toBe(5);
    const all = await move(k, uid, 5, "/api/salutes/debit");
    expect([all.status, all.body.balance]).toEqual([200, 0]);
  });

  // Exactness at the top of the range: a balance that would pass 15 significant digits is refused, never rounded.
  test("credits that would carry a balance past the exact range are refused with a 4xx, never a 500 or an inexact balance", async () => {
    h = await openTestApp({ env: { SALUTES_MAX_AMOUNT: "1000000000000" } });
    const k = await createKey(h);
    const uid = await newUser(k, "m4");
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await move(k, uid, 999_999_999_999.99)).status);
    expect(statuses.every((s) => s === 200 || (s >= 400 && s < 500))).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBe(10);
    expect(await balance(k, uid)).toBe(9_999_999_999_999.9);
  });

  // "Balance always equals the sum of the ledger; a test proves it under concurrency"
  test("40 concurrent credits and debits: the balance equals the ledger's sum and never went below zero", async () => {
    h = await openTestApp();
    const k = await createKey(h);
    const uid = await newUser(k, "m5");
    await move(k, uid, 3);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => move(k, uid, i % 2 ? 0.35 : 0.5, i % 2 ? "/api/salutes/debit" : "/api/salutes/credit")),
    );
    for (const a of answers) expect([200, 409]).toContain(a.status);
    const ledger = (await signedJson(h, k, "GET", `/api/salutes/ledger?user_id=${uid}&limit=200`)).body.ledger as Array<{
      delta: number;
      balance_after: number;
    }>;
    const sumMinor = ledger.reduce((s, e) => s + Math.round(e.delta * 100), 0);
    expect(Math.round((await balance(k, uid)) * 100)).toBe(sumMinor);
    for (const e of ledger) expect(e.balance_after).toBeGreaterThanOrEqual(0);
  });
});
