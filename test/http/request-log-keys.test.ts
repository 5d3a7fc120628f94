// request_log names a row's partner key by request_log_keys.ref (migration 0009): what the writer records, what
// survives a failed flush, two writers on one file, and the migration of rows written before it.
import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type DbHandle } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { SqliteStore } from "../../src/db/sqlite-engine";
import { RequestLog, type RequestLogEntry } from "../../src/http/request-log/log";
import { createLogger } from "../../src/log";
import { migrateFirst, sqliteMigrations } from "../support/migrations";

const dirs: string[] = [];
const handles: DbHandle[] = [];
afterEach(() => {
  for (const h of handles.splice(0)) h.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function freshDb(): DbHandle {
  const dir = mkdtempSync(join(tmpdir(), "herald-log-keys-"));
  dirs.push(dir);
  const h = openDatabase(join(dir, "herald.db"));
  handles.push(h);
  return h;
}

const quiet = () => createLogger("silent", () => {});
/** The writer over the storage port on the file's own connections, as the service wires it. */
const storeOf = (h: DbHandle) => new SqliteStore(h.sqlite);
const entry = (keyId: string | null, route = "/api/partner/capabilities", i = 0): RequestLogEntry => ({
  at: `2026-11-22T00:00:${String(i % 60).padStart(2, "0")}.000Z`,
  method: "GET",
  route,
  status: 200,
  latencyUs: 100,
  partnerKeyId: keyId,
  clientIp: "127.0.0.1",
  requestId: `req_${i}`,
  errorCode: null,
});
/** Each row's key id, read back through the join every query uses. */
const keysOf = (sqlite: Database) =>
  (sqlite.query("SELECT k.key_id FROM request_log r LEFT JOIN request_log_keys k ON k.ref = r.key_ref ORDER BY r.id").values() as [string | null][]).map(
    (r) => r[0],
  );

test("each key is stored once and every row names it by a small integer", async () => {
  const h = freshDb();
  migrate(h);
  const log = new RequestLog(storeOf(h), quiet());
  ["hk_live_aaa", "hk_live_bbb", null, "hk_live_aaa"].forEach((k, i) => log.record(entry(k, undefined, i)));
  expect(await log.flush()).toBe(4);
  log.record(entry("hk_live_bbb", undefined, 4));
  expect(await log.flush()).toBe(1);
  expect(keysOf(h.sqlite)).toEqual(["hk_live_aaa", "hk_live_bbb", null, "hk_live_aaa", "hk_live_bbb"]);
  expect(h.sqlite.query("SELECT ref, key_id FROM request_log_keys ORDER BY ref").all()).toEqual([
    { ref: 1, key_id: "hk_live_aaa" },
    { ref: 2, key_id: "hk_live_bbb" },
  ]);
  expect(h.sqlite.query("SELECT typeof(key_ref) AS t FROM request_log WHERE key_ref IS NOT NULL GROUP BY 1").all()).toEqual([{ t: "integer" }]);
});

test("a failed flush forgets the refs it learnt (they were rolled back) and the retried rows still name their key", async () => {
  const h = freshDb();
  migrate(h);
  const log = new RequestLog(storeOf(h), quiet());
  // A trigger makes the batch fail AFTER the new key's request_log_keys row was inserted in its transaction.
  h.sqlite.exec("CREATE TRIGGER fail_batch BEFORE INSERT ON request_log WHEN NEW.route = '/boom' BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
  log.record(entry("hk_live_new", "/ok", 0));
  log.record(entry("hk_live_new", "/boom", 1));
  expect(await log.flush()).toBe(0);
  expect(h.sqlite.query("SELECT count(*) AS n FROM request_log_keys").get()).toEqual({ n: 0 });
  expect(log.pending).toBe(2);
  h.sqlite.exec("DROP TRIGGER fail_batch");
  // Another writer takes ref 1 in the meantime: a stale ref kept in memory would now point at ITS key.
  h.sqlite.exec("INSERT INTO request_log_keys (key_id) VALUES ('hk_live_other')");
  expect(await log.flush()).toBe(2);
  expect(keysOf(h.sqlite)).toEqual(["hk_live_new", "hk_live_new"]);
});

test("two writers on one file (a server and a CLI) agree on every key's ref", async () => {
  const h = freshDb();
  migrate(h);
  const second = new Database(h.path, { strict: true });
  second.exec("PRAGMA busy_timeout = 5000");
  try {
    const a = new RequestLog(storeOf(h), quiet());
    const b = new RequestLog(new SqliteStore(second), quiet());
    a.record(entry("hk_live_x", undefined, 0));
    b.record(entry("hk_live_y", undefined, 1));
    b.record(entry("hk_live_x", undefined, 2));
    a.record(entry("hk_live_y", undefined, 3));
    expect(await a.flush()).toBe(2);
    expect(await b.flush()).toBe(2);
    expect(keysOf(h.sqlite)).toEqual(["hk_live_x", "hk_live_y", "hk_live_y", "hk_live_x"]);
    expect((h.sqlite.query("SELECT count(*) AS n FROM request_log_keys").get() as { n: number }).n).toBe(2);
  } finally {
    second.close();
  }
});

test("migration 0009 moves rows written before it onto refs, keeping each row's key (and no key)", async () => {
  const h = freshDb();
  // Bring the file to 0008, as a deployment before this change left it, and log some traffic the old way.
  migrateFirst(h, 9); // 0000 … 0008
  const insert = h.sqlite.query(
    "INSERT INTO request_log (at, method, route, status, latency_us, partner_key_id, client_ip, request_id, error_code) VALUES (?, 'GET', '/r', 200, 1, ?, NULL, ?, NULL)",
  );
  const before = ["hk_test_b", null, "hk_live_a", "hk_test_b", "hk_live_a", null];
  before.forEach((k, i) => insert.run(`2026-11-01T00:00:0${i}.000Z`, k, `req_${i}`));

  expect(migrate(h).applied).toBe(sqliteMigrations().length - 9);
  expect(keysOf(h.sqlite)).toEqual(before);
  const columns = (h.sqlite.query("PRAGMA table_info(request_log)").all() as { name: string }[]).map((c) => c.name);
  expect(columns).toContain("key_ref");
  expect(columns).not.toContain("partner_key_id");
  const plan = h.sqlite
    .query("EXPLAIN QUERY PLAN SELECT route FROM request_log WHERE key_ref = (SELECT ref FROM request_log_keys WHERE key_id = ?) AND at > ?")
    .all("hk_live_a", "2026") as { detail: string }[];
  expect(plan.map((p) => p.detail).join(" | ")).toContain("request_log_key_at_idx");
  // A writer after the migration continues the same refs.
  const log = new RequestLog(storeOf(h), quiet());
  log.record(entry("hk_live_a", undefined, 9));
  await log.flush();
  expect(keysOf(h.sqlite).at(-1)).toBe("hk_live_a");
  expect((h.sqlite.query("SELECT count(*) AS n FROM request_log_keys").get() as { n: number }).n).toBe(2);
});
