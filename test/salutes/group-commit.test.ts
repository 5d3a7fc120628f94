// Credits, debits and conversions commit in groups (IdempotencyStore.runGrouped): requests that arrive together
// share one transaction, each in its own savepoint, with its nonce recorded inside it.
import { afterEach, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { signedInit } from "../support/partner";
import { body, credit, debit, expectLedgerConsistent, fixture, ledgerRows } from "./support";

let h = undefined as unknown as TestApp;
afterEach(() => {
  h?.close();
  h = undefined as unknown as TestApp;
});

const send = (path: string, init: RequestInit) => h.json(path, init);

test("requests in one group succeed or fail alone: a refused debit rolls back only itself", async () => {
  h = createTestApp();
  const f = fixture(h);
  const user = f.user;
  const plan = [
    ["/api/salutes/credit", body(user, 10)],
    ["/api/salutes/debit", body(user, 1000)], // more than the balance: refused, nothing of it may remain
    ["/api/salutes/credit", body(user, 5)],
    ["/api/salutes/debit", body(user, 3)],
  ] as const;
  const inits = plan.map(([path, b]) => signedInit(h, f.key, "POST", path, { body: b }));
  // Sent at once: they reach the server in the same turn and commit in one transaction.
  const counter = async (name: string) => Number((await h.ctx.metrics.render()).match(new RegExp(`^${name} (\\d+)$`, "m"))?.[1]);
  const results = await Promise.all(plan.map(([path], i) => send(path, inits[i]!)));
  expect([await counter("herald_group_commits"), await counter("herald_grouped_effects")]).toEqual([1, 4]);
  expect(await h.ctx.metrics.render()).toContain("# TYPE herald_group_commits counter");
  expect(results.map((r) => r.status)).toEqual([200, 409, 200, 200]);
  expect(results[1]!.body.error).toBe("insufficient_balance");
  expect(results[3]!.body.balance).toBe(12);
  expect(ledgerRows(h).map((r) => r.delta_minor)).toEqual([1000, 500, -300]);
  expectLedgerConsistent(h);
  // The refused debit's nonce is used all the same: its exact replay is refused as a replay.
  const replay = await send("/api/salutes/debit", inits[1]!);
  expect([replay.status, replay.body.error]).toEqual([409, "replay_detected"]);
});

test("one nonce twice in the same group: exactly one succeeds, the other is replay_detected", async () => {
  h = createTestApp();
  const f = fixture(h);
  const nonce = "cd".repeat(16);
  const a = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1), nonce });
  const b = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1), nonce });
  const results = await Promise.all([send("/api/salutes/credit", a), send("/api/salutes/credit", b)]);
  expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
  expect(results.find((r) => r.status === 409)!.body.error).toBe("replay_detected");
  expect(ledgerRows(h)).toHaveLength(1);
});

test("a request refused before its handler (an invalid body) still uses up its nonce", async () => {
  h = createTestApp();
  const f = fixture(h);
  const nonce = "ef".repeat(16);
  const bad = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, -5), nonce });
  const first = await send("/api/salutes/credit", bad);
  expect([first.status, first.body.error]).toEqual([400, "invalid_payload"]);
  await Bun.sleep(0); // the nonce is recorded once the response is out
  const again = await send("/api/salutes/credit", bad);
  expect([again.status, again.body.error]).toEqual([409, "replay_detected"]);
  expect(ledgerRows(h)).toHaveLength(0);
});

test("one Idempotency-Key twice in the same group: one effect, the other answers the stored response", async () => {
  h = createTestApp();
  const f = fixture(h);
  const key = "group-dup-1";
  const a = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 2), idempotencyKey: key });
  const b = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 2), idempotencyKey: key });
  const results = await Promise.all([send("/api/salutes/credit", a), send("/api/salutes/credit", b)]);
  expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
  const replay = results.find((r) => r.status === 409)!;
  expect(replay.body.error).toBe("idempotency_replay");
  expect(replay.headers.get("idempotent-replayed")).toBe("true");
  expect(ledgerRows(h)).toHaveLength(1);
  expect((await debit(h, f.key, body(f.user, 2))).body.balance).toBe(0);
  expect((await credit(h, f.key, body(f.user, 1))).body.balance).toBe(1);
});

test("a request refused for its Idempotency-Key has still used its nonce", async () => {
  h = createTestApp();
  const f = fixture(h);
  const nonce = "0a".repeat(16);
  const noKey = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1), nonce, idempotencyKey: null });
  const first = await send("/api/salutes/credit", noKey);
  expect([first.status, first.body.error]).toEqual([400, "idempotency_key_required"]);
  const again = await send("/api/salutes/credit", signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1), nonce }));
  expect([again.status, again.body.error]).toEqual([409, "replay_detected"]);
  expect(ledgerRows(h)).toHaveLength(0);
});
