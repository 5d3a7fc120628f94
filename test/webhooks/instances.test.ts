// Several instances on one database (docs/design.md §8a), on each engine present: SQLite always, PostgreSQL when
// installed. Each instance has its own store and dispatcher (test/webhooks/instances.ts), as separate processes
// would. What must hold: two dispatchers draining one queue at once send every delivery exactly once; leases taken
// at the same moment are disjoint; a lease in progress never blocks another instance (PostgreSQL: SKIP LOCKED); an
// attempt cannot be recorded twice; the outbox writes with the producer's transaction or not at all.
import { afterEach, describe, expect, test } from "bun:test";
import { UniqueViolation } from "../../src/db/port";
import { dueDeliveries } from "../../src/webhooks/lease-store";
import { DeliveryLeases } from "../../src/webhooks/leases";
import { emitEvent } from "../../src/webhooks/outbox";
import { createWebhook, deleteWebhook } from "../../src/webhooks/service";
import { FakeClock } from "../support/clock";
import { engines, type Instance, type Instances, openInstances } from "./instances";

const OWNER = { partner: "Acme", mode: "live" as const };
let world: Instances | undefined;
const servers: Array<{ stop(force?: boolean): void }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) s.stop(true);
  await world?.close();
  world = undefined;
});

/** A real receiver on 127.0.0.1 that answers 204 and counts requests per (path, X-Webhook-Id). */
function countingReceiver() {
  const counts = new Map<string, number>();
  let total = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await req.arrayBuffer();
      const key = `${new URL(req.url).pathname} ${req.headers.get("x-webhook-id")}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      total++;
      return new Response(null, { status: 204 });
    },
  });
  servers.push(server);
  return { url: (path: string) => `http://127.0.0.1:${server.port}${path}`, counts, total: () => total };
}

async function hook(i: Instance, url: string, eventType = "salutes.credit"): Promise<number> {
  return (await i.store.tx((t) => createWebhook(t, i.ctx, OWNER, { event_type: eventType, target_url: url }))).id;
}

/** Commits `n` events, `perTx` per transaction; their public ids. */
async function emit(i: Instance, n: number, perTx = 25): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < n; done += perTx) {
    const batch = await i.store.tx(async (t) => {
      const out: string[] = [];
      for (let k = 0; k < Math.min(perTx, n - done); k++)
        out.push((await emitEvent(t, i.ctx, OWNER, "salutes.credit", { user_id: String(done + k) })).publicId);
      return out;
    });
    ids.push(...batch);
  }
  return ids;
}

const pending = async (i: Instance) =>
  (await i.store.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status IN ('queued', 'processing', 'failed')"))!.n;

for (const engine of engines("test/webhooks/instances.test.ts")) {
  describe(`webhooks with several instances on ${engine}`, () => {
    test("two dispatchers draining the same queue at once send each delivery exactly once", async () => {
      world = await openInstances(engine, 2);
      const [a, b] = world.all as [Instance, Instance];
      const rx = countingReceiver();
      for (let h = 1; h <= 4; h++) await hook(a, rx.url(`/hook/${h}`));
      const events = await emit(a, 150);
      const expected = events.length * 4;

      // Both instances pass over the queue at the same time, again and again, until nothing is left (bounded).
      const deadline = Date.now() + 60_000;
      for (let round = 0; round < 50 && Date.now() < deadline && (await pending(a)) > 0; round++) {
        await Promise.all([a.ctx.dispatcher.runOnce(), b.ctx.dispatcher.runOnce()]);
      }

      expect(rx.total()).toBe(expected);
      for (const id of events) for (let h = 1; h <= 4; h++) expect(rx.counts.get(`/hook/${h} ${id}`)).toBe(1);
      const rows = await a.store.all<{ status: string; attempts: number; n: number }>(
        "SELECT status, attempts, count(*) AS n FROM webhook_deliveries GROUP BY status, attempts",
      );
      expect(rows).toEqual([{ status: "succeeded", attempts: 1, n: expected }]);
      const attempts = await a.store.get<{ rows: number; numbered: number; answered: number }>(
        "SELECT count(*) AS rows, count(*) FILTER (WHERE attempt_no = 1) AS numbered, count(*) FILTER (WHERE status_code = 204) AS answered FROM webhook_attempts",
      );
      expect(attempts).toEqual({ rows: expected, numbered: expected, answered: expected });
      // Both took part (the work was shared, not merely serialised behind one of them).
      expect(a.ctx.dispatcher.completed + b.ctx.dispatcher.completed).toBe(expected);
    }, 90_000);

    test("leases taken at the same moment by two instances are disjoint, and count one attempt each", async () => {
      world = await openInstances(engine, 2);
      const [a, b] = world.all as [Instance, Instance];
      await hook(a, "http://127.0.0.1:9/never");
      await emit(a, 30);
      const until = new Date(a.clock.now().getTime() + 60_000);
      const [x, y] = await Promise.all([new DeliveryLeases(a.ctx).take(20, until), new DeliveryLeases(b.ctx).take(20, until)]);
      const ids = [...x.leased, ...y.leased].map((d) => d.id);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
      // Nothing is due while the leases hold.
      expect((await new DeliveryLeases(a.ctx).take(20, until)).leased).toEqual([]);
      const counted = await a.store.get<{ once: number; rows: number }>(
        "SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'processing' AND attempts = 1) AS once, (SELECT count(*) FROM webhook_attempts) AS rows",
      );
      expect(counted).toEqual({ once: 30, rows: 30 });
    });

    test("an attempt cannot be recorded twice: the unique index refuses a doubled attempt_no, a retaken lease numbers the next one", async () => {
      world = await openInstances(engine, 2);
      const [a] = world.all as [Instance];
      const second = world.add(new FakeClock(a.clock.now()));
      await hook(a, "http://127.0.0.1:9/never");
      await emit(a, 1);
      const leased = await new DeliveryLeases(a.ctx).take(5, new Date(a.clock.now().getTime() + 60_000));
      expect(leased.leased).toHaveLength(1);
      const id = leased.leased[0]!.id;
      const doubled = a.store.run("INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms) VALUES (?, ?, ?, 0)", [
        id,
        1,
        a.clock.now().toISOString(),
      ]);
      await expect(doubled).rejects.toBeInstanceOf(UniqueViolation);
      // Its lease runs out; another instance takes the delivery over: the cut-off attempt is marked, the next numbered 2.
      second.clock.advanceSeconds(61);
      const retaken = await new DeliveryLeases(second.ctx).take(5, new Date(second.clock.now().getTime() + 60_000));
      expect(retaken.leased.map((d) => [d.id, d.attempts])).toEqual([[id, 2]]);
      expect(await a.store.all("SELECT attempt_no, reason_tag FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt_no", [id])).toEqual([
        { attempt_no: 1, reason_tag: "interrupted" },
        { attempt_no: 2, reason_tag: null },
      ]);
    });

    test("the outbox writes with the producer's transaction: fanned out to active subscribers, or nothing when it rolls back", async () => {
      world = await openInstances(engine, 1);
      const [a] = world.all as [Instance];
      const kept = await hook(a, "http://127.0.0.1:9/a");
      await hook(a, "http://127.0.0.1:9/b", "salutes.debit");
      const removed = await hook(a, "http://127.0.0.1:9/c");
      await a.store.tx((t) => deleteWebhook(t, a.ctx, OWNER, removed));
      const e = await a.store.tx((t) => emitEvent(t, a.ctx, OWNER, "salutes.credit", { user_id: "42" }));
      expect(e.deliveryIds).toHaveLength(1);
      expect(await a.store.all("SELECT webhook_id, partner, mode, status, attempts FROM webhook_deliveries")).toEqual([
        { webhook_id: kept, partner: "Acme", mode: "live", status: "queued", attempts: 0 },
      ]);
      const failed = a.store.tx(async (t) => {
        await emitEvent(t, a.ctx, OWNER, "salutes.credit", { user_id: "43" });
        throw new Error("the producer's change failed");
      });
      await expect(failed).rejects.toThrow("the producer's change failed");
      expect(await a.store.get("SELECT count(*) AS events, (SELECT count(*) FROM webhook_deliveries) AS deliveries FROM events")).toEqual({
        events: 1,
        deliveries: 1,
      });
    });

    if (engine === "postgres") {
      test("a lease in progress on one instance does not block another: it takes the next due rows (SKIP LOCKED)", async () => {
        world = await openInstances(engine, 2);
        const [a, b] = world.all as [Instance, Instance];
        await hook(a, "http://127.0.0.1:9/never");
        await emit(a, 10);
        const now = a.clock.now().toISOString();
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let locked: number[] = [];
        // A's transaction locks the 4 oldest due rows and stays open — only a test may hold one like this.
        const open = a.store.tx(async (t) => {
          locked = (await dueDeliveries(t, "postgres", now, 4)).map((d) => d.id);
          await held;
        });
        for (let i = 0; i < 200 && locked.length === 0; i++) await Bun.sleep(5);
        expect(locked).toHaveLength(4);
        const taken = await new DeliveryLeases(b.ctx).take(10, new Date(a.clock.now().getTime() + 60_000));
        release();
        await open;
        expect(taken.leased).toHaveLength(6);
        expect(taken.leased.some((d) => locked.includes(d.id))).toBe(false);
      });
    }
  });
}
