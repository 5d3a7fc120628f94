// Issue 49, "PostgreSQL at speed": through a backlog, PostgreSQL's lease of new deliveries is ONE statement
// (takeQueuedPostgres), committed on its own, where the full lease is a transaction of five statements in two
// round trips. What it leaves to the full lease — retries due, cancelled webhooks, budgets near their end, expired
// leases — is still taken: when the one statement finds fewer than asked, and at least once a second.
import { afterEach, expect, test } from "bun:test";
import { DeliveryLeases } from "../../src/webhooks/leases";
import { countStatements, type StatementCounter } from "../messenger/round-trip-counter";
import { openTestApp, type TestApp } from "../support/app";
import { createKey, type TestKey } from "../support/partner";
import { acmeWebhook, queueEvents } from "./queued";
import { describeOn } from "../support/skipped";

const FILE = "test/webhooks/lease-backlog.test.ts";

let h: TestApp;
let counter: StatementCounter | undefined;
afterEach(async () => {
  counter?.restore();
  counter = undefined;
  await h?.close();
});

const webhook = (key: TestKey, path: string) => acmeWebhook(h, key, `http://127.0.0.1:9/${path}`);
const queue = (webhookId: number, n: number) => queueEvents(h, webhookId, n);

const until = () => new Date(h.ctx.clock.now().getTime() + 60_000);
const statusOf = async (id: number) => (await h.ctx.store.get<{ status: string }>("SELECT status FROM webhook_deliveries WHERE id = ?", [id]))!.status;

describeOn("postgres", FILE)("the lease through a backlog on PostgreSQL", () => {
  test("after a lease that found all it asked for, new deliveries are taken in one statement outside a transaction, counted, with their attempt rows", async () => {
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", JOBS_ENABLED: "0", WEBHOOK_MAX_ATTEMPTS: "4" } });
    const key = await createKey(h);
    const ids = await queue(await webhook(key, "a"), 6);
    const leases = new DeliveryLeases(h.ctx);
    counter = countStatements(h.ctx.store);
    const first = await leases.take(2, until()); // the full lease: nothing says there is a backlog yet
    expect(counter.transactions.map((t) => t.statements)).toEqual([5]);
    expect(first.leased.map((d) => d.id)).toEqual(ids.slice(0, 2));
    counter.reset();
    const second = await leases.take(2, until());
    expect(counter.transactions).toEqual([]);
    expect(counter.outside).toBe(1);
    expect(second.leased.map((d) => [d.id, d.attempts, d.final_attempt])).toEqual([
      [ids[2]!, 1, false],
      [ids[3]!, 1, false],
    ]);
    const rows = await h.ctx.store.all<{ id: number; delivery_id: number; attempt_no: number }>(
      "SELECT id, delivery_id, attempt_no FROM webhook_attempts WHERE delivery_id IN (?, ?) ORDER BY delivery_id",
      [ids[2]!, ids[3]!],
    );
    expect(rows.map((r) => [r.id, r.delivery_id, r.attempt_no])).toEqual(second.leased.map((d) => [d.attempt_id, d.id, 1]));
    const leased = await h.ctx.store.get<{ status: string; lease_token: string; attempts: number }>(
      "SELECT status, lease_token, attempts FROM webhook_deliveries WHERE id = ?",
      [ids[2]!],
    );
    expect(leased).toEqual({ status: "processing", lease_token: second.leased[0]!.lease_token, attempts: 1 });
    expect(second.leased[0]!.event_public_id).toMatch(/^evt_/);
    expect(second.leased[0]!.target_url).toBe("http://127.0.0.1:9/a");
  });

  test("the one statement is planned once per connection: PostgreSQL keeps its generic plan after five runs, for each lease size", async () => {
    // One connection, so that pg_prepared_statements (per session) sees every lease.
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", JOBS_ENABLED: "0", DATABASE_POOL_MAX: "1" } });
    const key = await createKey(h);
    await queue(await webhook(key, "a"), 80);
    const leases = new DeliveryLeases(h.ctx);
    await leases.take(2, until()); // the full lease
    // 3 asks for 2 (the largest power of two not above it) from the one statement, and the third from the full lease.
    for (let i = 0; i < 12; i++) expect((await leases.take(i % 2 ? 3 : 2, until())).leased).toHaveLength(i % 2 ? 3 : 2);
    const plans = await h.ctx.store.all<{ statement: string; generic_plans: number; custom_plans: number }>(
      "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE 'WITH due AS%'",
    );
    expect(plans.map((p) => /LIMIT (\S+) FOR UPDATE/.exec(p.statement)?.[1])).toEqual(["2"]);
    expect(plans[0]!.custom_plans).toBeLessThanOrEqual(5);
    expect(plans[0]!.generic_plans).toBeGreaterThanOrEqual(7);
  });

  test("what the one statement leaves is taken by the full lease: a cancelled webhook's delivery, a retry due, a budget near its end", async () => {
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", JOBS_ENABLED: "0", WEBHOOK_MAX_ATTEMPTS: "3" } });
    const key = await createKey(h);
    const live = await webhook(key, "a");
    const gone = await webhook(key, "b");
    const backlog = await queue(live, 4);
    const [cancelled] = await queue(gone, 1);
    const [retry, nearEnd] = await queue(live, 2);
    await h.ctx.store.run("UPDATE webhooks SET is_active = 0 WHERE id = ?", [gone]);
    // A failed delivery due now, and a queued one whose next attempt is its budget's last (attempts 2 of 3).
    await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'failed', attempts = 1 WHERE id = ?", [retry!]);
    await h.ctx.store.run("UPDATE webhook_deliveries SET attempts = 2 WHERE id = ?", [nearEnd!]);
    const leases = new DeliveryLeases(h.ctx);
    expect((await leases.take(2, until())).leased.map((d) => d.id)).toEqual(backlog.slice(0, 2)); // full
    counter = countStatements(h.ctx.store);
    // One statement takes the two new ones it may; it asked for 5, so the full lease takes the rest.
    const next = await leases.take(5, until());
    expect(counter.outside).toBe(1);
    expect(counter.transactions).toHaveLength(1);
    expect(next.leased.map((d) => d.id).sort((a, b) => a - b)).toEqual([backlog[2]!, backlog[3]!, retry!, nearEnd!].sort((a, b) => a - b));
    expect(next.leased.find((d) => d.id === nearEnd)!.final_attempt).toBe(true);
    expect(next.settled).toBe(1);
    expect(await statusOf(cancelled!)).toBe("cancelled");
  });

  test("the full lease runs at least once a second through a backlog, so a retry due waits no longer behind new deliveries", async () => {
    h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", JOBS_ENABLED: "0" } });
    const key = await createKey(h);
    const live = await webhook(key, "a");
    const [retry] = await queue(live, 1);
    // Out for now (a lease far off); it fails and is due again, the oldest due, once the backlog is under way.
    await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'processing', lease_until = '2999-01-01T00:00:00.000Z' WHERE id = ?", [retry!]);
    const backlog = await queue(live, 8);
    const leases = new DeliveryLeases(h.ctx);
    expect((await leases.take(2, until())).leased.map((d) => d.id)).toEqual(backlog.slice(0, 2));
    await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'failed', attempts = 1, lease_until = NULL WHERE id = ?", [retry!]);
    h.clock.advance(10);
    // Within the second: new deliveries only, in one statement, though the retry is due.
    expect((await leases.take(2, until())).leased.map((d) => d.id)).toEqual(backlog.slice(2, 4));
    h.clock.advance(1_000);
    // A second on: the full lease, oldest due first.
    expect((await leases.take(2, until())).leased.map((d) => d.id)).toEqual([retry!, backlog[4]!]);
  });
});
