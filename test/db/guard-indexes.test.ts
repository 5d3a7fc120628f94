import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { linkCounts } from "../../src/audio-share/store/links";
import { hostLatest } from "../../src/chain/store/rpc-calls";
import { failuresSince } from "../../src/jobs/store";
import { recentErrors } from "../../src/messenger/store/bot";
import { campaignHasSpins } from "../../src/messenger/store/fair";
import { idBounds } from "../../src/messenger/store/id-search";
import { countPlayers, type ProfileSort, playersAhead, playersPage } from "../../src/messenger/store/players";
import { countClaimsOf } from "../../src/messenger/store/promos";
import { auditTargetsWithRequestId } from "../../src/messenger/store/read-models";
import { pendingRuns } from "../../src/ops/alerts/store";
import { markSolanaWalletProven } from "../../src/partner/store/wallets";
import { idempotentMutationCount } from "../../src/sandbox/store";
import { checksInForce } from "../../src/status/store/snapshots";
import { runCounts } from "../../src/transparency/store/runs";
import { openTestApp, type TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";
import { GROWING } from "../support/growing-tables";
import { type IndexInfo, indexesOf, wholeReads } from "../support/plan-guard";
import { planOf } from "../support/query-plans";

// The statements the query-plan guard found reading a whole growing table (drizzle/0036_guard_indexes.sql), each
// called through the store function Herald calls, planned on both engines (HERALD_TEST_ENGINE=postgres) as the guard
// plans them (.ci/query-plans.ts): no whole read of a growing table, and the index each was given or rewritten for.
// A count bounded by a LIMIT may walk an index until it stops (the guard's warning, not a failure).

const AT = "2026-01-01T00:00:00.000Z";
const growing = new Set(Object.keys(GROWING));
let h: TestApp;
let indexes: Map<string, IndexInfo>;

beforeAll(async () => {
  h = await openTestApp();
  indexes = await indexesOf(h.ctx.store);
});
afterAll(() => h.close());

/** Calls `call` through a CountingStore; each distinct statement it sent reads no whole growing table and one uses `index`. */
async function expectServed(call: (store: CountingStore) => Promise<unknown>, index: string | RegExp): Promise<void> {
  const store = new CountingStore(h.ctx.store);
  await call(store);
  const distinct = [...new Map(store.sent.map((s) => [s.sql, s])).values()];
  expect(distinct.length).toBeGreaterThan(0);
  const plans = await Promise.all(distinct.map(async (s) => ({ sql: s.sql, plan: await planOf(h, s.sql, s.params) })));
  for (const { sql, plan } of plans) {
    const reads = wholeReads(h.ctx.store.dialect, sql, plan, growing, indexes).filter((r) => !(r.indexWalk && /\bLIMIT\b/i.test(sql)));
    expect({ sql, reads, plan }).toEqual({ sql, reads: [], plan });
  }
  const uses = plans.some(({ plan }) => plan.some((line) => (typeof index === "string" ? line.includes(index) : index.test(line))));
  expect({ index: String(index), uses, plans }).toEqual({ index: String(index), uses: true, plans });
}

describe("lookups given an index", () => {
  test("a host's latest RPC calls: chain_rpc_calls_host_idx", () => expectServed((s) => hostLatest(s, "rpc.example"), "chain_rpc_calls_host_idx"));
  test("a player's promo claims: messenger_promo_claims_player_idx", () => expectServed((s) => countClaimsOf(s, 42), "messenger_promo_claims_player_idx"));
  test("a campaign's spins: messenger_spins_campaign_idx", () => expectServed((s) => campaignHasSpins(s, "spring"), "messenger_spins_campaign_idx"));
  test("a proven wallet's links across partners: wallet_links_address_idx", () =>
    expectServed((s) => markSolanaWalletProven(s, "So1anaAddress", AT), "wallet_links_address_idx"));
  test("an admin action's audit rows: admin_audit_action_idx", () =>
    expectServed((s) => auditTargetsWithRequestId(s, "messenger.manual_grant", "req-1", "42"), "admin_audit_action_idx"));
});

describe("partial indexes named by their statements' conditions", () => {
  test("the check set in force: status_snapshots_checks_idx", async () => {
    await expectServed((s) => checksInForce(s, null), "status_snapshots_checks_idx");
    await expectServed((s) => checksInForce(s, 10), "status_snapshots_checks_idx");
  });
  test("the bot's unsent messages with an error: messenger_bot_outbox_errors_idx", () =>
    expectServed((s) => recentErrors(s, 20), "messenger_bot_outbox_errors_idx"));
});

describe("statements rewritten to follow an index", () => {
  test("a sandbox's idempotent ledger entries: through the owner's users, then each user's entries", () =>
    expectServed((s) => idempotentMutationCount(s, "Acme", ["key_1"]), /salutes_ledger_user\w*_idx/));
  test("failed job runs since a time: down job_runs_failed_idx", () => expectServed((s) => failuresSince(s, AT), "job_runs_failed_idx"));
  test("pending alert runs: down ops_alert_runs_at_idx from the sweep's start", () => expectServed((s) => pendingRuns(s, AT, 500), "ops_alert_runs_at_idx"));
  test("a player's rank: two ranges of messenger_players_points_idx", () => expectServed((s) => playersAhead(s, 10, 42), "messenger_players_points_idx"));
  test("the spins' and grids' id bounds: a step down each end of the primary key", async () => {
    const pkey = h.ctx.store.dialect === "postgres" ? /_pkey/ : /SEARCH messenger_(spins|grids)/;
    await expectServed((s) => idBounds(s, "messenger_spins"), pkey);
    await expectServed((s) => idBounds(s, "messenger_grids"), pkey);
  });
});

describe("totals kept or bounded", () => {
  test("audit runs: the kept total and the incomplete ones down audit_runs_complete_idx", async () => {
    await expectServed((s) => runCounts(s), "audit_runs_complete_idx");
    expect(await runCounts(h.ctx.store)).toEqual({ total: 0, incomplete: 0 });
  });
  test("short links: the active ones down audio_share_links_expires_idx, the total up to its cap", () =>
    expectServed((s) => linkCounts(s, AT, 10_000), "audio_share_links_expires_idx"));
  test("players: counted up to the cap", () => expectServed((s) => countPlayers(s, null, 10_000), "messenger_players"));
  test("linked players: counted up to the cap down messenger_players_linked_idx", async () => {
    // PostgreSQL may count the linked players down any index that holds only them.
    await expectServed(
      (s) => countPlayers(s, true, 10_000),
      h.ctx.store.dialect === "postgres" ? /messenger_players_linked\w*_idx/ : "messenger_players_linked_idx",
    );
    await expectServed((s) => countPlayers(s, false, 10_000), "messenger_players_linked_idx");
  });
  test("the operators' player list by last seen: down messenger_players_seen_idx", () =>
    expectServed((s) => playersPage(s, { sort: "last_seen", linked: null, limit: 50, offset: 100 }), "messenger_players_seen_idx"));
  test("the operators' linked players in each order: down a partial index of the linked players, not a walk of all", async () => {
    const page = (sort: ProfileSort) => (s: CountingStore) => playersPage(s, { sort, linked: true, limit: 50, offset: 100 });
    // PostgreSQL, without statistics (an empty table), may read the linked players down another of their indexes and sort them.
    const linked = (index: string) => (h.ctx.store.dialect === "postgres" ? /messenger_players_linked_\w+_idx/ : index);
    await expectServed(page("points_earned"), linked("messenger_players_linked_points_idx"));
    await expectServed(page("last_seen"), linked("messenger_players_linked_seen_idx"));
    await expectServed(page("telegram_user_id"), linked("messenger_players_linked_id_idx"));
  });
});
