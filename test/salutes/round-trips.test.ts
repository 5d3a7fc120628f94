// What a credit costs PostgreSQL (issue 49): round trips, statements and commits, counted by the engine itself
// (herald_db_round_trips_total: a statement sent while another of its transaction is unanswered rides in that one's
// round trip). The nonce, the Idempotency-Key claim and the user check go together; the balance move and the
// entry are one statement; the outbox event with its fan-out, the stored answer and the COMMIT go together
// (TxOptions.lastAnsweredWithCommit) — three waits for the server alone, the bound. Credits arriving together
// share a commit and run together in it (no SAVEPOINTs): a batch waits for the server as often as one credit does.
import { afterEach, expect } from "bun:test";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { signedInit } from "../support/partner";
import { testOn } from "../support/skipped";
import { body, credit, expectLedgerConsistent, fixture, ledgerRows } from "./support";

const onPostgres = testOn("postgres", "test/salutes/round-trips.test.ts");

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const counts = () => ({ ...h.ctx.store.health.counts });

/** The request log's writes (a batch now and then, off the request path) are not the credit's: written first. */
async function quiet(): Promise<void> {
  await afterResponses();
  await h.ctx.requestLog.stop();
}

onPostgres("a lone credit waits for PostgreSQL three times: its checks, the move, the event with the answer and the commit", async () => {
  h = await openTestApp();
  const f = await fixture(h);
  // The key's first use writes last_used_at, which drops the cached key; the second reads it again. Counted after.
  for (const amount of [1, 1]) expect((await credit(h, f.key, body(f.user, amount))).status).toBe(200);
  await quiet();
  const before = counts();
  const res = await credit(h, f.key, body(f.user, 2));
  expect(res.status).toBe(200);
  const after = counts();
  expect(after.roundTrips - before.roundTrips).toBe(3);
  // BEGIN, nonce, claim, user; move + entry; event + fan-out, stored answer, COMMIT.
  expect(after.statements - before.statements).toBe(8);
  expect(after.commits - before.commits).toBe(1);
  await expectLedgerConsistent(h);
});

onPostgres("credits arriving together share commits and round trips, and every one is answered once its commit is", async () => {
  h = await openTestApp();
  const f = await fixture(h);
  for (const amount of [1, 1]) expect((await credit(h, f.key, body(f.user, amount))).status).toBe(200);
  const n = 24;
  const inits = Array.from({ length: n }, () => signedInit(h, f.key, "POST", "/api/salutes/credit", { body: body(f.user, 1) }));
  await quiet();
  const before = counts();
  const results = await Promise.all(inits.map((init) => h.json("/api/salutes/credit", init)));
  const after = counts();
  expect(results.map((r) => r.status)).toEqual(Array(n).fill(200));
  const commits = after.commits - before.commits;
  const roundTrips = after.roundTrips - before.roundTrips;
  // One user: one batch stream, so all but the first wait for a batch and share its commit.
  expect(commits).toBeLessThan(n / 2);
  expect(after.transactions - before.transactions).toBe(n);
  // A batch's credits run together (TxOptions.together): six statements each and no SAVEPOINT, BEGIN and COMMIT per
  // batch; and a batch waits for the server as often as one credit does (three, the COMMIT in the last), however many
  // it carries.
  expect(after.statements - before.statements).toBe(6 * n + 2 * commits);
  expect(roundTrips).toBeLessThanOrEqual(3 * commits);
  expect(after.redone - before.redone).toBe(0);
  // Every credit is in the ledger once, the balance is their sum, and each answer names its own entry.
  const rows = await ledgerRows(h, f.user);
  expect(rows.length).toBe(n + 2);
  const answered = results.map((r) => (r.body as { ledger_entry_id: number }).ledger_entry_id).sort((a, b) => a - b);
  expect(new Set(answered).size).toBe(n);
  expect(answered).toEqual(rows.slice(2).map((r) => r.id));
  await expectLedgerConsistent(h);
});
