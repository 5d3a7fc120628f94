import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HeraldApiError, HeraldClient } from "../../src/client";
import { signedJson } from "../support/partner";
import { TARGET } from "../support/target";
import { expectRefusal, row, rows, startE2E, type E2E } from "./support";

// Salutes as a partner's backend uses them (docs/salutes.md): credit, debit, read the balance and the ledger,
// retry with the same Idempotency-Key, hit the floor — and the database agrees: the balance is the sum of the
// ledger, one row per effect, one outbox event per entry.

let e: E2E;
let userId: string;
beforeAll(async () => {
  e = await startE2E({ SALUTES_CONVERSION_ENABLED: "1" });
  const u = await signedJson(e.h, e.live, "POST", "/api/partner/users", { body: { external_id: "e2e-salutes" } });
  expect(u.status).toBe(201);
  userId = String(u.body.user.id);
});
afterAll(() => e?.stop());

const credit = (amount: number, opts: { idem?: string; reason?: string } = {}) =>
  signedJson(e.h, e.live, "POST", "/api/salutes/credit", {
    body: { user_id: userId, amount, reason: opts.reason ?? "quest_reward", source: "game.arena" },
    idempotencyKey: opts.idem,
  });
const debit = (amount: number, idem?: string) =>
  signedJson(e.h, e.live, "POST", "/api/salutes/debit", { body: { user_id: userId, amount, reason: "shop.purchase", source: "shop" }, idempotencyKey: idem });

/** Balance and ledger, read from the database the target writes. */
const ledgerMinor = () =>
  row<{ n: number; sum: number | null }>(e.h, "SELECT count(*) AS n, sum(delta_minor) AS sum FROM salutes_ledger WHERE user_id = ?", userId);
const balanceMinor = async () =>
  (await row<{ balance_minor: number } | null>(e.h, "SELECT balance_minor FROM salutes_balances WHERE user_id = ?", userId))?.balance_minor ?? 0;

describe(`salutes over HTTP (${TARGET.label})`, () => {
  test("a new user's balance is 0; credits and debits move it exactly and answer the entry", async () => {
    const empty = await signedJson(e.h, e.live, "GET", `/api/salutes/balance?user_id=${userId}`);
    expect(empty.body).toEqual({ success: true, user_id: userId, balance: 0, partner_key_id: e.live.keyId });

    const c1 = await credit(12.5, { idem: "e2e-credit-1" });
    expect(c1.status).toBe(200);
    expect(c1.body).toMatchObject({ success: true, user_id: userId, balance: 12.5, delta: 12.5, idempotency_key: "e2e-credit-1" });
    const c2 = await credit(0.29);
    expect(c2.body.balance).toBe(12.79); // never 12.790000000000001
    const d1 = await debit(3.75);
    expect(d1.body).toMatchObject({ balance: 9.04, delta: -3.75 });
    expect(d1.body.ledger_entry_id).toBeGreaterThan(c2.body.ledger_entry_id);

    const balance = await signedJson(e.h, e.live, "GET", `/api/salutes/balance?user_id=${userId}`);
    expect(balance.body.balance).toBe(9.04);
    expect(await balanceMinor()).toBe(904);
    expect(await ledgerMinor()).toEqual({ n: 3, sum: 904 });
  });

  test("a retry with the same key and body is 409 idempotency_replay with the first answer, and credits nothing", async () => {
    const before = await ledgerMinor();
    const first = await credit(5, { idem: "e2e-credit-retry" });
    expect(first.status).toBe(200);
    const replay = await credit(5, { idem: "e2e-credit-retry" });
    expectRefusal(replay, 409, "idempotency_replay");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toMatchObject({ original_status: 200, original_response: first.body });
    const reused = await credit(6, { idem: "e2e-credit-retry" });
    expectRefusal(reused, 422, "idempotency_key_reused");
    expect(await ledgerMinor()).toEqual({ n: before.n + 1, sum: (before.sum ?? 0) + 500 });
  });

  test("HeraldClient behind a proxy that resent its credit (the first copy took effect): one credit, the first answer", async () => {
    // What deploy/haproxy.cfg does when the instance serving a request dies before answering: the same bytes go to
    // another instance, and that copy meets the used nonce (409 replay_detected). Here the first copy is answered
    // and its answer dropped, as the dead instance's would be.
    const before = await ledgerMinor();
    const sent: Array<{ nonce: string | null; key: string | null; status: number }> = [];
    let resent = false;
    const proxy = async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      const target = url.pathname + url.search;
      const headers = new Headers(init?.headers);
      const note = async (res: Response) => {
        sent.push({ nonce: headers.get("x-partner-nonce"), key: headers.get("idempotency-key"), status: res.status });
        return res;
      };
      if (!resent) {
        resent = true;
        await (await note(await e.h.request(target, init))).arrayBuffer();
      }
      return note(await e.h.request(target, init));
    };
    const client = new HeraldClient({
      baseUrl: "http://herald.invalid",
      keyId: e.live.keyId,
      secret: e.live.secret,
      fetch: proxy,
      sleep: async () => {},
      now: () => e.h.clock.now().getTime(),
    });
    const body = { user_id: userId, amount: 2.5, reason: "quest_reward", source: "game.arena" };
    const answer = await client.post("/api/salutes/credit", body, { idempotencyKey: "e2e-resent-by-proxy" }).catch((err: unknown) => err);
    expect(answer).toBeInstanceOf(HeraldApiError);
    const err = answer as HeraldApiError;
    expect([err.status, err.code, err.attempts]).toEqual([409, "idempotency_replay", 2]);
    const original = (err.body as { original_status: number; original_response: { ledger_entry_id: number; delta: number } }).original_response;
    expect(original).toMatchObject({ delta: 2.5, idempotency_key: "e2e-resent-by-proxy" });
    // The first copy (200), its resent copy (409 replay_detected), the client's second attempt (new nonce, same key).
    expect(sent.map((x) => x.status)).toEqual([200, 409, 409]);
    expect(sent[0]!.nonce).toBe(sent[1]!.nonce);
    expect(sent[2]!.nonce).not.toBe(sent[0]!.nonce);
    expect(new Set(sent.map((x) => x.key))).toEqual(new Set(["e2e-resent-by-proxy"]));
    expect(await ledgerMinor()).toEqual({ n: before.n + 1, sum: (before.sum ?? 0) + 250 });
  });

  test("a debit past the balance is 409 insufficient_balance, writes nothing, and the same key works after a credit", async () => {
    const before = await ledgerMinor();
    const current = (await balanceMinor()) / 100;
    const refused = await debit(current + 1, "e2e-debit-floor");
    expectRefusal(refused, 409, "insufficient_balance");
    expect(refused.body.details).toMatchObject({ balance: current, requested: current + 1 });
    expect(await ledgerMinor()).toEqual(before);
    expect((await credit(1)).status).toBe(200);
    // Nothing was stored for the refused request, so its corrected retry may reuse the key.
    const retried = await debit(current + 1, "e2e-debit-floor");
    expect(retried.status).toBe(200);
    expect(retried.body.balance).toBe(0); // down to exactly 0 is allowed
    expect(await balanceMinor()).toBe(0);
  });

  test("bad amounts are 400 and change nothing", async () => {
    const before = await ledgerMinor();
    for (const amount of [0, -5, 12.345, 1e21]) expectRefusal(await credit(amount), 400, "invalid_payload");
    const asString = await signedJson(e.h, e.live, "POST", "/api/salutes/credit", { body: { user_id: userId, amount: "10", reason: "x", source: "y" } });
    expectRefusal(asString, 400, "invalid_payload");
    expect(asString.body.details[0].field).toBe("amount");
    expectRefusal(
      await signedJson(e.h, e.live, "POST", "/api/salutes/credit", { body: { user_id: "999999", amount: 1, reason: "x", source: "y" } }),
      404,
      "not_found",
    );
    expect(await ledgerMinor()).toEqual(before);
  });

  test("the ledger pages newest first with filters; Σ ledger = balance; one outbox event per entry", async () => {
    await credit(100, { reason: "bonus" });
    const conv = await signedJson(e.h, e.live, "POST", "/api/salutes/convert", { body: { user_id: userId, amount: 50 } });
    expect(conv.status).toBe(200);
    expect(conv.body.conversion).toMatchObject({ amount: 50, rate: "0.01", converted_amount: "0.5", status: "completed" });

    const page1 = await signedJson(e.h, e.live, "GET", `/api/salutes/ledger?user_id=${userId}&limit=3`);
    expect(page1.status).toBe(200);
    expect(page1.body).toMatchObject({ user_id: userId, count: 3, pagination: { has_more: true } });
    const all: Array<{ id: number; delta: number; balance_after: number; reason: string }> = [...page1.body.ledger];
    let cursor: string | null = page1.body.pagination.next_cursor;
    for (let i = 0; i < 20 && cursor; i++) {
      const next = await signedJson(e.h, e.live, "GET", `/api/salutes/ledger?user_id=${userId}&limit=3&cursor=${encodeURIComponent(cursor)}`);
      all.push(...next.body.ledger);
      cursor = next.body.pagination.has_more ? next.body.pagination.next_cursor : null;
    }
    const ids = all.map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(all).toHaveLength((await ledgerMinor()).n);
    expect(all[0]).toMatchObject({ reason: "conversion", delta: -50 });
    // Σ ledger (over HTTP and in the database) = balance; balance_after of the newest entry = balance.
    const sum = all.reduce((s, r) => s + Math.round(r.delta * 100), 0);
    expect(sum).toBe(await balanceMinor());
    expect((await ledgerMinor()).sum).toBe(await balanceMinor());
    expect(Math.round(all[0]!.balance_after * 100)).toBe(await balanceMinor());
    expect(page1.body.balance * 100).toBe(await balanceMinor());

    const filtered = await signedJson(e.h, e.live, "GET", `/api/salutes/ledger?user_id=${userId}&reason=bonus`);
    expect(filtered.body.ledger.map((r: { reason: string }) => r.reason)).toEqual(["bonus"]);
    expectRefusal(await signedJson(e.h, e.live, "GET", `/api/salutes/ledger?user_id=${userId}&order=sideways`), 400, "invalid_query");

    const events = await rows<{ event_type: string; n: number }>(
      e.h,
      "SELECT event_type, count(*) AS n FROM events WHERE event_type LIKE 'salutes.%' GROUP BY event_type ORDER BY event_type",
    );
    const credits = (await row<{ n: number }>(e.h, "SELECT count(*) AS n FROM salutes_ledger WHERE user_id = ? AND delta_minor > 0", userId)).n;
    const debits = (await row<{ n: number }>(e.h, "SELECT count(*) AS n FROM salutes_ledger WHERE user_id = ? AND delta_minor < 0", userId)).n;
    expect(events).toEqual([
      { event_type: "salutes.credit", n: credits },
      { event_type: "salutes.debit", n: debits },
    ]);
  });
});
