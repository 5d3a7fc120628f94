import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Owner } from "../../src/auth/actors";
import { listUserRows, type UserListFilter } from "../../src/partner/store/users";
import { ledgerPage } from "../../src/salutes/store/ledger";
import { deadLetterRows, stateCounts } from "../../src/webhooks/deliveries-store";
import { openTestApp, type TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";
import { fullReads, planOf, sortsAll } from "../support/query-plans";

// The filters the routes offer find their rows down an index, on both engines (HERALD_TEST_ENGINE=postgres): the
// salutes ledger by reason and by source, the partner's dead-letter summary, and the users list and lookup. Each case
// calls the store function the route calls, through a CountingStore, and reads the plan of every statement it sent:
// no full read of a table (SQLite SCAN; PostgreSQL Seq Scan with seq scans priced out), no sort of every row found
// where an index gives the order (SQLite), and the index the filter was made for (drizzle/0031_filter_indexes.sql).
// Before those indexes the ledger's reason filter walked all of the user's entries (1.3 s at 10M rows on SQLite).
//
// The data has the shapes that make the choice matter (a heavy user with rare reasons, few dead letters among many
// deliveries, many users of one owner). SQLite plans without statistics, as Herald's file has none (nothing runs
// ANALYZE); PostgreSQL plans from statistics, which autovacuum keeps, so the test ANALYZEs its tables first: without
// them PostgreSQL takes every table for a handful of rows, and any index for as good as another.

const ACME: Owner = { partner: "Acme", mode: "live" };
const AT = "2026-01-01T00:00:00.000Z";
const RECENT = "2026-01-20T00:00:00.000Z";
const SINCE = "2026-01-10T00:00:00.000Z";
const USERS = 2_000;
/** User 1's entries; ten other users have 100 each after them. */
const ENTRIES = 2_000;
const DELIVERIES = 3_000;

let h: TestApp;
beforeAll(async () => {
  h = await openTestApp();
  await seed();
});
afterAll(() => h?.close());

/** `INSERT … SELECT` over the integers 1 … n (a recursive CTE: the one row generator both engines have). */
const overIntegers = (n: number, insert: string) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n}) ${insert} FROM n`;

async function seed(): Promise<void> {
  await h.ctx.store.tx(async (t) => {
    // Every tenth user is Beta's, every seventh one of Acme's sandbox; one in fifty is suspended.
    await t.run(
      overIntegers(
        USERS,
        `INSERT INTO partner_users (id, partner, mode, external_id, username, email, status, is_verified, created_at, updated_at)
         SELECT i, CASE WHEN i % 10 = 0 THEN 'Beta' ELSE 'Acme' END, CASE WHEN i % 10 <> 0 AND i % 7 = 0 THEN 'sandbox' ELSE 'live' END,
           'ext-' || i, 'user_' || i, 'user' || i || '@example.com', CASE WHEN i % 50 = 3 THEN 'suspended' ELSE 'active' END, 0, '${AT}', '${AT}'`,
      ),
    );
    await t.run(
      overIntegers(
        USERS,
        `INSERT INTO wallet_links (user_id, partner, mode, blockchain, wallet_address, is_primary, created_at, updated_at)
         SELECT i, CASE WHEN i % 10 = 0 THEN 'Beta' ELSE 'Acme' END, CASE WHEN i % 10 <> 0 AND i % 7 = 0 THEN 'sandbox' ELSE 'live' END,
           CASE WHEN i % 2 = 0 THEN 'ethereum' ELSE 'solana' END, 'Wallet' || i, 1, '${AT}', '${AT}'`,
      ),
    );
    // User 1 (Acme, live): quest rewards from the arena, a rare reason every 500th entry, a rare source every 400th.
    await t.run(
      overIntegers(
        ENTRIES,
        `INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, created_at)
         SELECT 1, 'Acme', 'live', 100, i * 100, CASE WHEN i % 500 = 0 THEN 'manual_adjustment' ELSE 'quest_reward' END,
           CASE WHEN i % 400 = 0 THEN 'support.desk' ELSE 'game.arena' END, '${AT}'`,
      ),
    );
    await t.run(
      overIntegers(
        1_000,
        `INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, created_at)
         SELECT 2 + i % 10, 'Acme', 'live', 100, 100, 'quest_reward', 'game.arena', '${AT}'`,
      ),
    );
    await t.run(
      "INSERT INTO webhooks (id, partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at) VALUES (1, 'Acme', 'live', '*', 'https://hooks.example.com/h', 'c', ?, ?)",
      [AT, AT],
    );
    await t.run(
      overIntegers(
        DELIVERIES,
        `INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at)
         SELECT i, 'evt_' || i, 'Acme', 'live', CASE WHEN i % 2 = 0 THEN 'users.updated' ELSE 'salutes.credit' END, '{}', '${AT}'`,
      ),
    );
    // One delivery in a hundred is a dead letter; one dead letter in five was last changed before the summary's window.
    await t.run(
      overIntegers(
        DELIVERIES,
        `INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, reason_tag, created_at, updated_at)
         SELECT i, 1, 'Acme', 'live', CASE WHEN i % 100 = 3 THEN 'dead_letter' WHEN i % 100 = 4 THEN 'failed' ELSE 'succeeded' END,
           CASE WHEN i % 3 = 0 THEN NULL ELSE 'http_5xx' END, '${AT}', CASE WHEN i % 500 = 3 THEN '${AT}' ELSE '${RECENT}' END`,
      ),
    );
  });
  if (h.ctx.store.dialect === "postgres") {
    for (const table of ["partner_users", "wallet_links", "salutes_ledger", "events", "webhook_deliveries"]) await h.ctx.store.run(`ANALYZE ${table}`);
  }
}

/** Runs `call` through a CountingStore and answers its result with the plan of each distinct statement it sent. */
async function plansOf<T>(call: (store: CountingStore) => Promise<T>): Promise<{ result: T; plans: Array<{ sql: string; plan: string[] }> }> {
  const store = new CountingStore(h.ctx.store);
  const result = await call(store);
  const distinct = [...new Map(store.sent.map((s) => [s.sql, s])).values()];
  return { result, plans: await Promise.all(distinct.map(async (s) => ({ sql: s.sql, plan: await planOf(h, s.sql, s.params) }))) };
}

/** Each statement reads no whole table, sorts nothing it could read in order (unless `sorts`), and uses `index`. */
function expectIndexed(plans: Array<{ sql: string; plan: string[] }>, index: string | RegExp, opts: { sorts?: boolean } = {}): void {
  expect(plans.length).toBeGreaterThan(0);
  for (const { sql, plan } of plans) {
    const uses = plan.some((line) => (typeof index === "string" ? line.includes(index) : index.test(line)));
    expect({ sql, fullReads: fullReads(plan), sorts: opts.sorts ? [] : sortsAll(plan), uses, plan }).toEqual({
      sql,
      fullReads: [],
      sorts: [],
      uses: true,
      plan,
    });
  }
}

/**
 * A walk newest first that stops at the page's end: down `index`, or on PostgreSQL down the primary key backward when
 * its statistics say the user or owner holds most of the table's rows (as here), the cheaper walk to the same rows.
 * SQLite names no `_pkey` index: a walk of its rowid is a SCAN, which fullReads refuses.
 */
const WALK = (index: string, pkey: string) => new RegExp(`\\b(${index}|${pkey})\\b`);

const ledger = (f: Partial<Parameters<typeof ledgerPage>[2]>) => (store: CountingStore) =>
  ledgerPage(store, ACME, { userId: 1, order: "desc", reason: null, source: null, afterId: null, limit: 51, offset: 0, ...f });

describe("the salutes ledger's filters", () => {
  test("by reason: down salutes_ledger_user_reason_idx, newest first, on every page", async () => {
    const first = await plansOf(ledger({ reason: "manual_adjustment", limit: 3 }));
    expect(first.result.map((r) => r.id)).toEqual([2000, 1500, 1000]);
    expectIndexed(first.plans, "salutes_ledger_user_reason_idx");
    const next = await plansOf(ledger({ reason: "manual_adjustment", afterId: 1000, limit: 3 }));
    expect(next.result.map((r) => r.id)).toEqual([500]);
    expectIndexed(next.plans, "salutes_ledger_user_reason_idx");
  });

  test("by source: down salutes_ledger_user_source_idx, in either order", async () => {
    const desc = await plansOf(ledger({ source: "support.desk" }));
    expect(desc.result.map((r) => r.id)).toEqual([2000, 1600, 1200, 800, 400]);
    expectIndexed(desc.plans, "salutes_ledger_user_source_idx");
    const asc = await plansOf(ledger({ source: "support.desk", order: "asc", afterId: 400 }));
    expect(asc.result.map((r) => r.id)).toEqual([800, 1200, 1600, 2000]);
    expectIndexed(asc.plans, "salutes_ledger_user_source_idx");
  });

  test("by reason and source: down one of the two, the other tested on its entries", async () => {
    const both = await plansOf(ledger({ reason: "quest_reward", source: "support.desk" }));
    expect(both.result.map((r) => r.id)).toEqual([1600, 1200, 800, 400]);
    expectIndexed(both.plans, /salutes_ledger_user_(reason|source)_idx/);
  });

  test("without a filter: salutes_ledger_user_idx, as before", async () => {
    const all = await plansOf(ledger({ limit: 3 }));
    expect(all.result.map((r) => r.id)).toEqual([2000, 1999, 1998]);
    expectIndexed(all.plans, WALK("salutes_ledger_user_idx", "salutes_ledger_pkey"));
  });
});

describe("the partner's dead-letter summary (GET /api/partner/webhooks/dlq)", () => {
  test("every statement reads the window's dead letters down deliveries_dead_letter_idx", async () => {
    const { result, plans } = await plansOf((store) => deadLetterRows(store, ACME, SINCE));
    const inWindow = Array.from({ length: DELIVERIES }, (_, k) => k + 1).filter((i) => i % 100 === 3 && i % 500 !== 3);
    expect(result.n).toBe(inWindow.length);
    expect(result.rows.map((r) => r.id).sort((a, b) => a - b)).toEqual(inWindow);
    expect(plans).toHaveLength(4);
    // The newest 200 and the counts by type and reason sort the window's dead letters, which is what they ask for.
    expectIndexed(plans, "deliveries_dead_letter_idx", { sorts: true });
  });
});

const users = (f: Partial<UserListFilter>) => (store: CountingStore) =>
  listUserRows(store, ACME, { status: null, q: null, email: null, username: null, wallet: null, afterId: null, limit: 51, offset: 0, ...f });

describe("the users list and lookup (GET /api/partner/users, /api/partner/user-lookup)", () => {
  test.each([
    ["email", { email: "user3@example.com" }, [3], "partner_users_email_idx"],
    ["username", { username: "user_4" }, [4], "partner_users_username_idx"],
    ["wallet, on any chain", { wallet: "Wallet6" }, [6], /wallet_links_(owner_wallet|address)_idx/],
    ["nothing: newest first", { limit: 3 }, [1999, 1998, 1997], WALK("partner_users_owner_idx", "partner_users_pkey")],
    ["status, from a cursor", { status: "suspended", afterId: 200, limit: 3 }, [153, 103, 53], "partner_users_status_idx"],
    // A substring has no index: a window of the owner's users newest first (at most SCAN_WINDOW), each tested.
    ["q, a substring", { q: "USER_19", limit: 3 }, [1999, 1998, 1997], WALK("partner_users_owner_idx", "partner_users_pkey")],
    ["q and status", { q: "USER_1", status: "suspended", limit: 3 }, [1903, 1853, 1803], "partner_users_status_idx"],
  ] as const)("by %s: only the filters given, down their index", async (_, filter, ids, index) => {
    const { result, plans } = await plansOf(users(filter));
    expect(result.rows.map((u) => u.id)).toEqual([...ids]);
    expect(result.resumeAt).toBeNull();
    for (const { sql } of plans) expect(sql).not.toContain("IS NULL");
    expectIndexed(plans, index);
  });

  test("a filter of another owner's value finds nothing (the owner is in every statement)", async () => {
    const { result } = await plansOf(users({ email: "user10@example.com" }));
    expect(result.rows).toEqual([]);
  });
});

describe("delivery health (GET /api/partner/status, the status page's webhooks check, /metrics)", () => {
  // 3,000 deliveries: 30 dead letters, 30 failed, the rest succeeded — 2,940, of which 2,934 last changed at RECENT.
  test("a partner's counts: the open states now and the window's deliveries, webhook by webhook down deliveries_webhook_idx", async () => {
    const { result, plans } = await plansOf((store) => stateCounts(store, { owner: ACME, settledSinceIso: SINCE }));
    const counts = Object.fromEntries(result.map((r) => [r.status, r.n]));
    const n = (f: (i: number) => boolean) => Array.from({ length: DELIVERIES }, (_, k) => k + 1).filter(f).length;
    expect(counts).toEqual({
      dead_letter: n((i) => i % 100 === 3),
      failed: n((i) => i % 100 === 4),
      succeeded: n((i) => i % 100 !== 3 && i % 100 !== 4 && i % 500 !== 3),
    });
    // PostgreSQL, from statistics that put every delivery under the one webhook, may walk the open states instead.
    expect(plans).toHaveLength(3);
    expectIndexed(plans.slice(0, 2), h.ctx.store.dialect === "sqlite" ? "deliveries_webhook_idx" : /deliveries_(webhook|due)_idx/);
    // The dead letters: the owner's one row of the counts the triggers keep (migration 0037), never counted.
    expectIndexed([plans[2]!], h.ctx.store.dialect === "sqlite" ? "sqlite_autoindex_webhook_dead_letter_counts_1" : /webhook_dead_letter_counts/);
  });

  test("every partner's counts: the open states down deliveries_due_idx, the window's deliveries down deliveries_settled_idx", async () => {
    const { result, plans } = await plansOf((store) => stateCounts(store, { owner: null, settledSinceIso: SINCE }));
    expect(Object.fromEntries(result.map((r) => [r.status, r.n]))).toMatchObject({ dead_letter: 30, failed: 30 });
    expect(plans).toHaveLength(3);
    expectIndexed([plans[0]!], "deliveries_due_idx");
    expectIndexed([plans[1]!], h.ctx.store.dialect === "sqlite" ? "deliveries_settled_idx" : /deliveries_(settled|due)_idx/);
    // The dead letters: the sum of the owners' counts (a row per partner and mode), never a count of the deliveries.
    expect(plans[2]!.plan.join(" ")).toMatch(/webhook_dead_letter_counts/);
  });
});
