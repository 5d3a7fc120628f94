// Growth audit (2026-11-30): request-path reads with a filter that were checked and found bounded, where no other test
// pins the index that bounds them. Each case calls the store function the route calls, through a CountingStore,
// and reads the plan of what it sent: no full read of a table, no sort of every row found (SQLite), and on SQLite
// the index that holds the filter, so a rare value is found at once instead of walking every row (the shape of
// test/spec/walks-failing.test.ts). PostgreSQL chooses by statistics (none here): there, only no full read and no sort.
//
// - The jobs' latest successful run (src/jobs/store.ts latestRuns, "successful": /admin/jobs, the status page's
//   jobs check): ok = 1 is held by job_runs_name_ok_started_idx (name, ok, started_at, id), so a job failing for
//   months finds its last success without walking its failures.
// - A player's revealed seeds (src/messenger/store/fair.ts revealedSeedRows, the provably-fair player route):
//   status is held by messenger_seeds_player_idx (telegram_user_id, status), whose entries end in the rowid.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { latestRuns } from "../../src/jobs/store";
import { revealedSeedRows } from "../../src/messenger/store/fair";
import { openTestApp, type TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";
import { testEngine } from "../support/engine";
import { fullReads, planOf, sortsAll } from "../support/query-plans";

let h = undefined as unknown as TestApp;
beforeAll(async () => {
  h = await openTestApp();
});
afterAll(() => h?.close());

/** The plan of each statement `call` sent. */
async function plansOf(call: (store: CountingStore) => Promise<unknown>): Promise<Array<{ sql: string; plan: string[] }>> {
  const store = new CountingStore(h.ctx.store);
  await call(store);
  expect(store.sent.length).toBeGreaterThan(0);
  return Promise.all(store.sent.map(async (s) => ({ sql: s.sql, plan: await planOf(h, s.sql, s.params) })));
}

/** A SCAN of a subquery's own rows (latestRuns' `AS r0`, one row each) reads no table. */
const tableReads = (plan: readonly string[]) => fullReads(plan).filter((line) => !/^SCAN r\d+$/.test(line));

function expectBounded(plans: Array<{ sql: string; plan: string[] }>, index: string): void {
  for (const { sql, plan } of plans) {
    const uses = testEngine() === "sqlite" ? plan.some((line) => line.includes(index)) : true;
    expect({ sql, fullReads: tableReads(plan), sorts: sortsAll(plan), uses }).toEqual({ sql, fullReads: [], sorts: [], uses: true });
  }
}

describe("filtered reads that an index bounds", () => {
  test("a job's latest successful run: down job_runs_name_ok_started_idx", async () => {
    expectBounded(await plansOf((s) => latestRuns(s, ["webhook-dispatch", "status-snapshot"], "successful")), "job_runs_name_ok_started_idx");
  });

  test("a player's revealed seeds, newest first: down messenger_seeds_player_idx with the status", async () => {
    const plans = await plansOf((s) => revealedSeedRows(s, 42, 10));
    expectBounded(plans, "messenger_seeds_player_idx");
    if (testEngine() === "sqlite") expect(plans[0]!.plan.join(" ")).toContain("telegram_user_id=? AND status=?");
  });
});
