// The hourly rollups (src/http/request-log/rollup.ts): written by the flush in the same transaction as the rows,
// equal to a GROUP BY over request_log after real requests through the app, and rebuilt by the catch-up when a
// database has request_log rows the rollups never saw.
// On the engine HERALD_TEST_ENGINE names (the rollups and the catch-up run through the storage port on both).
import { afterEach, expect, test } from "bun:test";
import type { Queryable } from "../../src/db/port";
import { catchUpRollups, RollupCatchUp } from "../../src/http/request-log/catchup";
import { clientPrefix } from "../../src/http/request-log/rollup";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createKey, signedInit } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

/** The test's own /24 and /48, written independently of the code under test (IPv6 inputs here are fully written out). */
function prefixOf(ip: string | null): string {
  if (!ip) return "";
  const v4 = ip.replace(/^::ffff:/, "");
  if (/^\d+\.\d+\.\d+\.\d+$/.test(v4)) return `${v4.split(".").slice(0, 3).join(".")}.0/24`;
  const parts = ip
    .split(":")
    .slice(0, 3)
    .map((p) => Number.parseInt(p, 16).toString(16));
  return `${parts.join(":")}::/48`;
}

/** Both rollups recomputed from request_log with GROUP BY, prefixes folded in TypeScript. */
async function expected(q: Queryable) {
  const hourly = await q.all(
    "SELECT substr(at, 1, 13) AS hour, count(*) AS requests, count(*) FILTER (WHERE status = 403) AS forbidden FROM request_log GROUP BY 1 ORDER BY 1",
  );
  const raw = await q.all<{ hour: string; route: string; key_id: string; ip: string | null; n: number }>(
    `SELECT substr(r.at, 1, 13) AS hour, r.route, coalesce(k.key_id, '') AS key_id, r.client_ip AS ip, count(*) AS n FROM request_log r
      LEFT JOIN request_log_keys k ON k.ref = r.key_ref WHERE r.status = 403 GROUP BY 1, 2, 3, 4`,
  );
  const folded = new Map<string, number>();
  for (const r of raw) {
    const id = JSON.stringify([r.hour, r.route, r.key_id, prefixOf(r.ip)]);
    folded.set(id, (folded.get(id) ?? 0) + r.n);
  }
  const forbidden = [...folded].map(([id, count]) => {
    const [hour, route, partner_key_id, client_prefix] = JSON.parse(id) as string[];
    return { hour, route, partner_key_id, client_prefix, count };
  });
  return { hourly, forbidden: sortRows(forbidden) };
}

const sortRows = <T extends Record<string, unknown>>(rows: T[]) =>
  rows.sort((a, b) => JSON.stringify(Object.values(a)).localeCompare(JSON.stringify(Object.values(b))));

async function actual(q: Queryable) {
  return {
    hourly: await q.all("SELECT hour, requests, forbidden FROM request_log_hourly ORDER BY hour"),
    forbidden: sortRows(await q.all<Record<string, unknown>>("SELECT hour, route, partner_key_id, client_prefix, count FROM request_log_403_hourly")),
  };
}

test("after real requests through the app, the rollups equal a GROUP BY over request_log", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-03-01T10:59:00.000Z"), env: { TRUST_PROXY: "1" } });
  const reader = await createKey(h, { scopes: ["read"] });
  const ips = ["203.0.113.7", "203.0.113.200", "198.51.100.3", "2001:db8:1:2::5", "2001:0db8:0001:ffff:0:0:0:1", "::ffff:192.0.2.44"];
  for (let round = 0; round < 3; round++) {
    for (const [i, ip] of ips.entries()) {
      const xff = { "x-forwarded-for": ip };
      await h.request("/admin/backups", { headers: xff }); // 403: no admin token
      await h.request("/admin/ops/403-digest", { headers: xff }); // 403
      await h.request("/api/partner/errors.json", { headers: xff }); // 200
      await h.request("/no/such/route", { headers: xff }); // 404
      // A signed key without the credit scope: 403 with the partner key on the row.
      const init = signedInit(h, reader, "POST", "/api/salutes/credit", { body: { user_id: "1", amount: 1, reason: "t", source: "t" }, headers: xff });
      expect((await h.request("/api/salutes/credit", init)).status).toBe(403);
      await Bun.sleep(0); // let the after-response hook record the row before the clock moves
      if (i % 2 === 0) h.clock.advanceSeconds(30); // cross into the next hour part-way through
    }
    await Bun.sleep(0);
    await h.ctx.requestLog.flush();
  }
  const store = h.ctx.store;
  const keyed = (await store.get<{ n: number }>("SELECT count(*) AS n FROM request_log_403_hourly WHERE partner_key_id = ?", [reader.keyId]))!;
  expect(keyed.n).toBeGreaterThan(0);
  const hours = (await store.all<{ hour: string }>("SELECT hour FROM request_log_hourly ORDER BY hour")).map((r) => r.hour);
  expect(hours).toEqual(["2026-03-01T10", "2026-03-01T11"]);
  expect(await actual(store)).toEqual(await expected(store));
  expect(new Set(((await actual(store)).forbidden as Array<{ client_prefix: string }>).map((r) => r.client_prefix))).toEqual(
    new Set(["203.0.113.0/24", "198.51.100.0/24", "2001:db8:1::/48", "192.0.2.0/24"]),
  );
});

test("clientPrefix: IPv4 /24, IPv6 /48 in RFC 5952 form, mapped IPv4, and nothing for junk", () => {
  expect(clientPrefix("203.0.113.77")).toBe("203.0.113.0/24");
  expect(clientPrefix("2001:0db8:0000:0000:0000:0000:0000:0001")).toBe("2001:db8::/48");
  expect(clientPrefix("2001:db8:abcd:12::1")).toBe("2001:db8:abcd::/48");
  expect(clientPrefix("::ffff:10.1.2.3")).toBe("10.1.2.0/24");
  expect(clientPrefix(null)).toBe("");
  expect(clientPrefix("not an ip")).toBe("");
});

let raw = 0;
async function insertRaw(q: Queryable, at: string, status: number, ip: string, route = "/api/x") {
  await q.run("INSERT INTO request_log (at, method, route, status, latency_us, key_ref, client_ip, request_id) VALUES (?, 'GET', ?, ?, 1, NULL, ?, ?)", [
    at,
    route,
    status,
    ip,
    `raw_${++raw}`,
  ]);
}

test("the catch-up rebuilds missing and partial hours in bounded steps, and leaves pruned hours alone", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-03-01T12:00:00.000Z") });
  const store = h.ctx.store;
  // Rows written before the rollups existed: 30 hours, 20 rows each, one in four a 403.
  await store.tx(async (t) => {
    for (let hr = 0; hr < 30; hr++) {
      const base = Date.parse("2026-02-27T00:00:00.000Z") + hr * 3_600_000;
      for (let i = 0; i < 20; i++)
        await insertRaw(t, new Date(base + i * 60_000).toISOString(), i % 4 === 0 ? 403 : 200, `198.51.100.${i}`, i % 8 === 0 ? "/a" : "/b");
    }
  });
  // The last of those hours then also gets rows through the flush (which rolls up only its own rows: partial).
  h.ctx.requestLog.record({
    at: "2026-02-28T05:30:00.000Z",
    method: "GET",
    route: "/a",
    status: 403,
    latencyUs: 1,
    partnerKeyId: null,
    clientIp: "203.0.113.1",
    requestId: "r1",
    errorCode: null,
  });
  await h.ctx.requestLog.flush();
  expect(await store.get("SELECT requests FROM request_log_hourly WHERE hour = '2026-02-28T05'")).toEqual({ requests: 1 });

  const c = new RollupCatchUp(store);
  const first = await c.step({ scanHours: 6, maxRows: 30 });
  expect(first.done).toBe(false);
  expect(first.rebuiltHours).toBe(2); // stopped at the row budget: 21 + 20 rows
  let steps = 1;
  let p = first;
  while (!p.done) {
    p = await c.step({ scanHours: 6, maxRows: 30 });
    steps++;
  }
  expect(p).toMatchObject({ scannedHours: 30, rebuiltHours: 30, rebuiltRows: 601, done: true });
  expect(steps).toBeGreaterThan(10);
  expect(await actual(store)).toEqual(await expected(store));

  // A second pass finds nothing to do; a pruned hour (rollup counts more than request_log keeps) is left alone.
  await store.run("DELETE FROM request_log WHERE at < '2026-02-27T00:10:00.000Z'");
  expect(await catchUpRollups(store)).toMatchObject({ rebuiltHours: 0, done: true });
  expect(await store.get("SELECT requests FROM request_log_hourly WHERE hour = '2026-02-27T00'")).toEqual({ requests: 20 });
});

test("an empty request_log needs no catch-up", async () => {
  h = await openTestApp();
  expect(await catchUpRollups(h.ctx.store)).toEqual({ scannedHours: 0, rebuiltHours: 0, rebuiltRows: 0, rebuiltDays: 0, done: true });
});

test("a rebuild and a flush of the same hour at once: each row is counted once (the rebuild locks the hour first)", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-03-01T12:00:00.000Z") });
  const store = h.ctx.store;
  // An hour written before the rollups (no rollup row), then rebuilt while the flush writes more rows of that hour.
  await store.tx(async (t) => {
    for (let i = 0; i < 10; i++) await insertRaw(t, `2026-03-01T09:${String(i).padStart(2, "0")}:00.000Z`, i < 3 ? 403 : 200, "198.51.100.1");
  });
  for (let i = 0; i < 5; i++) {
    h.ctx.requestLog.record({
      at: `2026-03-01T09:3${i}:00.000Z`,
      method: "GET",
      route: "/b",
      status: 403,
      latencyUs: 1,
      partnerKeyId: null,
      clientIp: "203.0.113.9",
      requestId: `f${i}`,
      errorCode: null,
    });
  }
  const [rebuilt] = await Promise.all([catchUpRollups(store), h.ctx.requestLog.flush()]);
  expect(rebuilt.done).toBe(true);
  expect(await store.get("SELECT requests, forbidden FROM request_log_hourly WHERE hour = '2026-03-01T09'")).toEqual({ requests: 15, forbidden: 8 });
  expect(await actual(store)).toEqual(await expected(store));
});
