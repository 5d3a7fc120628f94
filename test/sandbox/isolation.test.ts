import { afterEach, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import bs58 from "bs58";
import type { TestApp } from "../support/app";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { startReceiver, type Receiver } from "../support/receiver";
import { drain, fixtureUsers, sandboxApp, sandboxKey, sb } from "./support";

let h = undefined as unknown as TestApp;
let rx: Receiver | undefined;
afterEach(async () => {
  rx?.stop();
  rx = undefined;
  await h?.close();
  h = undefined as unknown as TestApp;
});

const sol = (n: number) => bs58.encode(new Uint8Array(32).fill(n));
const all = (sql: string, ...args: string[]) => h.ctx.store.all<Record<string, unknown>>(sql, args);

/**
 * Which rows of a table belong to live. Tables with a mode column: mode = 'live'. Tables keyed by a key id or a
 * delivery: those of live keys / live deliveries. request_log (every request's traffic line), sandbox_fixtures
 * and partner_keys_version (a counter of key changes, sandbox keys' last_used_at included, that tells the key
 * cache to re-read) are bookkeeping. EVERY other table must not change at all.
 */
function liveScope(table: string, columns: string[]): string | null {
  if (table === "request_log" || table === "sandbox_fixtures" || table === "partner_keys_version") return null;
  if (columns.includes("mode")) return "mode = 'live'";
  if (table === "partner_nonces" || table === "idempotency_records") return "key_id IN (SELECT key_id FROM partner_keys WHERE mode = 'live')";
  if (table === "webhook_attempts") return "delivery_id IN (SELECT id FROM webhook_deliveries WHERE mode = 'live')";
  return "1 = 1";
}

/** Every table of the schema and its columns, from the engine's own catalog (the migrations' ledger left out). */
async function schemaTables(): Promise<Map<string, string[]>> {
  const catalog =
    h.ctx.store.dialect === "postgres"
      ? `SELECT c.table_name AS t, c.column_name AS c FROM information_schema.columns c
         JOIN information_schema.tables s ON s.table_schema = c.table_schema AND s.table_name = c.table_name
         WHERE c.table_schema = current_schema() AND s.table_type = 'BASE TABLE' AND c.table_name <> 'herald_migrations'
         ORDER BY c.table_name, c.ordinal_position`
      : `SELECT m.name AS t, p.name AS c FROM sqlite_master m JOIN pragma_table_info(m.name) p
         WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '__drizzle_migrations' ORDER BY m.name, p.cid`;
  const out = new Map<string, string[]>();
  for (const r of await all(catalog)) out.set(r.t as string, [...(out.get(r.t as string) ?? []), r.c as string]);
  return out;
}

/** A table's rows as one string, independent of row order (PostgreSQL has no rowid to order by). */
const digestOf = (rows: Array<Record<string, unknown>>) =>
  createHash("sha256")
    .update(JSON.stringify(rows.map((r) => JSON.stringify(r)).sort()))
    .digest("hex");

/** Row count and sha256 of every live row, per table. */
async function liveChecksums(): Promise<Record<string, { rows: number; sha256: string }>> {
  const out: Record<string, { rows: number; sha256: string }> = {};
  for (const [t, columns] of await schemaTables()) {
    const where = liveScope(t, columns);
    if (where === null) continue;
    const rows = await all(`SELECT * FROM ${t} WHERE ${where}`);
    out[t] = { rows: rows.length, sha256: digestOf(rows) };
  }
  return out;
}

const sandboxChecksum = async () => {
  const tables = ["partner_users", "wallet_links", "salutes_ledger", "webhooks", "webhook_deliveries", "donation_claims"];
  const parts: string[] = [];
  for (const t of tables) parts.push(digestOf(await all(`SELECT * FROM ${t} WHERE mode = 'sandbox'`)));
  return parts.join(":");
};

/** A live partner with users, wallets, a ledger, a claim (queued email), webhooks and delivered events. */
async function liveState(live: TestKey) {
  const u1 = await signedJson(h, live, "POST", "/api/partner/users", { body: { external_id: "fx-alice", username: "fx_alice", wallet_address: sol(1) } });
  const u2 = await signedJson(h, live, "POST", "/api/partner/users", { body: { external_id: "live-2", email: "two@example.com" } });
  const hook = await signedJson(h, live, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: rx!.url("/live") } });
  await signedJson(h, live, "POST", "/api/salutes/credit", { body: { user_id: String(u1.body.user.id), amount: 50, reason: "live", source: "live-app" } });
  await signedJson(h, live, "POST", "/api/salutes/debit", { body: { user_id: String(u1.body.user.id), amount: 5, reason: "live", source: "live-app" } });
  await signedJson(h, live, "POST", "/api/partner/donation-claim", { body: { campaign_id: "live", amount: "3", recipient: { email: "two@example.com" } } });
  const test = await signedJson(h, live, "POST", `/api/partner/webhooks/${hook.body.webhook.id}/test`);
  await drain(h);
  return {
    userId: u1.body.user.id as number,
    user2: u2.body.user.id as number,
    hookId: hook.body.webhook.id as number,
    deliveryId: test.body.delivery_id as number,
  };
}

/** Every sandbox mutation, plus attempts on live ids (all refused as unknown). */
async function everySandboxMutation(key: TestKey, live: Awaited<ReturnType<typeof liveState>>) {
  const ok = (r: { status: number; body: Record<string, unknown> }, status = 200) => {
    expect(r.status).toBe(status);
    expect(r.body.live_side_effects_performed).toBe(false);
  };
  const { alice, bob } = await fixtureUsers(h, key);
  const created = await sb(h, key, "POST", "/users", { body: { external_id: "live-2", email: "two@example.com", wallet_address: sol(1) } });
  ok(created, 201);
  ok(await sb(h, key, "PATCH", `/users/${created.body.user.id}`, { body: { display_name: "Practice" } }));
  ok(await sb(h, key, "POST", `/users/${alice.id}/wallets`, { body: { wallet_address: sol(2), verified: true } }));
  ok(await sb(h, key, "POST", "/salutes/credit", { body: { user_id: String(bob.id), amount: 7, reason: "practice", source: "sandbox" } }));
  ok(await sb(h, key, "POST", "/salutes/debit", { body: { user_id: String(bob.id), amount: 2, reason: "practice", source: "sandbox" } }));
  ok(await sb(h, key, "POST", "/donation-claim", { body: { campaign_id: "live", amount: "3", recipient: { email: "two@example.com" }, user_id: alice.id } }));
  const hook = await sb(h, key, "POST", "/webhooks", { body: { event_type: "salutes.credit", target_url: rx!.url("/sandbox") } });
  ok(hook, 201);
  const tested = await sb(h, key, "POST", `/webhooks/${hook.body.webhook.id}/test`);
  ok(tested);
  ok(await sb(h, key, "POST", "/salutes/credit", { body: { user_id: String(alice.id), amount: 1, reason: "practice", source: "sandbox" } }));
  await drain(h);
  ok(await sb(h, key, "POST", "/webhook-events/replay", { body: { event_ids: [tested.body.delivery_id, live.deliveryId] } }));
  ok(await sb(h, key, "POST", "/webhook-simulator/run", { body: { scenario_id: "claim_created", webhook_id: hook.body.webhook.id } }));
  ok(await sb(h, key, "DELETE", `/webhooks/${hook.body.webhook.id}`));
  await drain(h);

  // Live ids through sandbox routes: every one is unknown here.
  expect((await sb(h, key, "PATCH", `/users/${live.userId}`, { body: { display_name: "Hijack" } })).status).toBe(404);
  expect((await sb(h, key, "POST", `/users/${live.user2}/wallets`, { body: { wallet_address: sol(3) } })).status).toBe(404);
  expect((await sb(h, key, "POST", "/salutes/credit", { body: { user_id: String(live.userId), amount: 1, reason: "x", source: "x" } })).status).toBe(404);
  expect((await sb(h, key, "POST", "/salutes/debit", { body: { user_id: String(live.userId), amount: 1, reason: "x", source: "x" } })).status).toBe(404);
  expect(
    (await sb(h, key, "POST", "/donation-claim", { body: { campaign_id: "x", amount: 1, recipient: { email: "a@example.com" }, user_id: live.userId } }))
      .status,
  ).toBe(404);
  expect((await sb(h, key, "POST", `/webhooks/${live.hookId}/test`)).status).toBe(404);
  expect((await sb(h, key, "DELETE", `/webhooks/${live.hookId}`)).status).toBe(404);
  expect((await sb(h, key, "POST", "/webhook-simulator/run", { body: { scenario_id: "claim_created", webhook_id: live.hookId } })).status).toBe(404);
  const replay = await sb(h, key, "POST", "/webhook-events/replay", { body: { event_ids: [live.deliveryId] } });
  expect(replay.body.results[0]).toMatchObject({ replayed: false, error: "not_found" });

  ok(await sb(h, key, "POST", "/reset"));
  ok(
    await sb(h, key, "POST", "/salutes/credit", {
      body: { user_id: String((await fixtureUsers(h, key)).bob.id), amount: 1, reason: "after_reset", source: "sandbox" },
    }),
  );
  await drain(h);
}

test("THE ISOLATION PROOF: every sandbox mutation leaves every live row (and every non-partner table) byte-identical", async () => {
  h = await sandboxApp();
  rx = startReceiver();
  const live = await createKey(h, { partner: "Acme" });
  const liveIds = await liveState(live);
  const liveReads = async () => ({
    users: (await signedJson(h, live, "GET", "/api/partner/users?include_wallets=1")).body.users,
    balance: (await signedJson(h, live, "GET", `/api/salutes/balance?user_id=${liveIds.userId}`)).body.balance,
    ledger: (await signedJson(h, live, "GET", `/api/salutes/ledger?user_id=${liveIds.userId}`)).body.ledger,
    webhooks: (await signedJson(h, live, "GET", "/api/partner/webhooks")).body.webhooks,
    events: (await signedJson(h, live, "GET", "/api/partner/webhook-events")).body.events,
  });
  const readsBefore = await liveReads();
  const liveReceived = rx.received.filter((r) => r.path === "/live").length;

  // The same partner name in sandbox: only the mode separates the two.
  const key = await sandboxKey(h, { partner: "Acme" });
  const before = await liveChecksums();
  const sandboxBefore = await sandboxChecksum();
  await everySandboxMutation(key, liveIds);
  const after = await liveChecksums();

  expect(Object.keys(before).length).toBeGreaterThan(20);
  expect(before.partner_users!.rows).toBe(2);
  expect(before.email_outbox!.rows).toBe(1);
  expect(before.webhook_deliveries!.rows).toBe(2); // the live credit and the live test
  expect(after).toEqual(before);
  // The sandbox really did change, and its deliveries really were sent — to the sandbox receiver only.
  expect(await sandboxChecksum()).not.toBe(sandboxBefore);
  expect(rx.received.filter((r) => r.path === "/sandbox").length).toBeGreaterThanOrEqual(2);
  expect(rx.received.filter((r) => r.path === "/live").length).toBe(liveReceived);
  for (const r of rx.received.filter((x) => x.path === "/sandbox")) expect(JSON.parse(r.rawBody).sandbox).toBe(true);
  // The live key's own view is unchanged too.
  expect(await liveReads()).toEqual(readsBefore);
});
