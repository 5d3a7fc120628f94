// webhook_dead_letter_counts (drizzle/0037_dead_letter_counts.sql; postgres 0013): the triggers keep each owner's row
// equal to a count of its dead letters through every kind of change — deliveries inserted dead, a delivery dead-
// lettered, a dead letter requeued (a replay), other state changes, deletes (the prune, a sandbox reset) — in one
// statement over many rows or row by row, on both engines (HERALD_TEST_ENGINE=postgres). Partner status, the status
// page and /metrics read the row (stateCounts); before, they counted the dead letters.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { deadLetterCount, stateCounts } from "../../src/webhooks/deliveries-store";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp;
const AT = "2026-01-01T00:00:00.000Z";
const OWNERS = [
  ["Acme", "live"],
  ["Acme", "sandbox"],
  ["Globex", "live"],
] as const;

beforeAll(async () => {
  h = await openTestApp();
  let id = 0;
  for (const [partner, mode] of OWNERS) {
    id++;
    await h.ctx.store.run(
      "INSERT INTO webhooks (id, partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at) VALUES (?, ?, ?, '*', 'https://hooks.example.com/h', 'c', ?, ?)",
      [id, partner, mode, AT, AT],
    );
  }
  for (let e = 1; e <= 300; e++) {
    const [partner, mode] = OWNERS[e % 3]!;
    await h.ctx.store.run("INSERT INTO events (id, public_id, partner, mode, event_type, data, created_at) VALUES (?, ?, ?, ?, 'users.updated', '{}', ?)", [
      e,
      `evt_${e}`,
      partner,
      mode,
      AT,
    ]);
  }
});
afterAll(() => h?.close());

/** Each owner's row against a count of its dead letters, and the total against every dead letter. */
async function expectCountsExact() {
  const counted = await h.ctx.store.all<{ partner: string; mode: string; n: number }>(
    "SELECT partner, mode, count(*) AS n FROM webhook_deliveries WHERE status = 'dead_letter' GROUP BY partner, mode",
  );
  for (const [partner, mode] of OWNERS) {
    const want = counted.find((c) => c.partner === partner && c.mode === mode)?.n ?? 0;
    const health = await stateCounts(h.ctx.store, { owner: { partner, mode }, settledSinceIso: AT });
    expect({ partner, mode, n: health.find((r) => r.status === "dead_letter")?.n }).toEqual({ partner, mode, n: want });
  }
  expect(await deadLetterCount(h.ctx.store)).toBe(counted.reduce((s, c) => s + c.n, 0));
}

const insert = (from: number, to: number, status: string) =>
  h.ctx.store.run(
    `INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, created_at, updated_at)
     SELECT e.id, w.id, e.partner, e.mode, ?, ?, ? FROM events e JOIN webhooks w ON w.partner = e.partner AND w.mode = e.mode
     WHERE e.id BETWEEN ? AND ?`,
    [status, AT, AT, from, to],
  );

test("inserted dead, dead-lettered, requeued, changed otherwise, deleted: each owner's row is its count", async () => {
  await expectCountsExact();
  await insert(1, 60, "dead_letter");
  await insert(61, 300, "processing");
  await expectCountsExact();
  // The dispatcher gives up on some, one statement each, and on a batch at once.
  for (const id of [100, 101, 102]) await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'dead_letter' WHERE event_id = ?", [id]);
  await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'dead_letter' WHERE event_id BETWEEN 200 AND 239");
  await expectCountsExact();
  // Changes that neither enter nor leave the state count nothing: dead to dead, processing to failed.
  await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'dead_letter', attempts = attempts + 1 WHERE event_id BETWEEN 1 AND 30");
  await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'failed' WHERE event_id BETWEEN 240 AND 260");
  await expectCountsExact();
  // A replay requeues dead letters; some succeed, one dies again.
  await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'queued' WHERE event_id BETWEEN 1 AND 20");
  await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'succeeded' WHERE event_id BETWEEN 1 AND 19");
  await h.ctx.store.run("UPDATE webhook_deliveries SET status = 'dead_letter' WHERE event_id = 20");
  await expectCountsExact();
  // The prune and a sandbox reset delete them, in a transaction that rolls back too.
  await h.ctx.store.run("DELETE FROM webhook_deliveries WHERE status = 'dead_letter' AND event_id BETWEEN 21 AND 45");
  await h.ctx.store.run("DELETE FROM webhook_deliveries WHERE mode = 'sandbox'");
  await expect(
    h.ctx.store.tx(async (t) => {
      await t.run("DELETE FROM webhook_deliveries WHERE status = 'dead_letter'");
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  await expectCountsExact();
  expect(await deadLetterCount(h.ctx.store)).toBeGreaterThan(0);
  await h.ctx.store.run("DELETE FROM webhook_deliveries");
  await expectCountsExact();
  expect(await deadLetterCount(h.ctx.store)).toBe(0);
});
