// Migration 0029 (PostgreSQL 0005): request_log_key_at_idx keeps only rows with a partner key, and webhook_attempts
// lost its index on delivery_id alone. What reads through them must still find them, on either engine: the per-key
// usage windows (`key_ref = (…)`, `key_ref IN (…)`) and a delivery's attempts (attempts_delivery_no_idx).
import { afterEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { testEngine } from "../support/engine";

let h = undefined as unknown as TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

const pg = testEngine() === "postgres";

/** The plan of `sql` as one line of text: SQLite's EXPLAIN QUERY PLAN details, PostgreSQL's EXPLAIN with no sequential scans allowed. */
async function planOf(sql: string, params: Array<string | number>): Promise<string> {
  if (!pg) return (await h.ctx.store.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params)).map((r) => r.detail).join(" | ");
  // The tables here are small: without this PostgreSQL reads them whole, and the plan would say nothing of the index.
  return h.ctx.store.tx(async (t) => {
    await t.run("SET LOCAL enable_seqscan = off");
    return (await t.all<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, params)).map((r) => r["QUERY PLAN"]).join(" | ");
  });
}

async function indexes(table: string): Promise<Record<string, string>> {
  const rows = pg
    ? await h.ctx.store.all<{ name: string; def: string }>("SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = ?", [table])
    : await h.ctx.store.all<{ name: string; def: string }>("SELECT name, coalesce(sql, '') AS def FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", [
        table,
      ]);
  return Object.fromEntries(rows.map((r) => [r.name, r.def]));
}

test("a request without a partner key writes no entry in request_log_key_at_idx, and the per-key windows still read through it", async () => {
  h = await openTestApp();
  const def = (await indexes("request_log")).request_log_key_at_idx!;
  expect(def).toMatch(/WHERE \(?key_ref IS NOT NULL\)?/i);
  // Mostly public traffic (no key), a little from two keys, over one day.
  for (let i = 0; i < 600; i++) {
    const keyId = i % 20 === 0 ? "hk_live_index_a" : i % 20 === 1 ? "hk_live_index_b" : null;
    h.ctx.requestLog.record({
      at: new Date(Date.UTC(2026, 10, 27, 0, 0, i * 2)).toISOString(),
      method: "GET",
      route: keyId ? "/api/partner/capabilities" : "/api/public/system-status/policy",
      status: 200,
      latencyUs: 100 + i,
      partnerKeyId: keyId,
      clientIp: null,
      requestId: `req_${String(i).padStart(24, "0")}`,
      errorCode: null,
    });
  }
  await h.ctx.requestLog.flush();
  await h.ctx.store.run("ANALYZE");
  const since = "2026-11-26T00:00:00.000Z";
  // src/http/request-log/latency.ts and src/partner/usage-service.ts: one key's window.
  const one = "SELECT route, latency_us FROM request_log WHERE key_ref = (SELECT ref FROM request_log_keys WHERE key_id = ?) AND at > ? AND at <= ?";
  expect(await planOf(one, ["hk_live_index_a", since, "2026-11-28T00:00:00.000Z"])).toContain("request_log_key_at_idx");
  // src/sandbox/store.ts: several keys' traffic.
  const several = "SELECT count(*) AS n FROM request_log WHERE key_ref IN (SELECT ref FROM request_log_keys WHERE key_id IN (?, ?)) AND at > ?";
  expect(await planOf(several, ["hk_live_index_a", "hk_live_index_b", since])).toContain("request_log_key_at_idx");
  // And they count what they counted before: 30 rows of each key.
  expect((await h.ctx.store.get<{ n: number }>(several, ["hk_live_index_a", "hk_live_index_b", since]))!.n).toBe(60);
  expect(
    (await h.ctx.store.all(one.replace("SELECT route, latency_us", "SELECT count(*) AS n"), ["hk_live_index_a", since, "2026-11-28T00:00:00.000Z"]))[0],
  ).toEqual({ n: 30 });
});

test("webhook_attempts has one index by delivery, and a delivery's attempts are read through it", async () => {
  h = await openTestApp();
  const names = Object.keys(await indexes("webhook_attempts"));
  expect(names).not.toContain("attempts_delivery_idx");
  expect(names).toContain("attempts_delivery_no_idx");
  // src/webhooks/lease-store.ts: the next attempt's number, and the latest attempt of each delivery.
  expect(await planOf("SELECT coalesce(max(attempt_no), 0) + 1 AS n FROM webhook_attempts WHERE delivery_id = ?", [1])).toContain("attempts_delivery_no_idx");
  expect(await planOf("SELECT max(id) AS id FROM webhook_attempts WHERE delivery_id IN (?, ?) GROUP BY delivery_id", [1, 2])).toContain(
    "attempts_delivery_no_idx",
  );
});
