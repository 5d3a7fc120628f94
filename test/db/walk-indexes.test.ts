// Request-path reads with a filter that an index bounds, where no other test pins that index. Each case calls the
// store function the route calls, through a CountingStore, and reads the plan of what it sent: no full read of a
// table, no sort of every row found (SQLite), and on SQLite the index that holds the filter, so a rare value is found
// at once instead of walking every row newest first and testing each (a growth audit found six reads of that shape;
// the times before and after are in bench/README.md, "Filtered walks"). PostgreSQL chooses by statistics (none here):
// there, only no full read and no sort.
//
// - The jobs' latest successful run (src/jobs/store.ts latestRuns, "successful": /admin/jobs, the status page's
//   jobs check): ok = 1 is held by job_runs_name_ok_started_idx (name, ok, started_at, id), so a job failing for
//   months finds its last success without walking its failures.
// - A player's revealed seeds (src/messenger/store/fair.ts revealedSeedRows, the provably-fair player route):
//   status is held by messenger_seeds_player_idx (telegram_user_id, status), whose entries end in the rowid.
// - An RPC host's latest success (src/chain/store/rpc-calls.ts hostLatest, on every public status read):
//   chain_rpc_calls_host_ok_idx (host, at) WHERE outcome = 'ok' (migration 0041).
// - A source's newest warn streak (src/ops/alerts/store.ts warnStreakOf, the link-inbox export's last_digest_warn):
//   ops_alert_runs_status_idx (source, status, at) and ops_alert_runs_name_idx (source, name, status, at).
// - Matches per declared movement (declarationMatches: the public declared-movements list): audit_rows_declaration_idx
//   (declaration_id, run_id) WHERE declaration_id IS NOT NULL (migration 0043).
// - Whether a complete run flagged a signature (src/transparency/store/rows.ts flaggedByCompleteRun, the triage PUT):
//   audit_rows_flagged_idx (signature) WHERE severity_rank > 0.
// - The window of a filtered list (src/db/port.ts scanWindow: the delivery records, the users' q): its edge and the
//   row beyond it, down the owner's index.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hostLatest } from "../../src/chain/store/rpc-calls";
import { scanWindow, Where } from "../../src/db/port";
import { latestRuns } from "../../src/jobs/store";
import { revealedSeedRows } from "../../src/messenger/store/fair";
import { warnStreakOf } from "../../src/ops/alerts/store";
import { declarationMatches, flaggedByCompleteRun } from "../../src/transparency/store/rows";
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

  test("an RPC host's latest attempt and latest success: down chain_rpc_calls_host_ok_idx for the success", async () => {
    const plans = await plansOf((s) => hostLatest(s, "rpc.example.com"));
    expectBounded(plans.slice(1), "chain_rpc_calls_host_ok_idx");
  });

  test("a source's newest warn streak: its latest warn down ops_alert_runs_status_idx, the streak's edges down ops_alert_runs_name_idx", async () => {
    await h.ctx.store.run(
      "INSERT INTO ops_alert_runs (run_id, at, source, name, status) VALUES ('r1', '2026-01-01T00:00:00.000Z', 'digest', '403-digest', 'ok'), ('r2', '2026-01-02T00:00:00.000Z', 'digest', '403-digest', 'warn'), ('r3', '2026-01-03T00:00:00.000Z', 'digest', '403-digest', 'ok')",
    );
    const store = new CountingStore(h.ctx.store);
    expect(await warnStreakOf(store, "digest")).toEqual({ name: "403-digest", start: "2026-01-02T00:00:00.000Z", end: "2026-01-03T00:00:00.000Z" });
    const plans = await Promise.all(store.sent.map(async (s) => ({ sql: s.sql, plan: await planOf(h, s.sql, s.params) })));
    expectBounded(plans.slice(0, 1), "ops_alert_runs_status_idx");
    expectBounded(plans.slice(1), "ops_alert_runs_name_idx");
  });

  test("matches per declared movement: down audit_rows_declaration_idx, the matched rows alone", async () => {
    expectBounded(await plansOf((s) => declarationMatches(s)), "audit_rows_declaration_idx");
  });

  test("whether a complete run flagged a signature: down audit_rows_flagged_idx", async () => {
    expectBounded(await plansOf((s) => flaggedByCompleteRun(s, "sigNeverFlagged")), "audit_rows_flagged_idx");
  });

  test("a filtered list's window: its edge and the row beyond it down the owner's index (deliveries, users)", async () => {
    const deliveries = new Where().add("partner = ? AND mode = ?", "Acme", "live").add("id < ?", 1_000_000);
    expectBounded(await plansOf(async (s) => (await scanWindow(s, "webhook_deliveries", deliveries)).resumeAt(true)), "deliveries_partner_idx");
    const users = new Where().add("partner = ? AND mode = ?", "Acme", "live").add("status = ?", "active");
    expectBounded(await plansOf(async (s) => (await scanWindow(s, "partner_users", users)).resumeAt(true)), "partner_users_status_idx");
  });
});
