// POST /api/partner/sandbox/reset over a sandbox larger than a batch, on the engine HERALD_TEST_ENGINE names (issue 71):
// the bulk of the rows goes in bounded batches before the request's transaction (src/sandbox/reset-batches.ts), each
// a statement of at most a batch of rows or a short transaction of one step of users, counted here through the port
// (CountingStore); the transaction deletes only what remains and reseeds. The answer counts every row the reset
// deleted, live rows of the partner and another partner's sandbox are untouched, the fixtures are back, a replay of
// the Idempotency-Key deletes nothing, and two resets at once still take turns.
import { afterEach, describe, expect, test } from "bun:test";
import type { Owner } from "../../src/auth/actors";
import type { Param } from "../../src/db/port";
import { finishReset } from "../../src/sandbox/reset";
import { deleteSandboxInBatches } from "../../src/sandbox/reset-batches";
import type { TestApp } from "../support/app";
import { CountingStore } from "../support/counting-store";
import { fullReads, planOf } from "../support/query-plans";
import { countWhere, rows, sandboxApp, sandboxKey, sb } from "./support";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const ACME: Owner = { partner: "Acme", mode: "sandbox" };
const NOW = "2026-01-01T00:00:00.000Z";

/** Each table of the reset's answer: how the owner's rows of it are counted (attempts through their deliveries). */
const COUNTED: Record<string, [table: string, where: string]> = {
  users: ["partner_users", "partner = ? AND mode = ?"],
  wallets: ["wallet_links", "partner = ? AND mode = ?"],
  ledger_entries: ["salutes_ledger", "partner = ? AND mode = ?"],
  balances: ["salutes_balances", "partner = ? AND mode = ?"],
  conversions: ["salutes_conversions", "partner = ? AND mode = ?"],
  donation_claims: ["donation_claims", "partner = ? AND mode = ?"],
  webhooks: ["webhooks", "partner = ? AND mode = ?"],
  deliveries: ["webhook_deliveries", "partner = ? AND mode = ?"],
  delivery_attempts: ["webhook_attempts", "delivery_id IN (SELECT id FROM webhook_deliveries WHERE partner = ? AND mode = ?)"],
  events: ["events", "partner = ? AND mode = ?"],
};

async function countsOf(partner: string, mode: "sandbox" | "live"): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, [table, where]] of Object.entries(COUNTED)) out[name] = await countWhere(h, table, where, partner, mode);
  return out;
}

/** `n` rows of `sql` (an INSERT … SELECT … FROM s, `s.i` from 1 to n), on either engine. */
const insertMany = (n: number, sql: string, params: Param[] = []) =>
  h.ctx.store.run(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?) ${sql}`, [n, ...params]);

/**
 * A sandbox of months, written straight to the tables: `n` practice users each with a wallet, a ledger entry and a
 * balance, `n` more entries on fx-alice, `n` claims, and `n` events each with a delivery to an inactive webhook (so
 * nothing is sent) and an attempt. Rows of the owner `mode` of `partner`, tagged `tag` to keep unique values apart.
 */
async function seedPractice(partner: string, mode: "sandbox" | "live", n: number, tag: string, aliceId: number | null) {
  const p = [partner, mode] as Param[];
  await insertMany(
    n,
    `INSERT INTO partner_users (partner, mode, external_id, created_at, updated_at) SELECT CAST(? AS text), CAST(? AS text), '${tag}-' || i, CAST(? AS text), CAST(? AS text) FROM s`,
    [...p, NOW, NOW],
  );
  const mine = `SELECT id FROM partner_users WHERE partner = ? AND mode = ? AND external_id LIKE '${tag}-%'`;
  await h.ctx.store.run(
    `INSERT INTO wallet_links (user_id, partner, mode, wallet_address, created_at, updated_at) SELECT id, partner, mode, 'w-${tag}-' || id, ?, ? FROM partner_users WHERE id IN (${mine})`,
    [NOW, NOW, ...p],
  );
  await h.ctx.store.run(
    `INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, created_at) SELECT id, partner, mode, 7, 7, 'quest', 'seed', ? FROM partner_users WHERE id IN (${mine})`,
    [NOW, ...p],
  );
  await h.ctx.store.run(
    `INSERT INTO salutes_balances (user_id, partner, mode, balance_minor, updated_at) SELECT id, partner, mode, 7, ? FROM partner_users WHERE id IN (${mine})`,
    [NOW, ...p],
  );
  if (aliceId !== null) {
    await insertMany(
      n,
      "INSERT INTO salutes_ledger (user_id, partner, mode, delta_minor, balance_after_minor, reason, source, created_at) SELECT CAST(? AS bigint), CAST(? AS text), CAST(? AS text), 1, i, 'quest', 'seed', CAST(? AS text) FROM s",
      [aliceId, ...p, NOW],
    );
  }
  await insertMany(
    n,
    `INSERT INTO donation_claims (partner, mode, key_id, campaign_id, amount, claim_code, status, created_at) SELECT CAST(? AS text), CAST(? AS text), 'k', 'c', '1', 'code-${tag}-' || i, 'issued', CAST(? AS text) FROM s`,
    [...p, NOW],
  );
  const hook = await h.ctx.store.get<{ id: number }>(
    "INSERT INTO webhooks (partner, mode, event_type, target_url, secret_ciphertext, is_active, created_at, updated_at) VALUES (?, ?, 'salutes.credit', 'http://127.0.0.1:9/x', 'c', 0, ?, ?) RETURNING id",
    [...p, NOW, NOW],
  );
  await insertMany(
    n,
    `INSERT INTO events (public_id, partner, mode, event_type, data, created_at) SELECT 'evt-${tag}-' || i, CAST(? AS text), CAST(? AS text), 'salutes.credit', '{}', CAST(? AS text) FROM s`,
    [...p, NOW],
  );
  await h.ctx.store.run(
    `INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, created_at, updated_at) SELECT id, ?, partner, mode, 'succeeded', ?, ? FROM events WHERE public_id LIKE 'evt-${tag}-%'`,
    [hook!.id, NOW, NOW],
  );
  await h.ctx.store.run(
    "INSERT INTO webhook_attempts (delivery_id, attempt_no, started_at, duration_ms) SELECT id, 1, ?, 5 FROM webhook_deliveries WHERE webhook_id = ?",
    [NOW, hook!.id],
  );
}

/** An app with partner Acme's sandbox opened (its fixtures seeded): a sandbox key and fx-alice's id. */
async function openAcme() {
  h = await sandboxApp();
  const key = await sandboxKey(h);
  const opened = await sb(h, key, "GET", "/verify");
  const alice = (opened.body.fixtures.users as Array<{ id: number; external_id: string }>).find((u) => u.external_id === "fx-alice")!;
  return { key, aliceId: alice.id };
}

/** An app whose partner Acme has `n` practice rows of each kind in its sandbox, and live rows and another partner's sandbox beside it. */
async function largeSandbox(n: number) {
  const { key, aliceId } = await openAcme();
  await seedPractice("Acme", "sandbox", n, "practice", aliceId);
  await seedPractice("Acme", "live", 5, "live", null);
  await sb(h, await sandboxKey(h, { partner: "Globex" }), "GET", "/verify");
  return { key, before: await countsOf("Acme", "sandbox"), live: await countsOf("Acme", "live"), globex: await countsOf("Globex", "sandbox") };
}

describe("a reset larger than a batch", () => {
  test("over HTTP: every row deleted and counted, live rows and another partner untouched, the fixtures back", async () => {
    // More rows of each kind than one batch (DEFAULT_BATCH_ROWS, 2,000), and more users than one step (500).
    const { key, before, live, globex } = await largeSandbox(2_100);
    expect(before).toMatchObject({ users: 2_103, ledger_entries: 2 * 2_100 + 5, deliveries: 2_100, delivery_attempts: 2_100 });

    const r = await sb(h, key, "POST", "/reset");
    expect(r.status).toBe(200);
    expect(r.body.deleted).toEqual(before);
    expect(r.body.fixtures).toMatchObject({ seed_key_id: key.keyId, reset_count: 1 });
    expect(await countsOf("Acme", "live")).toEqual(live);
    expect(await countsOf("Globex", "sandbox")).toEqual(globex);
    const users = await rows<{ id: number; external_id: string }>(
      h,
      "SELECT id, external_id FROM partner_users WHERE partner = 'Acme' AND mode = 'sandbox' ORDER BY id",
    );
    expect(users.map((u) => u.external_id)).toEqual(["fx-alice", "fx-bob", "fx-carol"]);
    expect(users.map((u) => u.id)).toEqual(r.body.fixtures.user_ids);
    // Every balance left equals its ledger.
    const drift = await rows(
      h,
      `SELECT b.user_id FROM salutes_balances b WHERE b.partner = 'Acme' AND b.mode = 'sandbox'
       AND b.balance_minor <> (SELECT coalesce(sum(l.delta_minor), 0) FROM salutes_ledger l WHERE l.user_id = b.user_id)`,
    );
    expect(drift).toEqual([]);
  });

  test("through the port: the batches are statements of at most a batch, a step of users a short transaction; the transaction deletes what remains", async () => {
    const n = 25;
    const { key, before, live } = await largeSandbox(n);
    const store = new CountingStore(h.ctx.store);
    const batched = await deleteSandboxInBatches(store, ACME, { batchRows: 10 });
    expect(batched.salutes_ledger + batched.partner_users).toBe(before.ledger_entries! + before.users! - 3);

    // Each table's batches: DELETEs outside any transaction, each of at most 10 rows (its LIMIT), as many as its rows
    // need; deliveries with their attempts in transactions of 10 deliveries.
    const batchesOf = (table: string) =>
      store.runs.filter((s) => s.sql.startsWith(`DELETE FROM ${table} WHERE rowid IN`) || s.sql.startsWith(`DELETE FROM ${table} WHERE ctid`));
    for (const [table, rowsOf] of [
      ["salutes_ledger", before.ledger_entries!],
      ["events", before.events!],
      ["donation_claims", before.donation_claims!],
      ["wallet_links", before.wallets!],
    ] as const) {
      const sent = batchesOf(table);
      expect({ table, limits: [...new Set(sent.map((s) => s.params.at(-1)))], inTx: sent.some((s) => s.inTx) }).toEqual({ table, limits: [10], inTx: false });
      expect(sent.length).toBeGreaterThanOrEqual(Math.ceil(rowsOf / 10));
    }
    const deliveryBatches = store.runs.filter((s) => s.sql.startsWith("DELETE FROM webhook_deliveries WHERE id"));
    expect(deliveryBatches.length).toBe(Math.ceil((n + 1) / 10));
    expect(deliveryBatches.every((s) => s.inTx)).toBe(true);
    // The users go a step of at most 10 at a time (the fixture users stay), each step in a transaction of its own.
    const userSteps = store.runs.filter((s) => s.sql.startsWith("DELETE FROM partner_users WHERE id"));
    expect(userSteps.length).toBe(Math.ceil((n + 3) / 10));
    for (const s of userSteps) {
      expect(s.inTx).toBe(true);
      expect(String(s.params[0]).split(",").length).toBeLessThanOrEqual(10);
    }

    // What the batches left for the transaction: the fixture users with their balances, and the webhook.
    expect(await countsOf("Acme", "sandbox")).toEqual({ ...Object.fromEntries(Object.keys(COUNTED).map((k) => [k, 0])), users: 3, balances: 3, webhooks: 1 });
    // A write between the batches and the transaction (a new user, a credit to fx-alice) is the transaction's to delete.
    expect((await sb(h, key, "POST", "/users", { body: { external_id: "meanwhile" } })).status).toBe(201);
    expect((await sb(h, key, "POST", "/salutes/credit", { body: {} })).status).toBe(200);
    const left = await countsOf("Acme", "sandbox");
    expect(left).toMatchObject({ users: 4, ledger_entries: 1 });

    store.reset();
    const answer = await store.tx((t) => finishReset(t, h.ctx, ACME, key.keyId, batched));
    const byTable = Object.fromEntries(
      Object.keys(COUNTED).map((k) => [k, before[k]! + left[k]! - (k === "users" || k === "balances" ? 3 : k === "webhooks" ? 1 : 0)]),
    );
    expect(answer.deleted).toEqual(byTable as typeof answer.deleted);
    expect(answer.fixtures.users.map((u) => u.external_id)).toEqual(["fx-alice", "fx-bob", "fx-carol"]);
    expect(await countsOf("Acme", "live")).toEqual(live);
  });

  test("no statement of the batches reads a whole table: each finds its rows down an index", async () => {
    // The foreign keys' own checks need these too: without an index on webhook_deliveries.event_id each event deleted
    // read every delivery (20,000 sandbox events beside 100,000 deliveries: 82 s on SQLite), and without one on
    // salutes_conversions.ledger_entry_id each entry deleted read every conversion (~1 s a batch beside 20,000).
    const { aliceId } = await openAcme();
    // (Both made by migration 0034 / postgres 0010.)
    await seedPractice("Acme", "sandbox", 25, "practice", aliceId);
    const store = new CountingStore(h.ctx.store);
    await deleteSandboxInBatches(store, ACME, { batchRows: 10 });
    const distinct = [...new Map(store.sent.map((s) => [s.sql, s])).values()];
    const plans = await Promise.all(distinct.map(async (s) => ({ sql: s.sql, full: fullReads(await planOf(h, s.sql, s.params)) })));
    expect(plans.filter((p) => p.full.length > 0)).toEqual([]);
  });
});

describe("resets on two instances", () => {
  test("their batches side by side: no failure, each row deleted and counted once, one reset's fixtures remain", async () => {
    // Two instances have a turn each (takeResetTurn is per instance): their batches run at once over one database (on
    // PostgreSQL on two connections), then their transactions take turns on the fixture row.
    const { key, before } = await largeSandbox(40);
    const [a, b] = await Promise.all([
      deleteSandboxInBatches(h.ctx.store, ACME, { batchRows: 10 }),
      deleteSandboxInBatches(h.ctx.store, ACME, { batchRows: 10 }),
    ]);
    const answers = await Promise.all([a, b].map((batched) => h.ctx.store.tx((t) => finishReset(t, h.ctx, ACME, key.keyId, batched))));
    const [first, second] = answers.sort((x, y) => x.fixtures.reset_count - y.fixtures.reset_count);
    // Together they deleted the sandbox once, and the second also the first's fixtures: as many rows as the second's
    // fixtures left now (one plan, one key).
    const fixtures = await countsOf("Acme", "sandbox");
    expect(fixtures).toMatchObject({ users: 3, deliveries: 0, delivery_attempts: 0, donation_claims: 0 });
    const together = Object.fromEntries(
      Object.keys(COUNTED).map((k) => [k, (first!.deleted as Record<string, number>)[k]! + (second!.deleted as Record<string, number>)[k]!]),
    );
    expect(together).toEqual(Object.fromEntries(Object.keys(COUNTED).map((k) => [k, before[k]! + fixtures[k]!])));
    const users = await rows<{ id: number }>(h, "SELECT id FROM partner_users WHERE partner = 'Acme' AND mode = 'sandbox' ORDER BY id");
    expect(users.map((u) => u.id)).toEqual(second!.fixtures.user_ids);
  });
});

describe("replays and turns", () => {
  test("a replay of the Idempotency-Key answers the stored response and deletes nothing", async () => {
    h = await sandboxApp();
    const key = await sandboxKey(h);
    const first = await sb(h, key, "POST", "/reset", { idempotencyKey: "reset-1" });
    expect(first.status).toBe(200);
    expect((await sb(h, key, "POST", "/users", { body: { external_id: "kept" } })).status).toBe(201);
    const again = await sb(h, key, "POST", "/reset", { idempotencyKey: "reset-1" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: "idempotency_replay", original_status: 200, original_response: first.body });
    expect(await countWhere(h, "partner_users", "partner = 'Acme' AND mode = 'sandbox'")).toBe(4);
    expect(await rows(h, "SELECT reset_count FROM sandbox_fixtures WHERE partner = 'Acme'")).toEqual([{ reset_count: 1 }]);
  });

  test("two resets of a large sandbox at once take turns: the first deletes it all, the second the first's fixtures", async () => {
    const { key, before } = await largeSandbox(30);
    const other = await sandboxKey(h);
    const [a, b] = await Promise.all([sb(h, key, "POST", "/reset"), sb(h, other, "POST", "/reset")]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const [first, second] = [a.body, b.body].sort((x, y) => x.fixtures.reset_count - y.fixtures.reset_count);
    expect(first!.deleted).toEqual(before);
    expect(second!.deleted).toMatchObject({ users: 3, balances: 3, webhooks: 0, deliveries: 0 });
    const users = await rows<{ id: number }>(h, "SELECT id FROM partner_users WHERE partner = 'Acme' AND mode = 'sandbox' ORDER BY id");
    expect(users.map((u) => u.id)).toEqual(second!.fixtures.user_ids);
  });
});
