// Issue 49, "PostgreSQL at speed": through a backlog the dispatcher keeps up to LEASED_PER_SLOT (3) ×
// WEBHOOK_CONCURRENCY deliveries leased and waiting beside the sends in flight, so each lease (one at a time, each
// waiting for its commit on PostgreSQL) takes more of them — and never more than that bound. A real receiver on
// 127.0.0.1 holds every request until the test lets them go; both engines.
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { createKey } from "../support/partner";
import { acmeWebhook, queueEvents } from "./queued";

let h: TestApp | undefined;
let receiver: ReturnType<typeof Bun.serve> | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  receiver?.stop(true);
  receiver = undefined;
});

const CONCURRENCY = 2;
const N = 20;

/** Polls `read` until it gives `want` (at most 5 s): the last value read. */
async function settlesAt<T>(read: () => Promise<T>, want: T): Promise<T> {
  let last = await read();
  for (let i = 0; i < 250 && last !== want; i++) {
    await Bun.sleep(20);
    last = await read();
  }
  return last;
}

test("a backlog is leased up to four times WEBHOOK_CONCURRENCY ahead (the sends and three slots' worth waiting), no further; every delivery then succeeds once", async () => {
  const held: Array<() => void> = [];
  const seen = new Set<string>();
  let received = 0;
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      received++;
      seen.add(req.headers.get("x-webhook-id") ?? "");
      await new Promise<void>((resolve) => held.push(resolve));
      return new Response(null, { status: 204 });
    },
  });
  h = await openTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "1", JOBS_ENABLED: "0", WEBHOOK_CONCURRENCY: String(CONCURRENCY) } });
  const app = h;
  const key = await createKey(app);
  const ids = await queueEvents(app, await acmeWebhook(app, key, `http://127.0.0.1:${receiver.port}/hook`), N);
  const leased = async () => Number((await app.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'processing'"))!.n);

  const pass = app.ctx.dispatcher.runOnce();
  // Two sends at the receiver (WEBHOOK_CONCURRENCY), six more leased and waiting: eight of the twenty (with one slot's
  // worth waiting, as before, it was four).
  expect(await settlesAt(async () => held.length, CONCURRENCY)).toBe(CONCURRENCY);
  expect(await settlesAt(leased, 4 * CONCURRENCY)).toBe(4 * CONCURRENCY);
  await Bun.sleep(200);
  expect(await leased()).toBe(4 * CONCURRENCY);
  expect(received).toBe(CONCURRENCY);

  // Let every request go as it comes: the pass drains the backlog.
  const release = setInterval(() => {
    for (const go of held.splice(0)) go();
  }, 5);
  try {
    await pass;
  } finally {
    clearInterval(release);
  }
  const rows = await app.ctx.store.all<{ status: string; n: number }>(
    `SELECT status, count(*) AS n FROM webhook_deliveries WHERE id IN (${ids.map(() => "?").join(", ")}) GROUP BY status`,
    ids,
  );
  expect(rows.map((r) => [r.status, Number(r.n)])).toEqual([["succeeded", N]]);
  expect(received).toBe(N);
  expect(seen.size).toBe(N);
}, 30_000);
