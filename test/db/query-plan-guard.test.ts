import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Param } from "../../src/db/port";
import { openTestApp, type TestApp } from "../support/app";
import { ALLOWED, GROWING, SMALL } from "../support/growing-tables";
import { type Candidate, guardFailed, guardPlans, type GuardOptions, indexesOf, wholeReads } from "../support/plan-guard";
import { planOf } from "../support/query-plans";
import { loggedParam, noting, paramOf, sendersHere, shapeOf } from "../support/statement-log";

// The query-plan guard can fail (docs/storage-port.md "The query-plan guard"), on the engine the suite runs on
// (HERALD_TEST_ENGINE): a planted statement that reads the whole salutes ledger is reported; allow-listed, it is
// accepted with its reason; a statement down an index passes; an allow-list entry that matches nothing is stale.
// And every table of the migrated schema is decided on: growing or small (test/support/growing-tables.ts).

let h: TestApp;
let indexes: Awaited<ReturnType<typeof indexesOf>> | undefined;
beforeAll(async () => {
  h = await openTestApp();
  indexes = await indexesOf(h.ctx.store);
});
afterAll(() => h?.close());

const FROM_SRC = ["src/salutes/store/planted.ts:1"];
const BY_SOURCE = { sql: "SELECT id FROM salutes_ledger WHERE source = ?", params: ["game.arena"], stack: FROM_SRC };
const DOWN_USER = { sql: "SELECT id FROM salutes_ledger WHERE user_id = ? ORDER BY id DESC LIMIT 50", params: [7], stack: FROM_SRC };

const guard = (statements: Candidate[], opts: Partial<GuardOptions> = {}) =>
  guardPlans(statements, (sql, params) => planOf(h, sql, params), { engine: h.ctx.store.dialect, indexes, complete: false, allowed: [], ...opts });

describe("the query-plan guard", () => {
  test("a full read of a growing table is reported, with its plan line and sender", async () => {
    const report = await guard([BY_SOURCE]);
    expect(report.examined).toBe(1);
    expect(report.fullReads.map((f) => [f.table, f.from[0]])).toEqual([["salutes_ledger", FROM_SRC[0]]]);
    // Both engines read all of the (user_id, source, id) index for a condition on its second column.
    expect(report.fullReads[0]!.line).toMatch(
      h.ctx.store.dialect === "sqlite" ? /^SCAN salutes_ledger\b/ : /^Index Only Scan using salutes_ledger_user_source_idx on salutes_ledger /,
    );
    expect(guardFailed(report)).toBe(true);
  });

  test("allow-listed, the same statement is accepted with its reason (by text or by pattern)", async () => {
    for (const statement of [`  ${BY_SOURCE.sql.replace(/ /g, "\n  ")}`, /FROM salutes_ledger WHERE source = \?$/]) {
      const report = await guard([BY_SOURCE], { allowed: [{ statement, reason: "planted" }], complete: true });
      expect({ full: report.fullReads, allowed: report.allowed.map((a) => a.reason), stale: report.stale }).toEqual({
        full: [],
        allowed: ["planted"],
        stale: [],
      });
      expect(guardFailed(report)).toBe(false);
    }
  });

  test("an entry for the other engine only does not excuse it here", async () => {
    const other = h.ctx.store.dialect === "sqlite" ? "postgres" : "sqlite";
    const report = await guard([BY_SOURCE], { allowed: [{ statement: BY_SOURCE.sql, reason: "planted", engine: other }], complete: true });
    expect(report.fullReads).toHaveLength(1);
    expect(report.stale).toEqual([]);
  });

  test("a statement down an index passes", async () => {
    const report = await guard([DOWN_USER]);
    expect({ examined: report.examined, full: report.fullReads, warnings: report.warnings, errors: report.errors }).toEqual({
      examined: 1,
      full: [],
      warnings: [],
      errors: [],
    });
    expect(guardFailed(report)).toBe(false);
  });

  test("a table named by its alias is found", async () => {
    const report = await guard([{ sql: "SELECT d.id FROM webhook_deliveries d WHERE d.last_error = ?", params: ["x"], stack: FROM_SRC }]);
    expect(report.fullReads.map((f) => f.table)).toEqual(["webhook_deliveries"]);
  });

  test("a stale allow-list entry is reported on a whole run's log, not on a partial one", async () => {
    const stale = { statement: "SELECT 1 FROM salutes_ledger WHERE reason = ?", reason: "gone" };
    const whole = await guard([DOWN_USER], { allowed: [stale], complete: true });
    expect(whole.stale).toEqual([stale]);
    expect(guardFailed(whole)).toBe(true);
    const partial = await guard([DOWN_USER], { allowed: [stale], complete: false });
    expect(guardFailed(partial)).toBe(false);
  });

  test("a test's own SQL, a migration, small tables, writes without a read and the engine's own statements are not judged", async () => {
    const report = await guard([
      { ...BY_SOURCE, stack: ["test/salutes/ledger.test.ts:12"] },
      { sql: "UPDATE salutes_ledger SET reason = reason WHERE source = ?", params: ["x"], stack: ["src/db/postgres-migrate.ts:25"] },
      { sql: "SELECT * FROM partner_keys WHERE scopes = ?", params: ["x"], stack: FROM_SRC },
      { sql: "INSERT INTO request_log (at, method, route, status, latency_us) VALUES (?, ?, ?, ?, ?)", params: ["t", "GET", "/", 200, 1], stack: FROM_SRC },
      { sql: "PRAGMA table_info(request_log)", params: [], stack: FROM_SRC },
    ]);
    expect({ byTests: report.byTests, migrations: report.migrations, examined: report.examined, failed: guardFailed(report) }).toEqual({
      byTests: 1,
      migrations: 1,
      examined: 0,
      failed: false,
    });
  });

  test("the texts of one statement that differ in an IN list's length are planned once", async () => {
    const inList = (n: number) => ({
      sql: `SELECT id FROM salutes_ledger WHERE id IN (${Array(n).fill("?").join(", ")})`,
      params: Array(n).fill(1),
      stack: FROM_SRC,
    });
    expect(shapeOf(inList(2).sql)).toBe(shapeOf(inList(9).sql));
    const report = await guard([inList(2), inList(9)]);
    expect(report.distinct).toBe(1);
  });

  test("the plans' readers: SQLite by alias and index walk, PostgreSQL's index scan without a condition, partial indexes", () => {
    const growing = new Set(["request_log"]);
    expect(wholeReads("sqlite", "SELECT count(*) FROM request_log r", ["SCAN r USING COVERING INDEX request_log_at_idx"], growing)).toEqual([
      { table: "request_log", line: "SCAN r USING COVERING INDEX request_log_at_idx", indexWalk: true },
    ]);
    const pg = ["Aggregate", "  ->  Index Only Scan using request_log_at_idx on request_log  (cost=0.15..60.45 rows=1 width=0)"];
    expect(wholeReads("postgres", "SELECT count(*) FROM request_log", pg, growing).map((r) => r.indexWalk)).toEqual([true]);
    const cond = ["Index Scan using request_log_at_idx on request_log  (cost=0.15..8.17 rows=1 width=8)", "  Index Cond: (at < $1)"];
    const idx = new Map([
      ["request_log_at_idx", { table: "request_log", columns: ["at"], partial: false }],
      ["request_log_key_at_idx", { table: "request_log", columns: ["key_ref", "at"], partial: false }],
      ["request_log_errors_idx", { table: "request_log", columns: ["id"], partial: true }],
    ]);
    expect(wholeReads("postgres", "SELECT id FROM request_log WHERE at < ?", cond, growing, idx)).toEqual([]);
    // A condition on the second column only, under a bitmap: the whole index is read.
    const later = ["Bitmap Heap Scan on request_log", "  ->  Bitmap Index Scan on request_log_key_at_idx", "        Index Cond: (at < '2026'::text)"];
    expect(wholeReads("postgres", "SELECT id FROM request_log WHERE at < ?", later, growing, idx).map((r) => r.table)).toEqual(["request_log"]);
    // A walk of a partial index reads the rows its WHERE names, which is what the statement asks for.
    const partial = ["Index Only Scan using request_log_errors_idx on request_log"];
    expect(wholeReads("postgres", "SELECT id FROM request_log WHERE status >= 500", partial, growing, idx)).toEqual([]);
    expect(
      wholeReads("sqlite", "SELECT id FROM request_log WHERE status >= 500", ["SCAN request_log USING COVERING INDEX request_log_errors_idx"], growing, idx),
    ).toEqual([]);
  });
});

describe("the recorder (HERALD_STATEMENT_LOG)", () => {
  test("parameters survive the log: bytes, big integers; long text is cut", () => {
    const bytes = new Uint8Array([0, 1, 254]);
    expect(paramOf(loggedParam(bytes))).toEqual(bytes);
    expect(paramOf(loggedParam(BigInt(42)))).toBe(42);
    expect((paramOf(loggedParam("x".repeat(10_000))) as string).length).toBe(256);
    expect(JSON.parse(JSON.stringify([bytes, BigInt(7)].map(loggedParam))).map(paramOf)).toEqual([bytes, 7]);
  });

  test("a statement is attributed to the line that sent it, past the engine and the recorder", async () => {
    const seen: Array<{ sql: string; params: readonly Param[] | undefined; stack: string[] }> = [];
    const q = noting(h.ctx.store, (sql, params) => seen.push({ sql, params, stack: sendersHere() }));
    await q.get("SELECT 1 AS one");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.stack[0]).toMatch(/^test\/db\/query-plan-guard\.test\.ts:\d+$/);
  });
});

describe("growing-tables.ts", () => {
  test("every table of the migrated schema is growing or small, with its reason; none is both", async () => {
    const tables =
      h.ctx.store.dialect === "sqlite"
        ? await h.ctx.store.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
        : await h.ctx.store.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'");
    const names = tables.map((t) => t.name).filter((n) => n !== "herald_migrations");
    const decided = new Set([...Object.keys(GROWING), ...Object.keys(SMALL)]);
    expect(names.filter((n) => !decided.has(n)).sort()).toEqual([]);
    expect(Object.keys(GROWING).filter((n) => !names.includes(n))).toEqual([]);
    expect(Object.keys(GROWING).filter((n) => n in SMALL)).toEqual([]);
    for (const reason of [...Object.values(GROWING), ...Object.values(SMALL)]) expect(reason.length).toBeGreaterThan(5);
  });

  test("every allow-list entry gives its reason", () => {
    for (const a of ALLOWED) expect({ statement: String(a.statement), reason: a.reason.length > 15 }).toEqual({ statement: String(a.statement), reason: true });
  });
});
