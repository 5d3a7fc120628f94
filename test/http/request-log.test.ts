import { afterEach, expect, test } from "bun:test";
import type { RequestLogEntry } from "../../src/http/request-log/log";
import { afterResponses, openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";

// The request-log writer on the storage port: these cases run on SQLite and, with HERALD_TEST_ENGINE=postgres, on
// PostgreSQL; every effect is read back through ctx.store. (The SQLite-only catch-up of the rollups is in
// request-log-rollup.test.ts, the key refs on one SQLite file in request-log-keys.test.ts.)

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Wait (bounded) until `n` requests are buffered: a console page's refusal is logged once its page is made. */
async function recorded(h: TestApp, n: number): Promise<void> {
  for (let i = 0; i < 200 && h.ctx.requestLog.pending < n; i++) await Bun.sleep(0);
  expect(h.ctx.requestLog.pending).toBe(n);
}

const count = async (h: TestApp) => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log"))!.n;

const sorted = <T extends Record<string, unknown>>(rows: T[]) =>
  rows
    .map((r) => [JSON.stringify(Object.values(r)), r] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => r);

const entry = (at: string, over: Partial<RequestLogEntry> = {}): RequestLogEntry => ({
  at,
  method: "GET",
  route: "/api/x",
  status: 200,
  latencyUs: 100,
  partnerKeyId: null,
  clientIp: "127.0.0.1",
  requestId: `req_${at}`,
  errorCode: null,
  ...over,
});

test("requests are buffered, then written in one batch, with route templates and error codes", async () => {
  h = await openTestApp();
  for (let i = 0; i < 5; i++) await h.request("/api/partner/errors.json", { headers: { "x-request-id": `batch-test-${i}-id` } });
  await h.request("/does/not/exist");
  await recorded(h, 6);
  expect(await count(h)).toBe(0); // nothing written on the request path
  expect(h.ctx.requestLog.pending).toBe(6);

  const batchesBefore = h.ctx.requestLog.flushedBatches;
  expect(await h.ctx.requestLog.flush()).toBe(6);
  expect(h.ctx.requestLog.flushedBatches).toBe(batchesBefore + 1);
  expect(await count(h)).toBe(6);

  const rows = await h.ctx.store.all<Record<string, any>>(
    "SELECT method, route, status, latency_us, request_id, error_code, client_ip FROM request_log ORDER BY id",
  );
  expect(rows[0]).toMatchObject({ method: "GET", route: "/api/partner/errors.json", status: 200, request_id: "batch-test-0-id", error_code: null });
  expect(rows[0]!.latency_us).toBeGreaterThanOrEqual(0);
  expect(rows[5]).toMatchObject({ route: "(unmatched)", status: 404, error_code: "not_found" });
});

test("a request is buffered when its answer is made, before the client reads it: answers, refusals, unmatched paths", async () => {
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
  const paths = ["/api/public/system-status/policy", "/api/public/system-status/incidents?hours=0", "/does/not/exist", "/api/partner/errors.json"];
  const statuses: number[] = [];
  for (const path of paths) {
    const before = h.ctx.requestLog.pending;
    // No wait of any kind between the answer and the count: no after-response hook is involved (src/http/core.ts).
    const res = await h.request(path);
    statuses.push(res.status);
    expect(h.ctx.requestLog.pending).toBe(before + 1);
  }
  expect(statuses).toEqual([200, 400, 404, 200]);
  await h.ctx.requestLog.flush();
  const rows = await h.ctx.store.all<{ route: string; status: number; error_code: string | null }>(
    "SELECT route, status, error_code FROM request_log ORDER BY id",
  );
  expect(rows).toEqual([
    { route: "/api/public/system-status/policy", status: 200, error_code: null },
    { route: "/api/public/system-status/incidents", status: 400, error_code: "invalid_query" },
    { route: "(unmatched)", status: 404, error_code: "not_found" },
    { route: "/api/partner/errors.json", status: 200, error_code: null },
  ]);
});

test("a row names its client where Herald read the address: a per-IP limit, a refusal; not an answer nothing needed it for", async () => {
  const clients = async (path: string) => {
    await h!.request(path);
    await afterResponses();
    await h!.ctx.requestLog.flush();
    return (await h!.ctx.store.all<{ client_ip: string | null }>("SELECT client_ip FROM request_log WHERE route = ? ORDER BY id", [path])).map(
      (r) => r.client_ip,
    );
  };
  // No per-IP limit: a public answer reads no address (src/http/request-state.ts), a refusal does.
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
  expect(await clients("/api/public/system-status/policy")).toEqual([null]);
  await h.request("/api/public/system-status/incidents?hours=0");
  await afterResponses();
  await h.ctx.requestLog.flush();
  expect(await h.ctx.store.all("SELECT status, client_ip FROM request_log WHERE route = ?", ["/api/public/system-status/incidents"])).toEqual([
    { status: 400, client_ip: "127.0.0.1" },
  ]);
  await h.close();
  // With the limit (the default), the limiter reads it, and the row keeps it.
  h = await openTestApp();
  expect(await clients("/api/public/system-status/policy")).toEqual(["127.0.0.1"]);
});

test("a size trigger flushes large bursts without waiting for the timer", async () => {
  // The public per-IP limit off: a thousand requests from one address would otherwise be refused after 90.
  h = await openTestApp({ env: { RATE_LIMIT_PUBLIC_API_PER_MIN: "0" } });
  const app = h;
  const batches = h.ctx.requestLog.flushedBatches;
  await Promise.all(Array.from({ length: 1000 }, () => app.request("/api/partner/errors.json")));
  // No flush() here: the 1,000th row recorded starts the write by itself (bounded wait for its commit).
  for (let i = 0; i < 400 && h.ctx.requestLog.flushedBatches === batches; i++) await Bun.sleep(5);
  expect(h.ctx.requestLog.flushedBatches).toBe(batches + 1);
  expect(h.ctx.requestLog.pending).toBe(0);
  expect(await count(h)).toBe(1000);
});

test("health probes are counted in metrics but not written to the request log", async () => {
  h = await openTestApp({ env: { METRICS_PUBLIC: "1" } });
  await h.request("/healthz");
  await h.request("/readyz");
  await Bun.sleep(0);
  expect(h.ctx.requestLog.pending).toBe(0);
  expect(await (await h.request("/metrics")).text()).toContain('route="/healthz",status="200"} 1');
});

test("stop() flushes what is buffered (graceful shutdown loses nothing)", async () => {
  h = await openTestApp();
  await h.request("/api/partner/errors.json");
  await recorded(h, 1);
  await h.ctx.requestLog.stop();
  expect(await count(h)).toBe(1);
});

test("a flush joins one that has not begun, and waits for one in progress: awaiting it includes every earlier row", async () => {
  h = await openTestApp();
  const log = h.ctx.requestLog;
  for (let i = 0; i < 3; i++) log.record(entry(`2026-01-01T00:00:0${i}.000Z`));
  const first = log.flush();
  log.record(entry("2026-01-01T00:00:03.000Z"));
  expect(log.flush()).toBe(first); // not begun yet: the same write, which takes the row just recorded too
  expect(await first).toBe(4);

  const order: string[] = [];
  log.record(entry("2026-01-01T00:00:04.000Z"));
  const second = log.flush().then((n) => void order.push(`second:${n}`));
  await Promise.resolve(); // the second write has begun (its rows left the buffer)
  expect(log.pending).toBe(0);
  log.record(entry("2026-01-01T00:00:05.000Z"));
  const third = log.flush().then((n) => void order.push(`third:${n}`));
  await third;
  expect(order).toEqual(["second:1", "third:1"]);
  await second;
  expect(await count(h)).toBe(6);
});

test("the flush writes the hourly rollups in its transaction, equal to a GROUP BY over request_log", async () => {
  h = await openTestApp({ clock: new FakeClock("2026-03-01T11:00:00.000Z") });
  const log = h.ctx.requestLog;
  const ips = ["203.0.113.7", "203.0.113.200", "198.51.100.3", "2001:db8:1:2::5", "::ffff:192.0.2.44", null];
  let n = 0;
  for (const hour of ["2026-03-01T10", "2026-03-01T11"]) {
    for (const [i, ip] of ips.entries()) {
      for (const [route, status, key] of [
        ["/admin/backups", 403, null],
        ["/api/salutes/credit", 403, "hk_live_a"],
        ["/api/salutes/credit", 403, "hk_live_b"],
        ["/api/partner/errors.json", 200, "hk_live_a"],
        ["(unmatched)", 404, null],
      ] as const) {
        log.record(
          entry(`${hour}:${String(10 + i).padStart(2, "0")}:${String(n++ % 60).padStart(2, "0")}.000Z`, { route, status, partnerKeyId: key, clientIp: ip }),
        );
      }
    }
    expect(await log.flush()).toBe(ips.length * 5); // one batch per hour; the second adds to nothing of the first
  }
  // Once more into the first hour: the upserts add to the counts already there.
  log.record(entry("2026-03-01T10:59:59.000Z", { route: "/admin/backups", status: 403, clientIp: "203.0.113.9" }));
  expect(await log.flush()).toBe(1);

  const hourly = await h.ctx.store.all("SELECT hour, requests, forbidden FROM request_log_hourly ORDER BY hour");
  expect(hourly).toEqual([
    { hour: "2026-03-01T10", requests: 31, forbidden: 19 },
    { hour: "2026-03-01T11", requests: 30, forbidden: 18 },
  ]);
  const grouped = await h.ctx.store.all(
    `SELECT substr(at, 1, 13) AS hour, count(*) AS requests, count(*) FILTER (WHERE status = 403) AS forbidden
       FROM request_log GROUP BY substr(at, 1, 13) ORDER BY 1`,
  );
  expect(grouped).toEqual(hourly);
  // Sorted here, not by ORDER BY: PostgreSQL's collation may order text unlike SQLite's bytes.
  const forbidden = sorted(
    await h.ctx.store.all<Record<string, unknown>>(
      "SELECT route, partner_key_id, client_prefix, count FROM request_log_403_hourly WHERE hour = '2026-03-01T10'",
    ),
  );
  expect(forbidden).toEqual(
    sorted([
      { route: "/admin/backups", partner_key_id: "", client_prefix: "", count: 1 },
      { route: "/admin/backups", partner_key_id: "", client_prefix: "192.0.2.0/24", count: 1 },
      { route: "/admin/backups", partner_key_id: "", client_prefix: "198.51.100.0/24", count: 1 },
      { route: "/admin/backups", partner_key_id: "", client_prefix: "2001:db8:1::/48", count: 1 },
      { route: "/admin/backups", partner_key_id: "", client_prefix: "203.0.113.0/24", count: 3 },
      ...["hk_live_a", "hk_live_b"].flatMap((key) =>
        ["", "192.0.2.0/24", "198.51.100.0/24", "2001:db8:1::/48"]
          .map((client_prefix) => ({ route: "/api/salutes/credit", partner_key_id: key, client_prefix, count: 1 }))
          .concat([{ route: "/api/salutes/credit", partner_key_id: key, client_prefix: "203.0.113.0/24", count: 2 }]),
      ),
    ]),
  );
  // Each row names its key by request_log_keys.ref, each key stored once.
  const keys = await h.ctx.store.all<Record<string, unknown>>(
    "SELECT k.key_id, count(*) AS n FROM request_log r LEFT JOIN request_log_keys k ON k.ref = r.key_ref GROUP BY k.key_id",
  );
  expect(sorted(keys)).toEqual(
    sorted([
      { key_id: "hk_live_a", n: 24 },
      { key_id: "hk_live_b", n: 12 },
      { key_id: null, n: 25 },
    ]),
  );
  expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM request_log_keys"))!.n).toBe(2);
});

// A trigger makes the batch fail AFTER the new key's request_log_keys row was inserted in its transaction. Test-only
// DDL, one form per engine (no common form for a trigger that raises).
const FAIL_BATCH_SQLITE = ["CREATE TRIGGER fail_batch BEFORE INSERT ON request_log WHEN NEW.route = '/boom' BEGIN SELECT RAISE(ABORT, 'disk says no'); END"];
const FAIL_BATCH_POSTGRES = [
  `CREATE FUNCTION fail_batch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
     IF NEW.route = '/boom' THEN RAISE EXCEPTION 'disk says no'; END IF; RETURN NEW; END $$`,
  "CREATE TRIGGER fail_batch BEFORE INSERT ON request_log FOR EACH ROW EXECUTE FUNCTION fail_batch()",
];

test("a failed flush keeps its rows and forgets the refs it learnt (rolled back); the retry names the right key", async () => {
  h = await openTestApp();
  const store = h.ctx.store;
  for (const ddl of store.dialect === "sqlite" ? FAIL_BATCH_SQLITE : FAIL_BATCH_POSTGRES) await store.run(ddl);
  const log = h.ctx.requestLog;
  log.record(entry("2026-01-01T00:00:00.000Z", { partnerKeyId: "hk_live_new", route: "/ok" }));
  log.record(entry("2026-01-01T00:00:01.000Z", { partnerKeyId: "hk_live_new", route: "/boom" }));
  expect(await log.flush()).toBe(0);
  expect(log.pending).toBe(2);
  expect(await store.all("SELECT key_id FROM request_log_keys")).toEqual([]);
  expect(await store.all("SELECT hour FROM request_log_hourly")).toEqual([]); // the rollups rolled back with the rows
  await store.run(store.dialect === "sqlite" ? "DROP TRIGGER fail_batch" : "DROP TRIGGER fail_batch ON request_log");
  // Another writer takes the first ref in the meantime: a ref remembered from the failed flush would name ITS key.
  await store.run("INSERT INTO request_log_keys (key_id) VALUES ('hk_live_other')");
  expect(await log.flush()).toBe(2);
  expect(await store.all("SELECT r.route, k.key_id FROM request_log r LEFT JOIN request_log_keys k ON k.ref = r.key_ref ORDER BY r.id")).toEqual([
    { route: "/ok", key_id: "hk_live_new" },
    { route: "/boom", key_id: "hk_live_new" },
  ]);
  expect(await store.all("SELECT hour, requests FROM request_log_hourly")).toEqual([{ hour: "2026-01-01T00", requests: 2 }]);
});

test("a time given in milliseconds is written as ISO text, one string shared by the requests of a millisecond", async () => {
  h = await openTestApp({ clock: new FakeClock(new Date("2026-05-01T10:00:00.000Z")) });
  const ms = Date.parse("2026-05-01T10:00:00.123Z");
  h.ctx.requestLog.record(entry("2026-05-01T09:59:59.999Z"));
  for (const [i, at] of [ms, ms, ms + 1, ms].entries()) h.ctx.requestLog.record(entry("", { at, requestId: `req_ms_${i}` }));
  expect(await h.ctx.requestLog.flush()).toBe(5);
  const rows = await h.ctx.store.all<{ at: string; request_id: string }>("SELECT at, request_id FROM request_log ORDER BY id");
  expect(rows).toEqual([
    { at: "2026-05-01T09:59:59.999Z", request_id: "req_2026-05-01T09:59:59.999Z" },
    { at: "2026-05-01T10:00:00.123Z", request_id: "req_ms_0" },
    { at: "2026-05-01T10:00:00.123Z", request_id: "req_ms_1" },
    { at: "2026-05-01T10:00:00.124Z", request_id: "req_ms_2" },
    { at: "2026-05-01T10:00:00.123Z", request_id: "req_ms_3" },
  ]);
  const hourly = await h.ctx.store.all<{ hour: string; requests: number }>("SELECT hour, requests FROM request_log_hourly ORDER BY hour");
  expect(hourly).toEqual([
    { hour: "2026-05-01T09", requests: 1 },
    { hour: "2026-05-01T10", requests: 4 },
  ]);
});

test("a request's row carries the time its answer was made, by the app's clock", async () => {
  h = await openTestApp({ clock: new FakeClock(new Date("2026-05-01T10:00:00.000Z")) });
  h.clock.advance(1234);
  await h.request("/api/partner/errors.json");
  await recorded(h, 1);
  await h.ctx.requestLog.flush();
  expect(await h.ctx.store.all<{ at: string }>("SELECT at FROM request_log")).toEqual([{ at: "2026-05-01T10:00:01.234Z" }]);
});
