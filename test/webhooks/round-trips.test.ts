// Issue 49, "PostgreSQL at speed": what one webhook delivery costs the database — the statements of the dispatcher's
// transactions (both engines), and the round trips they take on PostgreSQL, where statements issued together in a
// transaction share one: counted at the transactions' handles (test/messenger/round-trip-counter.ts) and by the
// engine itself (store.health.counts). A pass that delivers one event runs three transactions: the lease that takes
// it, the outcome's record, and the lease that finds nothing more due. Each is issued in dependent steps:
//   lease:   the due rows of each state (PostgreSQL: three SELECT … FOR UPDATE SKIP LOCKED; SQLite: one UNION ALL)
//            → the lease and attempt count | the attempt's row
//   outcome: the delivery's record | the attempt's outcome (→ the webhook's health, when it changes)
// Before, each statement waited for the one before it: on PostgreSQL 5 + 2 + 3 = 10 statements in as many round
// trips, plus each transaction's BEGIN and COMMIT.
import { afterEach, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey } from "../support/partner";
import { acmeWebhook, queueEvents } from "./queued";
import { startReceiver, type Receiver } from "../support/receiver";
import { countStatements, type StatementCounter } from "../messenger/round-trip-counter";
import { describeOn } from "../support/skipped";

const FILE = "test/webhooks/round-trips.test.ts";

let h: TestApp;
let rx: Receiver;
let counter: StatementCounter | undefined;
afterEach(async () => {
  counter?.restore();
  counter = undefined;
  rx?.stop();
  await h?.close();
});

const ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
  WEBHOOK_TIMEOUT_SECONDS: "1",
  WEBHOOK_MAX_ATTEMPTS: "4",
  WEBHOOK_RETRY_BASE_SECONDS: "60",
  WEBHOOK_RETRY_JITTER_PCT: "0",
};

/** A webhook of Acme's (live) at the receiver, and one event for it, queued and not yet dispatched. */
async function queued(): Promise<number> {
  h = await openTestApp({ env: ENV });
  rx = startReceiver();
  // Emitted here rather than through the test route, which nudges the dispatcher before the counting starts.
  const [id] = await queueEvents(h, await acmeWebhook(h, await createKey(h), rx.url()), 1);
  return id!;
}

const statusOf = async (id: number) => (await h.ctx.store.get<{ status: string }>("SELECT status FROM webhook_deliveries WHERE id = ?", [id]))!.status;

const engineCounts = () => ({ statements: h.ctx.store.health.counts.statements, roundTrips: h.ctx.store.health.counts.roundTrips });

/** One dispatcher pass over one queued delivery that the receiver answers `status`, counted. */
async function deliveredOnce(status: number, expected: string) {
  const id = await queued();
  rx.then({ status });
  counter = countStatements(h.ctx.store);
  const before = engineCounts();
  await h.ctx.dispatcher.runOnce();
  const after = engineCounts();
  const c = counter;
  counter.restore();
  counter = undefined;
  expect(rx.received).toHaveLength(1);
  expect(await statusOf(id)).toBe(expected);
  return {
    transactions: c.transactions,
    outside: c.outside,
    engine: { statements: after.statements - before.statements, roundTrips: after.roundTrips - before.roundTrips },
  };
}

const pg = () => h.ctx.store.dialect === "postgres";

describe("statements of a webhook delivery", () => {
  test("answered 2xx: the lease, the outcome, the empty lease after it", async () => {
    const c = await deliveredOnce(204, "succeeded");
    // On PostgreSQL a success's two records are one statement (src/webhooks/lease-store.ts, SUCCESS_POSTGRES).
    expect(c.transactions.map((t) => t.statements)).toEqual([pg() ? 5 : 3, pg() ? 1 : 2, pg() ? 3 : 1]);
    expect(c.outside).toBe(0);
  });

  test("answered 500: the outcome also marks the webhook failing", async () => {
    const c = await deliveredOnce(500, "failed");
    expect(c.transactions.map((t) => t.statements)).toEqual([pg() ? 5 : 3, 3, pg() ? 3 : 1]);
    expect(c.outside).toBe(0);
  });
});

describeOn("postgres", FILE)("round trips of a webhook delivery on PostgreSQL", () => {
  test("answered 2xx: lease 2 round trips (5 before issue 49), outcome 1 (2), empty lease 1 (3); 7 in all by the engine's count", async () => {
    const c = await deliveredOnce(204, "succeeded");
    expect(c.transactions.map((t) => t.roundTrips)).toEqual([2, 1, 1]);
    // Each transaction's statements, BEGIN riding with the first; its COMMIT.
    expect(c.engine).toEqual({ statements: 3 * 2 + 5 + 1 + 3, roundTrips: 2 + 1 + 1 + 3 });
  });

  test("answered 500: the outcome takes 2 round trips (3 before): its record, then the webhook's health", async () => {
    const c = await deliveredOnce(500, "failed");
    expect(c.transactions.map((t) => t.roundTrips)).toEqual([2, 2, 1]);
    expect(c.engine).toEqual({ statements: 3 * 2 + 5 + 3 + 3, roundTrips: 2 + 2 + 1 + 3 });
  });
});
