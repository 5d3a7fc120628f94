// Concurrent sandbox resets over real HTTP: a partner's integration (or several of its CI jobs) may reset its
// sandbox many times at once. Every reset must succeed in turn — each one wipes what the one before it seeded and
// seeds again — and the state left afterwards must be exactly one reset's fixtures: no duplicated fixture users,
// no half-empty sandbox, never a 5xx. Runs on the engine HERALD_TEST_ENGINE names; on PostgreSQL the resets are
// concurrent transactions on separate connections, which is where the locking is tested.
import { afterEach, expect, test } from "bun:test";
import bs58 from "bs58";
import { fixturePlan } from "../../src/sandbox/fixtures";
import { createLogger } from "../../src/log";
import type { TestApp } from "../support/app";
import { signedInit, type TestKey } from "../support/partner";
import { PostgresStore } from "../../src/db/postgres-engine";
import { anotherSandboxInstance, countWhere, drain, rows, SANDBOX, sandboxApp, sandboxKey, sb } from "./support";
import { testOn } from "../support/skipped";

let h = undefined as unknown as TestApp;
/** What the app logged at level error (a 500's cause, a dispatcher's failed transaction): none is expected. */
let errorLog: string[] = [];
const loggingApp = () => {
  errorLog = [];
  return sandboxApp({ log: createLogger("error", (line) => errorLog.push(line.slice(0, 2000))) });
};
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const ROUNDS = 10;
const AT_ONCE = 8;
/** Per request: a reset waits for at most the seven before it, each a few dozen statements. */
const REQUEST_TIMEOUT_MS = 30_000;

/** The partner's sandbox rows per table: what the reset deletes and seeds. */
const TABLES = [
  "partner_users",
  "wallet_links",
  "salutes_ledger",
  "salutes_balances",
  "salutes_conversions",
  "donation_claims",
  "webhooks",
  "webhook_deliveries",
  "events",
] as const;

async function sandboxCounts(partner: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of TABLES) out[table] = await countWhere(h, table, "partner = ? AND mode = 'sandbox'", partner);
  return out;
}

interface Answer {
  status: number;
  body: Record<string, any>;
}

async function call(base: string, key: TestKey, method: string, path: string, body?: unknown): Promise<Answer> {
  const init = signedInit(h, key, method, `${SANDBOX}${path}`, body === undefined ? {} : { body });
  const res = await fetch(`${base}${SANDBOX}${path}`, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  let parsed: Record<string, any>;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { text: text.slice(0, 300) };
  }
  return { status: res.status, body: parsed };
}

/** Practice state of the partner's own, so the next resets have children to delete: users, wallets, credits, a webhook with deliveries, a claim. */
async function seedPracticeState(base: string, key: TestKey, round: number): Promise<void> {
  const ok = (r: Answer, what: string) =>
    expect({ what, status: r.status, body: r.status < 300 ? null : r.body }).toEqual({ what, status: r.status, body: null });
  ok(await call(base, key, "POST", "/webhooks", { event_type: "salutes.credit", target_url: "http://127.0.0.1:9/hook" }), "webhook");
  for (let u = 0; u < 2; u++) {
    const created = await call(base, key, "POST", "/users", { external_id: `round-${round}-user-${u}` });
    ok(created, "user");
    const id = String(created.body.user.id);
    ok(
      await call(base, key, "POST", `/users/${id}/wallets`, { wallet_address: bs58.encode(new Uint8Array(32).fill(round * 2 + u + 1)), label: "mine" }),
      "wallet",
    );
    ok(await call(base, key, "POST", "/salutes/credit", { user_id: id, amount: 3 + u, reason: "quest", source: "test" }), "credit");
  }
  ok(await call(base, key, "POST", "/salutes/credit", {}), "fixture credit");
  ok(await call(base, key, "POST", "/donation-claim", { campaign_id: "c", amount: 1, recipient: { email: `r${round}@example.com` } }), "claim");
}

test(`${AT_ONCE} concurrent resets of one sandbox partner × ${ROUNDS} rounds: every one succeeds in turn and one reset's fixtures remain`, async () => {
  h = await loggingApp();
  const keys = [await sandboxKey(h), await sandboxKey(h)];
  const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const base = `http://127.0.0.1:${server.server!.port}`;
    // One reset alone gives the reference: what a reset leaves, per table.
    const first = await call(base, keys[0]!, "POST", "/reset");
    expect(first.status).toBe(200);
    const reference = await sandboxCounts("Acme");
    expect(reference.partner_users).toBe(3);
    let resets = first.body.fixtures.reset_count as number;

    const statuses: Record<number, number> = {};
    for (let round = 0; round < ROUNDS; round++) {
      await seedPracticeState(base, keys[round % keys.length]!, round);
      const before = await sandboxCounts("Acme");
      expect(before.partner_users).toBe(5);
      expect(before.webhook_deliveries).toBeGreaterThan(0);

      const answers = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => call(base, keys[i % keys.length]!, "POST", "/reset")));
      for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      const failed = answers.filter((a) => a.status !== 200).map((a) => ({ status: a.status, error: a.body.error ?? a.body }));
      expect({ round, failed, errorLog }).toEqual({ round, failed: [], errorLog: [] });

      // The resets took turns: each counted one more than the one before it.
      const counts = answers.map((a) => a.body.fixtures.reset_count as number).sort((x, y) => x - y);
      expect(counts).toEqual(Array.from({ length: AT_ONCE }, (_, i) => resets + 1 + i));
      resets += AT_ONCE;
      // The first of the round deleted the practice state; every later one deleted exactly the fixtures before it.
      const byCount = new Map(answers.map((a) => [a.body.fixtures.reset_count as number, a.body]));
      expect(byCount.get(resets - AT_ONCE + 1)!.deleted.users).toBe(before.partner_users);
      for (let n = resets - AT_ONCE + 2; n <= resets; n++) expect(byCount.get(n)!.deleted.users).toBe(3);

      // What remains is the last reset's fixtures, once.
      const last = byCount.get(resets)!;
      expect(await sandboxCounts("Acme")).toEqual(reference);
      const record = await rows<{ seed_key_id: string; plan_digest: string; user_ids: string; reset_count: number }>(
        h,
        "SELECT seed_key_id, plan_digest, user_ids, reset_count FROM sandbox_fixtures WHERE partner = ?",
        "Acme",
      );
      expect(record).toHaveLength(1);
      expect(record[0]!.reset_count).toBe(resets);
      expect(record[0]!.seed_key_id).toBe(last.fixtures.seed_key_id);
      expect(record[0]!.plan_digest).toBe(last.fixtures.plan_digest);
      expect(JSON.parse(record[0]!.user_ids)).toEqual(last.fixtures.user_ids);
      const users = await rows<{ id: number; external_id: string }>(
        h,
        "SELECT id, external_id FROM partner_users WHERE partner = ? AND mode = 'sandbox' ORDER BY id",
        "Acme",
      );
      expect(users.map((u) => u.id)).toEqual(last.fixtures.user_ids);
      expect(users.map((u) => u.external_id)).toEqual(fixturePlan(last.fixtures.seed_key_id).users.map((u) => u.external_id));
    }
    expect(statuses).toEqual({ 200: ROUNDS * AT_ONCE });
  } finally {
    await server.stop(true);
  }
});

test("resets racing the partner's own sandbox writes: no 5xx, and every balance still equals its ledger", async () => {
  h = await loggingApp();
  const key = await sandboxKey(h);
  const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const base = `http://127.0.0.1:${server.server!.port}`;
    expect((await call(base, key, "POST", "/webhooks", { event_type: "salutes.credit", target_url: "http://127.0.0.1:9/hook" })).status).toBe(201);
    const statuses: Record<number, number> = {};
    let resets = 0;
    for (let round = 0; round < 5; round++) {
      const mine = await call(base, key, "POST", "/users", { external_id: `racer-${round}` });
      expect(mine.status).toBe(201);
      const id = String(mine.body.user.id);
      // Resets in between credits (to fx-alice by default, and to the user just made), new users and wallets: each
      // write either lands before a reset, which deletes what it wrote, or after it.
      const calls: Array<Promise<Answer & { what: string }>> = [];
      const tagged = (what: string, p: Promise<Answer>) => calls.push(p.then((a) => ({ ...a, what })));
      for (let i = 0; i < 16; i++) {
        if (i % 4 === 0) tagged("reset", call(base, key, "POST", "/reset"));
        // A credit that names no user goes to fx-alice as the sandbox records it when the credit runs: never a user
        // a reset has just replaced.
        else if (i % 8 === 1) tagged("default credit", call(base, key, "POST", "/salutes/credit", {}));
        else if (i % 4 === 1) tagged("credit", call(base, key, "POST", "/salutes/credit", { user_id: id, amount: 2, reason: "quest", source: "race" }));
        else if (i % 4 === 2) tagged("user", call(base, key, "POST", "/users", { external_id: `racer-${round}-${i}` }));
        else tagged("wallet", call(base, key, "POST", `/users/${id}/wallets`, { wallet_address: bs58.encode(new Uint8Array(32).fill(100 + i)) }));
      }
      const answers = await Promise.all(calls);
      const refusedDefaults = answers.filter((a) => a.what === "default credit" && a.status !== 200).map((a) => ({ status: a.status, body: a.body }));
      expect({ round, refusedDefaults }).toEqual({ round, refusedDefaults: [] });
      for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      const serverErrors = answers.filter((a) => a.status >= 500).map((a) => ({ status: a.status, error: a.body.error ?? a.body }));
      expect({ round, serverErrors, errorLog }).toEqual({ round, serverErrors: [], errorLog: [] });
      resets += answers.filter((a) => a.status === 200 && a.body.reset === true).length;

      // Whatever the order, the ledger and the balances agree and the fixtures are there once.
      const drift = await rows(
        h,
        `SELECT b.user_id, b.balance_minor, (SELECT coalesce(sum(l.delta_minor), 0) FROM salutes_ledger l WHERE l.user_id = b.user_id) AS ledger_minor
         FROM salutes_balances b WHERE b.partner = ? AND b.mode = 'sandbox'`,
        "Acme",
      );
      expect(drift.filter((d) => Number(d.balance_minor) !== Number(d.ledger_minor))).toEqual([]);
      const fixtureUsers = await rows<{ external_id: string }>(
        h,
        "SELECT external_id FROM partner_users WHERE partner = ? AND mode = 'sandbox' AND external_id LIKE 'fx-%' ORDER BY external_id",
        "Acme",
      );
      expect(fixtureUsers.map((u) => u.external_id)).toEqual(["fx-alice", "fx-bob", "fx-carol"]);
    }
    expect(resets).toBe(20);
    // Only successes and the refusals a reset can cause (a user it deleted is 404).
    expect(Object.keys(statuses).every((s) => ["200", "201", "404"].includes(s))).toBe(true);
  } finally {
    await server.stop(true);
  }
});

testOn("postgres", "test/sandbox/concurrent-reset.test.ts")(
  "PostgreSQL: an attempt the dispatcher records while a reset waits for its delivery is deleted by that reset, not left to fail it",
  async () => {
    h = await loggingApp();
    const key = await sandboxKey(h);
    const hook = await sb(h, key, "POST", "/webhooks", { body: { event_type: "salutes.credit", target_url: "http://127.0.0.1:9/hook" } });
    expect(hook.status).toBe(201);
    expect((await sb(h, key, "POST", "/salutes/credit", { body: {} })).status).toBe(200);
    // The dispatcher tries the delivery once (the receiver's port is closed) and schedules a retry the test clock
    // never reaches: nothing else touches the delivery from here on.
    await drain(h);
    const [delivery] = await rows<{ id: number }>(h, "SELECT id FROM webhook_deliveries WHERE partner = ? AND mode = 'sandbox'", "Acme");
    expect(delivery).toBeDefined();
    const attemptsBefore = await countWhere(h, "webhook_attempts", "delivery_id = ?", delivery!.id);

    // A dispatcher's lease transaction, held open: it has locked the delivery and will add an attempt row.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const dispatcher = h.ctx.store.tx(async (t) => {
      await t.all("SELECT id FROM webhook_deliveries WHERE id = ? FOR UPDATE", [delivery!.id]);
      locked();
      await held;
      await t.run("INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms) VALUES (?, 99, ?, 0)", [
        delivery!.id,
        h.clock.now().toISOString(),
      ]);
    });
    await lockTaken;
    let reset: Promise<{ status: number; body: Record<string, any> }> | undefined;
    try {
      reset = sb(h, key, "POST", "/reset");
      // The reset reaches the delivery and waits for the dispatcher's lock (bounded: a few seconds at most).
      let waiting = false;
      for (let i = 0; i < 500 && !waiting; i++) {
        const r = await h.ctx.store.get<{ n: number }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        );
        waiting = r!.n > 0;
        if (!waiting) await Bun.sleep(10);
      }
      expect(waiting).toBe(true);
    } finally {
      release();
      await dispatcher;
    }
    const r = await reset!;
    expect({ status: r.status, errorLog }).toEqual({ status: 200, errorLog: [] });
    expect(r.body.deleted).toMatchObject({ deliveries: 1, delivery_attempts: attemptsBefore + 1, webhooks: 1 });
    expect(await countWhere(h, "webhook_attempts", "delivery_id = ?", delivery!.id)).toBe(0);
  },
);

test("20 concurrent resets of one sandbox over two instances, each with its own Idempotency-Key: every one answers 200, in turn", async () => {
  h = await loggingApp();
  const keys = [await sandboxKey(h), await sandboxKey(h), await sandboxKey(h), await sandboxKey(h)];
  const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
  const b = await anotherSandboxInstance(h, { log: createLogger("error", (line) => errorLog.push(line.slice(0, 2000))) });
  const AT_ONCE_HERE = 20;
  try {
    const bases = [`http://127.0.0.1:${server.server!.port}`, b.base];
    const first = await call(bases[0]!, keys[0]!, "POST", "/reset");
    expect(first.status).toBe(200);
    const reference = await sandboxCounts("Acme");
    let resets = first.body.fixtures.reset_count as number;
    for (let round = 0; round < 2; round++) {
      await seedPracticeState(bases[round]!, keys[round]!, round);
      const before = await sandboxCounts("Acme");
      // Each request signed on its own, with its own Idempotency-Key (signedInit), alternately to either instance.
      const answers = await Promise.all(Array.from({ length: AT_ONCE_HERE }, (_, i) => call(bases[i % 2]!, keys[i % keys.length]!, "POST", "/reset")));
      const failed = answers.filter((a) => a.status !== 200).map((a) => ({ status: a.status, error: a.body.error ?? a.body }));
      expect({ round, failed, errorLog }).toEqual({ round, failed: [], errorLog: [] });
      const counts = answers.map((a) => a.body.fixtures.reset_count as number).sort((x, y) => x - y);
      expect(counts).toEqual(Array.from({ length: AT_ONCE_HERE }, (_, i) => resets + 1 + i));
      resets += AT_ONCE_HERE;
      // Every user was deleted once, by one of them: the practice state's and each reset's fixtures but the last's.
      // (Across instances one reset's batches may delete rows another's transaction would have, so only the sum is exact.)
      const deletedUsers = answers.reduce((n, a) => n + (a.body.deleted.users as number), 0);
      expect(deletedUsers).toBe(before.partner_users! + reference.partner_users! * (AT_ONCE_HERE - 1));
      expect(await sandboxCounts("Acme")).toEqual(reference);
      const last = answers.find((a) => a.body.fixtures.reset_count === resets)!;
      const users = await rows<{ id: number }>(h, "SELECT id FROM partner_users WHERE partner = ? AND mode = 'sandbox' ORDER BY id", "Acme");
      expect(users.map((u) => u.id)).toEqual(last.body.fixtures.user_ids);
    }
  } finally {
    await server.stop(true);
    await b.close();
  }
});

testOn("postgres", "test/sandbox/concurrent-reset.test.ts")(
  "PostgreSQL: a reset whose fixture row another transaction holds past the reset's transaction deadline waits outside its transaction, then answers 200",
  async () => {
    errorLog = [];
    h = await sandboxApp({
      env: { DATABASE_TRANSACTION_TIMEOUT_MS: "1000" },
      log: createLogger("error", (line) => errorLog.push(line.slice(0, 2000))),
    });
    const key = await sandboxKey(h);
    expect((await sb(h, key, "POST", "/users", { body: { external_id: "practice" } })).status).toBe(201);
    // Another instance's sandbox write (or reset) holding the partner's row, for 2.5 s: longer than the 1 s in which
    // the reset's transaction must commit. Waiting for it inside that transaction would end in 503 db_unavailable.
    const other = new PostgresStore({ url: h.ctx.config.database.url!, poolMax: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = other.tx(async (t) => {
      await t.get("SELECT partner FROM sandbox_fixtures WHERE partner = ? FOR SHARE", ["Acme"]);
      locked();
      await held;
    });
    try {
      await lockTaken;
      const started = performance.now();
      const reset = sb(h, key, "POST", "/reset");
      // Past the reset's transaction deadline, no session of the app waits for a lock: it waits outside.
      await Bun.sleep(1500);
      const waiting = await h.ctx.store.get<{ n: number }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
      );
      expect(waiting!.n).toBe(0);
      await Bun.sleep(1000);
      release();
      await holder;
      const r = await reset;
      expect({ status: r.status, error: r.body.error ?? null, errorLog }).toEqual({ status: 200, error: null, errorLog: [] });
      expect(performance.now() - started).toBeGreaterThan(2400);
      expect(r.body.deleted.users).toBe(4);
    } finally {
      release();
      await holder.catch(() => {});
      await other.close();
    }
  },
  30_000,
);
