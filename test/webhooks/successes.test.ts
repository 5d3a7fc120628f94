// Issue 49, "PostgreSQL at speed": on PostgreSQL the dispatcher writes successful outcomes together
// (src/webhooks/outcomes.ts, SuccessWriter): those that finish while a write is in flight share the next
// transaction, with no savepoints, every statement issued at once. Each is still guarded by its lease token, and
// an attempt's outcome is written even where the lease was lost. Run on both engines (the writer is engine-neutral;
// the dispatcher uses it on PostgreSQL only).
import { afterEach, describe, expect, test } from "bun:test";
import { DeliveryLeases } from "../../src/webhooks/leases";
import type { Success } from "../../src/webhooks/lease-store";
import { SuccessWriter } from "../../src/webhooks/outcomes";
import { countStatements, type StatementCounter } from "../messenger/round-trip-counter";
import { openTestApp, type TestApp } from "../support/app";
import { createKey } from "../support/partner";
import { acmeWebhook, queueEvents } from "./queued";
import { describeOn } from "../support/skipped";

const FILE = "test/webhooks/successes.test.ts";
import { PostgresStore } from "../../src/db/postgres-engine";
import { recordSuccesses } from "../../src/webhooks/lease-store";

let h: TestApp;
let counter: StatementCounter | undefined;
afterEach(async () => {
  counter?.restore();
  counter = undefined;
  await h?.close();
});

/** `n` deliveries of one webhook, leased (counted, with attempt rows) and not sent. */
async function leased(n: number) {
  h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", JOBS_ENABLED: "0" } });
  await queueEvents(h, await acmeWebhook(h, await createKey(h), "http://127.0.0.1:9/hook"), n);
  const batch = await new DeliveryLeases(h.ctx).take(n, new Date(h.ctx.clock.now().getTime() + 60_000));
  expect(batch.leased).toHaveLength(n);
  return batch.leased;
}

const success = (d: { id: number; lease_token: string; attempt_id: number }, code: number): Success => ({
  id: d.id,
  token: d.lease_token,
  attemptId: d.attempt_id,
  nowIso: "2026-01-01T00:00:05.000Z",
  attempt: { startedAtIso: "2026-01-01T00:00:04.000Z", durationMs: 12, statusCode: code, error: null, reasonTag: null, excerpt: "ok" },
});

describe("successful outcomes written together", () => {
  test("those that arrive during a write share the next transaction, one statement each on PostgreSQL (two on SQLite) and no savepoint; every delivery recorded once", async () => {
    const ds = await leased(5);
    const writer = new SuccessWriter(h.ctx.store);
    counter = countStatements(h.ctx.store);
    const before = { ...h.ctx.store.health.counts };
    // The first starts a write at once; the other four arrive while it is in flight and share the next.
    const held = await Promise.all(ds.map((d, i) => writer.write(success(d, 200 + i))));
    expect(held).toEqual([true, true, true, true, true]);
    const each = h.ctx.store.dialect === "postgres" ? 1 : 2;
    expect(counter.transactions.map((t) => t.statements)).toEqual([each, 4 * each]);
    if (h.ctx.store.dialect === "postgres") {
      // Every statement of a batch in one round trip (BEGIN rides with them), then its COMMIT.
      expect(counter.transactions.map((t) => t.roundTrips)).toEqual([1, 1]);
      const after = h.ctx.store.health.counts;
      expect({ statements: after.statements - before.statements, roundTrips: after.roundTrips - before.roundTrips }).toEqual({
        statements: 2 + 1 + 4 + 2,
        roundTrips: 2 + 2,
      });
    }
    const rows = await h.ctx.store.all<{ id: number; status: string; last_status_code: number; lease_token: string | null; delivered_at: string }>(
      "SELECT id, status, last_status_code, lease_token, delivered_at FROM webhook_deliveries ORDER BY id",
    );
    expect(rows.map((r) => [r.id, r.status, r.last_status_code, r.lease_token, r.delivered_at])).toEqual(
      ds.map((d, i) => [d.id, "succeeded", 200 + i, null, "2026-01-01T00:00:05.000Z"]),
    );
    const attempts = await h.ctx.store.all<{ delivery_id: number; status_code: number; duration_ms: number; response_excerpt: string }>(
      "SELECT delivery_id, status_code, duration_ms, response_excerpt FROM webhook_attempts ORDER BY delivery_id",
    );
    expect(attempts).toEqual(ds.map((d, i) => ({ delivery_id: d.id, status_code: 200 + i, duration_ms: 12, response_excerpt: "ok" })));
  });

  test("a delivery whose lease was lost is left to its holder; its attempt's outcome is written; the rest of the batch is recorded", async () => {
    const ds = await leased(3);
    // Another dispatcher took the middle one over (a new token).
    await h.ctx.store.run("UPDATE webhook_deliveries SET lease_token = 'theirs' WHERE id = ?", [ds[1]!.id]);
    const writer = new SuccessWriter(h.ctx.store);
    const held = await Promise.all(ds.map((d) => writer.write(success(d, 204))));
    expect(held).toEqual([true, false, true]);
    const lost = await h.ctx.store.get<{ status: string; lease_token: string }>("SELECT status, lease_token FROM webhook_deliveries WHERE id = ?", [ds[1]!.id]);
    expect(lost).toEqual({ status: "processing", lease_token: "theirs" });
    const attempt = await h.ctx.store.get<{ status_code: number }>("SELECT status_code FROM webhook_attempts WHERE id = ?", [ds[1]!.attempt_id]);
    expect(attempt?.status_code).toBe(204);
  });

  test("a batch that fails fails each of its writers, and the next batch is written", async () => {
    const ds = await leased(3);
    const writer = new SuccessWriter(h.ctx.store);
    // An attempt without a start time breaks webhook_attempts' NOT NULL: that batch fails whole.
    const ok = success(ds[1]!, 204);
    const bad = { ...ok, attempt: { ...ok.attempt, startedAtIso: null as unknown as string } };
    const first = writer.write(success(ds[0]!, 204));
    const second = [writer.write(bad), writer.write(success(ds[2]!, 204))];
    expect(await first).toBe(true);
    const settled = await Promise.allSettled(second);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    expect(await writer.write(success(ds[2]!, 204))).toBe(true);
    const statuses = await h.ctx.store.all<{ status: string }>("SELECT status FROM webhook_deliveries ORDER BY id");
    expect(statuses.map((s) => s.status)).toEqual(["succeeded", "processing", "succeeded"]);
  });
});

describeOn("postgres", FILE)("a success in one statement on PostgreSQL", () => {
  test("a success takes its delivery's row lock before it touches its attempt's, as the lease does", async () => {
    const [d] = await leased(1);
    const url = h.ctx.config.database.url!;
    const holder = new PostgresStore({ url, poolMax: 1 });
    const writer = new PostgresStore({ url, poolMax: 1 });
    const prober = new PostgresStore({ url, poolMax: 1 });
    try {
      // Another transaction holds the delivery's row (as a lease retaking it would).
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holding = holder.tx(async (t) => {
        await t.get("SELECT id FROM webhook_deliveries WHERE id = ? FOR UPDATE", [d!.id]);
        locked();
        await released;
      });
      await isLocked;
      const writing = writer.tx((t) => recordSuccesses(t, [success(d!, 204)]));
      await Bun.sleep(300);
      // The success waits for the delivery's row and has not locked its attempt's yet: NOWAIT gets it at once.
      const probe = await prober.tx((t) => t.get<{ id: number }>("SELECT id FROM webhook_attempts WHERE id = ? FOR UPDATE NOWAIT", [d!.attempt_id]));
      expect(probe?.id).toBe(d!.attempt_id);
      release();
      await holding;
      expect([...(await writing)]).toEqual([d!.id]);
    } finally {
      for (const s of [holder, writer, prober]) await s.close();
    }
  });
});
