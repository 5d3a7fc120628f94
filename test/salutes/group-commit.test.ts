// Credits, debits and conversions commit in groups (IdempotencyStore.runGrouped): requests that arrive together
// share one transaction, each in its own savepoint, with its nonce recorded inside it.
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { signedInit } from "../support/partner";
import { body, credit, debit, expectLedgerConsistent, fixture, ledgerRows } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const send = (path: string, init: RequestInit) => h.json(path, init);

test("requests in one group succeed or fail alone: a refused debit rolls back only itself", async () => {
  h = await openTestApp();
  const f = await fixture(h);
  const user = f.user;
  const plan = [
    ["/api/salutes/credit", body(user, 10)],
    ["/api/salutes/debit", body(user, 1000)], // more than the balance ever is: refused, nothing of it may remain
    ["/api/salutes/credit", body(user, 5)],
    ["/api/salutes/debit", body(user, 3)], // covered by the balance of 3 made before, in whatever order they land
  ] as const;
  const inits = plan.map(([path, b]) => signedInit(h, f.key, "POST", path, { body: b }));
  // Sent at once: they reach the server in the same turn and commit in one transaction.
  const counter = async (name: string) => Number((await h.ctx.metrics.render()).match(new RegExp(`^${name} (\\d+)$`, "m"))?.[1]);
  const counters = async () => [await counter("herald_group_commits"), await counter("herald_grouped_effects")];
  // A balance of 3 first, which is also the key's first use (it writes its last_used_at). Counted from after it:
  // the fixture's own writes went through the same engine.
  expect((await credit(h, f.key, body(user, 3))).status).toBe(200);
  const [commitsBefore, effectsBefore] = await counters();
  const results = await Promise.all(plan.map(([path], i) => send(path, inits[i]!)));
  const [commitsAfter, effectsAfter] = await counters();
  // On SQLite the four requests' transactions share one commit (src/db/sqlite-engine.ts); then the refused debit's
  // nonce, rolled back with its savepoint, is written on its own (a second commit of one transaction:
  // IdempotencyStore.run). On PostgreSQL how they share commits depends on when each reaches its batch slot. The two
  // counters are the older names of herald_db_commits_total and herald_db_transactions_total, on either engine.
  if (h.ctx.store.dialect === "sqlite") expect([commitsAfter! - commitsBefore!, effectsAfter! - effectsBefore!]).toEqual([2, 5]);
  else expect(effectsAfter! - effectsBefore!).toBeGreaterThanOrEqual(3); // the three accepted (the lone nonce write is no transaction there)
  expect([commitsAfter, effectsAfter]).toEqual([await counter("herald_db_commits_total"), await counter("herald_db_transactions_total")]);
  expect(await h.ctx.metrics.render()).toContain("# TYPE herald_group_commits counter");
  expect(results.map((r) => r.status)).toEqual([200, 409, 200, 200]);
  expect(results[1]!.body.error).toBe("insufficient_balance");
  // Within the group, the entries are in the order the requests reached the store, which need not be the order
  // they were sent in (a request that awaits one more read — a key-cache refresh — comes later; on PostgreSQL each
  // takes its own connection). Whatever the order: after the first 3, the three accepted entries and nothing of
  // the refused one, each answer the running balance of its own entry, and 15 at the end.
  const rows = await ledgerRows(h);
  expect(rows[0]!.delta_minor).toBe(300);
  expect(
    rows
      .slice(1)
      .map((r) => r.delta_minor)
      .sort((a, b) => a - b),
  ).toEqual([-300, 500, 1000]);
  expect(rows.at(-1)!.balance_after_minor).toBe(1500);
  for (const r of results.filter((x) => x.status === 200)) {
    const row = rows.find((x) => x.id === r.body.ledger_entry_id)!;
    expect(Math.round(r.body.balance * 100)).toBe(row.balance_after_minor);
  }
  expect((await send(`/api/salutes/balance?user_id=${user}`, signedInit(h, f.key, "GET", `/api/salutes/balance?user_id=${user}`))).body.balance).toBe(15);
  await expectLedgerConsistent(h);
  // The refused debit's nonce is used all the same: its exact replay is refused as a replay.
  const replay = await send("/api/salutes/debit", inits[1]!);
  expect([replay.status, replay.body.error]).toEqual([409, "replay_detected"]);
});

test("one nonce twice in the same group: exactly one succeeds, the other is replay_detected", async () => {
  h = await openTestApp();
  const f = await fixture(h);
  const nonce = "cd".repeat(16);
  const a = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1), nonce });
  const b = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1), nonce });
  const results = await Promise.all([send("/api/salutes/credit", a), send("/api/salutes/credit", b)]);
  expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
  expect(results.find((r) => r.status === 409)!.body.error).toBe("replay_detected");
  expect(await ledgerRows(h)).toHaveLength(1);
});

test("a request refused before its handler (an invalid body) still uses up its nonce", async () => {
  h = await openTestApp();
  const f = await fixture(h);
  const nonce = "ef".repeat(16);
  const bad = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, -5), nonce });
  const first = await send("/api/salutes/credit", bad);
  expect([first.status, first.body.error]).toEqual([400, "invalid_payload"]);
  // The nonce is recorded once the response is out: wait for its row, bounded.
  const used = async () =>
    (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM partner_nonces WHERE key_id = ? AND nonce = ?", [f.key.keyId, nonce]))!.n;
  for (let i = 0; i < 200 && (await used()) === 0; i++) await Bun.sleep(5);
  expect(await used()).toBe(1);
  const again = await send("/api/salutes/credit", bad);
  expect([again.status, again.body.error]).toEqual([409, "replay_detected"]);
  expect(await ledgerRows(h)).toHaveLength(0);
});

test("one Idempotency-Key twice in the same group: one effect, the other answers the stored response", async () => {
  h = await openTestApp();
  const f = await fixture(h);
  const key = "group-dup-1";
  const a = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 2), idempotencyKey: key });
  const b = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 2), idempotencyKey: key });
  const results = await Promise.all([send("/api/salutes/credit", a), send("/api/salutes/credit", b)]);
  expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
  const replay = results.find((r) => r.status === 409)!;
  expect(replay.body.error).toBe("idempotency_replay");
  expect(replay.headers.get("idempotent-replayed")).toBe("true");
  expect(await ledgerRows(h)).toHaveLength(1);
  expect((await debit(h, f.key, body(f.user, 2))).body.balance).toBe(0);
  expect((await credit(h, f.key, body(f.user, 1))).body.balance).toBe(1);
});

test("a request refused for its Idempotency-Key has still used its nonce", async () => {
  h = await openTestApp();
  const f = await fixture(h);
  const nonce = "0a".repeat(16);
  const noKey = signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1), nonce, idempotencyKey: null });
  const first = await send("/api/salutes/credit", noKey);
  expect([first.status, first.body.error]).toEqual([400, "idempotency_key_required"]);
  const again = await send("/api/salutes/credit", signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1), nonce }));
  expect([again.status, again.body.error]).toEqual([409, "replay_detected"]);
  expect(await ledgerRows(h)).toHaveLength(0);
});
