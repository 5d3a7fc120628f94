import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import bs58 from "bs58";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/app";
import { openContextAsync } from "../../src/bootstrap";
import type { Clock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import { PostgresStore } from "../../src/db/postgres-engine";
import { createLogger } from "../../src/log";
import { afterResponses, createTestApp, type TestApp } from "../support/app";
import { FakeClock, seededRng } from "../support/clock";
import { withDatabase } from "../support/engine";
import { createKey, signedJson, type TestKey } from "../support/partner";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { spawnHerald } from "../support/process";

// `herald migrate-to-postgres` moves a database the test fixtures made (keys, users and wallets, salutes credits and
// debits, a webhook and its deliveries, donation claims, sandbox practice, the request log) into PostgreSQL: every
// table's rows copied and checked, and the API answers a set of reads the same before and after. A second run
// copies nothing and says the move is done — also after the target took traffic (never "CHECK FAILED" over intact
// data); a copy cut off halfway resumes; a non-empty target is refused, and --force is never suggested.

setDefaultTimeout(180_000);
const pg = postgresPresent("test/cli/migrate-to-postgres.test.ts");
const MASTER_KEY = "cd".repeat(32);
let cluster: TestCluster | undefined;
const dir = mkdtempSync(join(tmpdir(), "herald-move-"));
afterAll(() => {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let source: TestApp;
let key: TestKey;
let sandboxKey: TestKey;
const reads: string[] = [];
const before = new Map<string, unknown>();
let dbPath = "";
let ledgerRows = 0;

/** An answer without what differs per request by design (ids of the request, times of the answer). */
function comparable(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body), (k, v) => (k === "request_id" || k === "generated_at_utc" || k === "meta" ? undefined : v));
}

async function migrate(args: string[], from = dbPath) {
  const p = spawnHerald(["migrate-to-postgres", "--from", from, ...args, "--json"], { NODE_ENV: "test", LOG_LEVEL: "warn", HERALD_MASTER_KEY: MASTER_KEY });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

async function database(name: string): Promise<string> {
  const admin = new PostgresStore({ url: cluster!.url, poolMax: 1 });
  await admin.run(`CREATE DATABASE ${name}`);
  await admin.close();
  return withDatabase(cluster!.url, name);
}

beforeAll(async () => {
  if (!pg) return;
  cluster = await startCluster();
  source = createTestApp({ env: { HERALD_MASTER_KEY: MASTER_KEY, HERALD_DB_PATH: join(dir, "source.db"), WEBHOOK_ALLOW_PRIVATE_TARGETS: "1" } });
  dbPath = join(dir, "source.db");
  key = await createKey(source, { partner: "Acme" });
  sandboxKey = await createKey(source, { partner: "Acme", mode: "sandbox" });
  const users: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await signedJson(source, key, "POST", "/api/partner/users", {
      body: { external_id: `move-${i}`, username: `mover${i}`, wallet_address: bs58.encode(new Uint8Array(32).fill(i + 1)) },
    });
    expect(r.status).toBe(201);
    users.push(String(r.body.user.id));
  }
  await signedJson(source, key, "POST", "/api/partner/webhooks", { body: { event_type: "salutes.credit", target_url: "http://127.0.0.1:9/hook" } });
  for (let i = 0; i < 30; i++) {
    const user = users[i % users.length]!;
    await signedJson(source, key, "POST", i % 4 === 3 ? "/api/salutes/debit" : "/api/salutes/credit", {
      body: { user_id: user, amount: 1 + (i % 7), reason: "move", source: "fixtures" },
    });
  }
  const claim = await signedJson(source, key, "POST", "/api/partner/donation-claim", {
    body: { campaign_id: "spring", amount: "12.5", recipient: { email: "donor@example.com" } },
  });
  await signedJson(source, sandboxKey, "GET", "/api/partner/sandbox/verify");
  await afterResponses();
  await source.ctx.requestLog.flush();
  reads.push(
    "/api/partner/users?limit=50",
    `/api/partner/users/${users[0]}?include_wallets=1`,
    `/api/partner/user-lookup?q=mover`,
    ...users.map((u) => `/api/salutes/balance?user_id=${u}`),
    ...users.map((u) => `/api/salutes/ledger?user_id=${u}&order=asc`),
    "/api/partner/webhooks",
    `/api/partner/donation-claims/${claim.body.claim_code}`,
    "/api/partner/capabilities",
  );
  for (const path of reads) before.set(path, comparable((await signedJson(source, key, "GET", path)).body));
  before.set("sandbox", comparable((await signedJson(source, sandboxKey, "GET", "/api/partner/sandbox/users?limit=50")).body));
  ledgerRows = (await source.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM salutes_ledger"))!.n;
  await source.ctx.store.close();
  await source.ctx.store.close();
});

test.skipIf(!pg)(
  "moves every table, checks it, and the API answers the same on PostgreSQL",
  async () => {
    const url = await database("moved");
    const first = await migrate(["--to", url]);
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary).toMatchObject({ success: true, problems: [] });
    expect(summary.per_table.salutes_ledger).toBe(ledgerRows);
    expect(ledgerRows).toBeGreaterThan(20);
    expect(summary.rows).toBeGreaterThan(50);
    expect(summary.copied_now).toBe(summary.rows);
    // Run again: nothing to do, nothing doubled, and checked again.
    const again = await migrate(["--to", url]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      success: true,
      already_migrated: true,
      rows: summary.rows,
      copied_now: 0,
      target_changes: { newer: 0, fewer: 0, tables: [] },
      problems: [],
    });

    // The same reads, against a Herald on the copy (same master key: the sealed secrets must open there).
    const clock = new FakeClock(source.clock.now());
    const ctx = await openContextAsync(
      loadConfig({
        NODE_ENV: "test",
        LOG_LEVEL: "silent",
        JOBS_ENABLED: "0",
        DATABASE_URL: url,

        HERALD_MASTER_KEY: MASTER_KEY,
        HERALD_DB_PATH: join(dir, "unused.db"),
        PUBLIC_BASE_URL: "http://localhost:3000",
      }),
      { clock: clock as Clock, rng: seededRng("moved"), log: createLogger("silent") },
    );
    const app = buildApp(ctx);
    const moved = { ...source, ctx, app, clock, request: (p: string, init?: RequestInit) => app.handle(new Request(`http://localhost${p}`, init)) } as TestApp;
    moved.json = (async (p: string, init?: RequestInit) => {
      const res = await moved.request(p, init);
      return { status: res.status, body: await res.json(), headers: res.headers };
    }) as TestApp["json"];
    try {
      for (const path of reads) expect({ path, body: comparable((await signedJson(moved, key, "GET", path)).body) }).toEqual({ path, body: before.get(path) });
      expect(comparable((await signedJson(moved, sandboxKey, "GET", "/api/partner/sandbox/users?limit=50")).body)).toEqual(before.get("sandbox"));
      // New rows get new ids: the identity sequences moved past the copied ones.
      const user = await signedJson(moved, key, "POST", "/api/partner/users", { body: { external_id: "after-the-move" } });
      expect(user.status).toBe(201);
      const credited = await signedJson(moved, key, "POST", "/api/salutes/credit", {
        body: { user_id: String(user.body.user.id), amount: 2, reason: "x", source: "y" },
      });
      expect(credited.status).toBe(200);
      expect(credited.body.ledger_entry_id).toBe(ledgerRows + 1);
    } finally {
      await ctx.requestLog.stop();
      await ctx.store.close();
    }

    // The instances took traffic: a run again says the move is done and how far the target has moved on, copies
    // nothing, checks the target's own balances, exits 0 — and never offers --force.
    const rerun = await migrate(["--to", url]);
    expect(rerun.code).toBe(0);
    const report = JSON.parse(rerun.stdout);
    expect(report).toMatchObject({ success: true, already_migrated: true, copied_now: 0, problems: [] });
    expect(report.completed_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(report.target_changes.newer).toBeGreaterThanOrEqual(2);
    expect(report.target_changes.tables).toEqual(expect.arrayContaining(["partner_users", "salutes_ledger"]));
    const text = spawnHerald(["migrate-to-postgres", "--from", dbPath, "--to", url], { NODE_ENV: "test", LOG_LEVEL: "warn", HERALD_MASTER_KEY: MASTER_KEY });
    const [out, err, code] = await Promise.all([new Response(text.stdout).text(), new Response(text.stderr).text(), text.exited]);
    expect(code).toBe(0);
    expect(out).toStartWith(`already migrated: ${report.from} was copied into this database on ${report.completed_at}`);
    expect(out).toContain("nothing copied");
    expect(out).toContain("the target has moved on since (it is in use)");
    expect(out).toContain("checked: every salutes balance = Σ its ledger in the target");
    expect(out).not.toMatch(/copied \d|CHECK FAILED/);
    expect(out + err).not.toContain("--force");

    // Another file (the default HERALD_DB_PATH of a run without --from, here a copy of the source): nothing copied,
    // exit 3, the way to check the move that was made — no --force.
    const other = join(dir, "other.db");
    copyFileSync(dbPath, other);
    const elsewhere = await migrate(["--to", url], other);
    expect(elsewhere.code).toBe(3);
    expect(JSON.parse(elsewhere.stdout)).toMatchObject({ success: false, error: "migrated_from_another_file", copied_now: 0 });
    expect(elsewhere.stderr).toContain(`this database was migrated from ${report.from} on ${report.completed_at} and has`);
    expect(elsewhere.stderr).toContain(`To check that migration, run again with --from ${report.from}`);
    expect(elsewhere.stderr).not.toContain("--force");

    // A move finished by an earlier Herald (which recorded each table's progress, not the move): recognised too.
    const target = new PostgresStore({ url, poolMax: 1 });
    await target.run("DELETE FROM herald_copy_completed");
    await target.close();
    const legacy = await migrate(["--to", url]);
    expect(legacy.code).toBe(0);
    expect(JSON.parse(legacy.stdout)).toMatchObject({ success: true, already_migrated: true, completed_at: null, copied_now: 0, problems: [] });
  },
  180_000,
);

test.skipIf(!pg)(
  "an interrupted copy resumes; a non-empty target is refused unless --force",
  async () => {
    const url = await database("resumed");
    expect((await migrate(["--to", url, "--batch", "100"])).code).toBe(0);
    // A crash halfway through the ledger: its later rows never arrived, its progress says so.
    const target = new PostgresStore({ url, poolMax: 1 });
    await target.tx(async (t) => {
      await t.run("DELETE FROM salutes_ledger WHERE id > 10");
      await t.run("UPDATE herald_copy_progress SET done = 0, last_rowid = 10, copied = 10 WHERE table_name = 'salutes_ledger'");
      // A copy cut off never got as far as its checks, so it was never recorded as finished.
      await t.run("DELETE FROM herald_copy_completed");
    });
    const resumed = await migrate(["--to", url]);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ success: true, copied_now: ledgerRows - 10 });
    expect((await target.get<{ n: number }>("SELECT count(*) AS n FROM salutes_ledger"))?.n).toBe(ledgerRows);

    // A database with rows of its own and no copy in it.
    const other = await database("occupied");
    const occupied = new PostgresStore({ url: other, poolMax: 1 });
    await migrateOnly(other);
    await occupied.run("INSERT INTO admin_tokens (name, token_hash, created_at) VALUES ('someone', 'h', '2026-01-01T00:00:00.000Z')");
    const refused = await migrate(["--to", other]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("already holds 1 rows that no copy of this file put there (admin_tokens 1); nothing copied");
    expect(refused.stderr).not.toContain("--force");
    const forced = await migrate(["--to", other, "--force"]);
    expect(forced.code).toBe(0);
    await occupied.close();
    await target.close();
  },
  180_000,
);

test.skipIf(!pg)(
  "text holding U+0000, which SQLite stores and PostgreSQL cannot, is copied with U+FFFD and counted",
  async () => {
    const from = join(dir, "with-nul.db");
    copyFileSync(dbPath, from);
    const file = new Database(from, { strict: true });
    const ids = file.query("SELECT id FROM partner_users ORDER BY id LIMIT 2").all() as Array<{ id: number }>;
    file.query("UPDATE partner_users SET username = ? WHERE id = ?").run("nul\u0000in\u0000name", ids[0]!.id);
    file.query("UPDATE partner_users SET username = ? WHERE id = ?").run("\u0000", ids[1]!.id);
    file.close();
    const url = await database("with_nul");
    const run = await migrate(["--to", url], from);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ success: true, problems: [], nul_replaced: { "partner_users.username": 2 } });
    const target = new PostgresStore({ url, poolMax: 1 });
    try {
      expect(await target.all("SELECT username FROM partner_users WHERE id IN (?, ?) ORDER BY id", [ids[0]!.id, ids[1]!.id])).toEqual([
        { username: "nul\uFFFDin\uFFFDname" },
        { username: "\uFFFD" },
      ]);
    } finally {
      await target.close();
    }
    // Without --json the count is a line of the report.
    const again = spawnHerald(["migrate-to-postgres", "--from", from, "--to", await database("with_nul_text")], {
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      HERALD_MASTER_KEY: MASTER_KEY,
    });
    const [out, code] = await Promise.all([new Response(again.stdout).text(), again.exited]);
    expect(code).toBe(0);
    expect(out).toContain("replaced U+0000 (NUL, which PostgreSQL's text cannot hold) with U+FFFD in 2 text values: partner_users.username 2");
  },
  180_000,
);

async function migrateOnly(url: string) {
  const p = spawnHerald(["migrate"], { NODE_ENV: "test", LOG_LEVEL: "warn", DATABASE_URL: url, HERALD_DB_PATH: join(dir, "x.db") });
  expect(await p.exited).toBe(0);
}
