import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { evaluateChecks, overallOf } from "../../src/status/checks/engine";
import { DEFAULT_POLICY, loadPolicy } from "../../src/status/checks/policy";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { insertRequest, insertRun, iso, policyFile } from "./support";
import { testOn } from "../support/skipped";

// Each check against crafted states, at each threshold's edge. The states are real rows in a real database
// (and a real second SQLite connection for the lock), never mocks. On either engine (HERALD_TEST_ENGINE).

let h: TestApp | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  while (cleanups.length) cleanups.pop()!();
});

const T0 = "2026-01-01T00:00:00.000Z";

async function app(env: Record<string, string> = {}, policy?: string) {
  if (policy) {
    const f = policyFile("policy.yaml", policy);
    cleanups.push(f.remove);
    env = { ...env, STATUS_POLICY_PATH: f.path };
  }
  h = await openTestApp({ clock: new FakeClock(T0), env });
  return h;
}

/** Forgets the latest migration, as a database a release behind would look (each engine records them apart). */
async function forgetLatestMigration(h: TestApp): Promise<void> {
  await h.ctx.store.run(
    h.ctx.store.dialect === "sqlite"
      ? "DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)"
      : "DELETE FROM herald_migrations WHERE name = (SELECT max(name) FROM herald_migrations)",
  );
}

const check = async (h: TestApp, name: string) => {
  const r = await h.json("/api/public/system-status");
  expect(r.status).toBe(200);
  return r.body.checks[name];
};

describe("database", () => {
  test("writable and migrations current → ok", async () => {
    const h = await app();
    const c = await check(h, "database");
    expect(c).toMatchObject({ status: "ok", writable: true, migrations_current: true, error: null });
    expect(c.migrations_applied).toBe(c.migrations_total);
  });

  test("a migration not applied → bad by default, warn when the policy says so", async () => {
    let h = await app();
    await forgetLatestMigration(h);
    const c = await check(h, "database");
    expect(c).toMatchObject({ status: "bad", migrations_current: false, migrations_applied: c.migrations_total - 1 });
    await h.close();
    h = await app({}, "checks:\n  database:\n    migrations_behind: warn\n");
    await forgetLatestMigration(h);
    expect((await check(h, "database")).status).toBe("warn");
  });

  // SQLite's meaning of "not writable": another process holds the file's one write lock. PostgreSQL has no such
  // lock (its meaning, a standby in recovery or a server gone, is the store's ping: test/db covers it).
  testOn("sqlite", "test/status/checks.test.ts")(
    "another connection holding the write lock → not writable, bad (after busy_timeout)",
    async () => {
      const h = await app();
      const other = new Database(join(h.dir, "herald.db"));
      other.exec("BEGIN IMMEDIATE");
      try {
        const r = await h.json("/api/public/system-status");
        expect(r.body.checks.database).toMatchObject({ status: "bad", writable: false });
        expect(r.body.checks.database.error).toContain("locked");
        expect(r.body.overall).toBe("bad");
      } finally {
        other.exec("ROLLBACK");
        other.close();
      }
      expect((await check(h, "database")).status).toBe("ok");
    },
    20_000,
  );
});

describe("jobs", () => {
  const entry = (c: any, name: string) => c.jobs.find((j: any) => j.name === name);

  test("stale only after stale_factor × interval (min 5 min) since the start or the last run; quiet jobs never", async () => {
    const h = await app({ JOBS_ENABLED: "1" });
    // status-snapshot runs every minute: 3 × 60 s < 5 min, so its limit is 5 min.
    h.clock.advance(5 * 60_000);
    let c = await check(h, "jobs");
    expect(entry(c, "status-snapshot")).toMatchObject({ stale: false, interval_seconds: 60, last_run: null, ok: null, quiet_when_idle: false });
    h.clock.advance(1000);
    c = await check(h, "jobs");
    expect(entry(c, "status-snapshot").stale).toBe(true);
    expect(c.stale_count).toBe(1); // the every-minute job is the only one overdue yet
    expect(c).toMatchObject({ status: "warn", scheduler_expected: true });
    expect(c.summary).toContain("stale: status-snapshot");
    // The dispatcher leaves no row when idle: never stale, however long.
    h.clock.advance(86_400_000);
    expect(entry(await check(h, "jobs"), "webhook-dispatch")).toMatchObject({ quiet_when_idle: true, stale: false });
  });

  test("a run resets the staleness clock", async () => {
    const h = await app({ JOBS_ENABLED: "1" });
    h.clock.advance(10 * 60_000);
    await h.ctx.jobs.runNow("status-snapshot");
    const c = await check(h, "jobs");
    expect(entry(c, "status-snapshot")).toMatchObject({ stale: false, ok: true });
    expect(entry(c, "status-snapshot").last_run.started_at).toBe(h.clock.now().toISOString());
  });

  test("JOBS_ENABLED=0 or a disabled job: nothing is expected, nothing is stale", async () => {
    let h = await app();
    h.clock.advance(86_400_000);
    let c = await check(h, "jobs");
    expect(c).toMatchObject({ status: "ok", scheduler_expected: false, stale_count: 0 });
    expect(c.summary).toContain("JOBS_ENABLED=0");
    await h.close();
    h = await app({ JOBS_ENABLED: "1", JOBS_DISABLED: "status-snapshot" });
    h.clock.advance(6 * 60_000);
    c = await check(h, "jobs");
    expect(entry(c, "status-snapshot")).toMatchObject({ enabled: false, stale: false });
  });

  test("a failed last run → warn; three troubled jobs → bad (bad_at 3); a later success clears it", async () => {
    const h = await app();
    await insertRun(h, "auth-prune", T0, iso(T0, 0.1), false, "disk full");
    const c = await check(h, "jobs");
    expect(c).toMatchObject({ status: "warn", failing_count: 1 });
    expect(entry(c, "auth-prune")).toMatchObject({ ok: false, last_run: { ok: false, error: "disk full" } });
    await insertRun(h, "webhook-prune", T0, iso(T0, 0.1), false);
    expect((await check(h, "jobs")).status).toBe("warn"); // 2 < 3
    await insertRun(h, "request-log-prune", T0, iso(T0, 0.1), false);
    expect(await check(h, "jobs")).toMatchObject({ status: "bad", failing_count: 3 });
    await insertRun(h, "auth-prune", iso(T0, 1), iso(T0, 1.1), true);
    expect(await check(h, "jobs")).toMatchObject({ status: "warn", failing_count: 2 });
  });
});

describe("chain_rpc", () => {
  const MINT = "9EVthMCQwN6pWeBjaniiQwLNYAgApKUiyn63mWGVUUZm";
  const env = { TOKEN_MINT: MINT, SOLANA_RPC_URLS: "http://127.0.0.1:9/a,http://127.0.0.2:9/b" };

  async function calls(h: TestApp, host: string, ok: number, failed: number, minutesAgo = 1) {
    const at = new Date(h.clock.now().getTime() - minutesAgo * 60_000).toISOString();
    const insert = "INSERT INTO chain_rpc_calls (at, host, method, outcome, http_status, latency_ms, error) VALUES (?, ?, 'getTokenSupply', ?, ?, 5, ?)";
    for (let i = 0; i < ok; i++) await h.ctx.store.run(insert, [at, host, "ok", 200, null]);
    for (let i = 0; i < failed; i++) await h.ctx.store.run(insert, [at, host, "http_error", 500, "HTTP 500"]);
  }

  test("not configured → ok with note not_configured; the policy may raise it to warn, never to bad", async () => {
    let h = await app();
    expect(await check(h, "chain_rpc")).toMatchObject({ status: "ok", configured: false, note: "not_configured", total_hosts: 0 });
    await h.close();
    h = await app({}, "checks:\n  freshness:\n    not_configured: warn\n");
    expect((await check(h, "chain_rpc")).status).toBe("warn");
  });

  test("failure rates at the edges (min_calls 5, warn 10 %, bad 50 %), one usable host is enough", async () => {
    const h = await app(env);
    const [a, b] = h.ctx.chain.endpoints.map((e) => e.host);
    expect(await check(h, "chain_rpc")).toMatchObject({ status: "ok", configured: true, total_hosts: 2, usable_hosts: 2 });
    await calls(h, a!, 0, 4); // 4 calls < min_calls: judged by the breaker only
    expect((await check(h, "chain_rpc")).status).toBe("ok");
    await calls(h, a!, 0, 1); // 5 of 5 failed = 100 % ≥ 50 % → host a unusable; b still usable → warn
    let c = await check(h, "chain_rpc");
    expect(c).toMatchObject({ status: "warn", usable_hosts: 1, degraded_hosts: 1 });
    expect(c.hosts.find((x: any) => x.host === a)).toMatchObject({ calls: 5, failures: 5, error_rate_pct: 100, level: "bad" });
    await calls(h, b!, 9, 1); // b: 1 of 10 = 10 % ≥ 10 % → degraded
    expect((c = await check(h, "chain_rpc"))).toMatchObject({ status: "warn" });
    expect(c.hosts.find((x: any) => x.host === b)).toMatchObject({ error_rate_pct: 10, level: "warn" });
    await calls(h, b!, 1, 0); // b: 1 of 11 = 9.09 % < 10 % → ok
    expect((await check(h, "chain_rpc")).hosts.find((x: any) => x.host === b).level).toBe("ok");
    await calls(h, b!, 0, 11); // b: 12 of 22 failed = 54.5 % → unusable: no usable host → bad
    expect(await check(h, "chain_rpc")).toMatchObject({ status: "bad", usable_hosts: 0 });
  });

  test("calls older than window_minutes do not count", async () => {
    const h = await app(env);
    const a = h.ctx.chain.endpoints[0]!.host;
    await calls(h, a, 0, 20, 16); // 16 minutes ago, window 15
    expect(await check(h, "chain_rpc")).toMatchObject({ status: "ok" });
    expect((await check(h, "chain_rpc")).hosts[0].calls).toBe(0);
  });

  test("an open breaker makes its host unusable; half-open (after the cooldown) is degraded", async () => {
    const h = await app(env);
    const [ea, eb] = h.ctx.chain.endpoints;
    for (let i = 0; i < 5; i++) ea!.breaker.failure("refused");
    expect(await check(h, "chain_rpc")).toMatchObject({ status: "warn", usable_hosts: 1 });
    for (let i = 0; i < 5; i++) eb!.breaker.failure("refused");
    expect(await check(h, "chain_rpc")).toMatchObject({ status: "bad", usable_hosts: 0 });
    h.clock.advance(30_000); // SOLANA_RPC_BREAKER_COOLDOWN_SECONDS
    const c = await check(h, "chain_rpc");
    expect(c).toMatchObject({ status: "warn", usable_hosts: 2, degraded_hosts: 2 });
    expect(c.hosts.map((x: any) => x.breaker)).toEqual(["half_open", "half_open"]);
  });
});

describe("webhooks", () => {
  async function deliveries(h: TestApp, status: string, n: number) {
    const db = h.ctx.store;
    const now = h.clock.now().toISOString();
    const wh = (await db.get<{ id: number }>(
      "INSERT INTO webhooks (partner, mode, event_type, target_url, secret_ciphertext, created_at, updated_at) VALUES ('Acme', 'live', 'webhook.test', 'https://example.com/h', 'x', ?, ?) RETURNING id",
      [now, now],
    ))!;
    for (let i = 0; i < n; i++) {
      const ev = (await db.get<{ id: number }>(
        "INSERT INTO events (public_id, partner, mode, event_type, data, created_at) VALUES (?, 'Acme', 'live', 'webhook.test', '{}', ?) RETURNING id",
        [`evt_${status}_${wh.id}_${i}`, now],
      ))!;
      await db.run(
        "INSERT INTO webhook_deliveries (event_id, webhook_id, partner, mode, status, created_at, updated_at) VALUES (?, ?, 'Acme', 'live', ?, ?, ?)",
        [ev.id, wh.id, status, now, now],
      );
    }
  }

  test("backlog and dead letters at their thresholds (policy: backlog 3/5, dead letters 2/4)", async () => {
    const h = await app({}, "checks:\n  webhooks:\n    backlog_warn: 3\n    backlog_bad: 5\n    dead_letters_warn: 2\n    dead_letters_bad: 4\n");
    await deliveries(h, "queued", 1);
    await deliveries(h, "processing", 1);
    await deliveries(h, "succeeded", 7);
    expect(await check(h, "webhooks")).toMatchObject({ status: "ok", pending_events: 2, delivered_events: 7, dead_letter_events: 0 });
    await deliveries(h, "queued", 1); // 3 pending = backlog_warn
    expect((await check(h, "webhooks")).status).toBe("warn");
    await deliveries(h, "queued", 2); // 5 = backlog_bad
    expect((await check(h, "webhooks")).status).toBe("bad");
  });

  test("dead letters are counted but not judged by default; judged when the policy says", async () => {
    let h = await app();
    await deliveries(h, "dead_letter", 50);
    await deliveries(h, "failed", 2);
    expect(await check(h, "webhooks")).toMatchObject({ status: "ok", dead_letter_events: 50, failed_events: 2 });
    await h.close();
    h = await app({}, "checks:\n  webhooks:\n    dead_letters_warn: 2\n    dead_letters_bad: 4\n");
    await deliveries(h, "dead_letter", 1);
    expect((await check(h, "webhooks")).status).toBe("ok");
    await deliveries(h, "dead_letter", 1);
    expect((await check(h, "webhooks")).status).toBe("warn");
    await deliveries(h, "dead_letter", 2);
    expect((await check(h, "webhooks")).status).toBe("bad");
  });
});

describe("request_errors", () => {
  // Judged without a request of its own: a GET of the status route would land in the very request log the check
  // reads (recorded after its answer, at the clock's time then), and move the counts the edges are tested at.
  const check = async (h: TestApp, name: string) => (await evaluateChecks(h.ctx, loadPolicy(h.ctx).policy)).checks[name] as any;

  const fill = async (h: TestApp, ok: number, server: number, client = 0, minutesAgo = 1) => {
    const at = new Date(h.clock.now().getTime() - minutesAgo * 60_000).toISOString();
    for (let i = 0; i < ok; i++) await insertRequest(h, at, 200);
    for (let i = 0; i < server; i++) await insertRequest(h, at, 503);
    for (let i = 0; i < client; i++) await insertRequest(h, at, 404);
  };

  test("below min_requests the rate is not judged", async () => {
    const h = await app();
    await fill(h, 0, 19); // 19 requests, all 5xx, min_requests 20
    expect(await check(h, "request_errors")).toMatchObject({ status: "ok", judged: false, total_requests: 19, server_errors: 19, error_rate_pct: 100 });
  });

  test("5 % is warn, just below is ok, 25 % is bad; 4xx never count; old requests leave the window", async () => {
    const h = await app();
    await fill(h, 19, 1, 30); // 1 of 50 = 2 %, 4xx ignored
    expect(await check(h, "request_errors")).toMatchObject({
      status: "ok",
      judged: true,
      total_requests: 50,
      server_errors: 1,
      client_errors: 30,
      error_rate_pct: 2,
    });
    await fill(h, 0, 1, 0); // 2 of 51 = 3.92 %
    expect((await check(h, "request_errors")).status).toBe("ok");
    // Start again in a fresh window: requests 16 minutes old are outside the 15-minute window.
    h.clock.advance(16 * 60_000);
    await fill(h, 19, 1); // 1 of 20 = 5 % → warn exactly at the threshold
    expect(await check(h, "request_errors")).toMatchObject({ status: "warn", total_requests: 20, error_rate_pct: 5 });
    await fill(h, 0, 5); // 6 of 25 = 24 %
    expect((await check(h, "request_errors")).status).toBe("warn");
    await fill(h, 0, 1); // 7 of 26 = 26.92 % ≥ 25 → bad (26 requests; 6.5 of 26 would be exactly 25)
    expect(await check(h, "request_errors")).toMatchObject({ status: "bad", error_rate_pct: 26.92 });
  });
});

describe("overall", () => {
  test("worst check wins; an audit_anomalies warn counts only when the policy says it degrades", () => {
    expect(overallOf({ a: { status: "ok" }, b: { status: "warn" } }, DEFAULT_POLICY)).toBe("warn");
    expect(overallOf({ a: { status: "warn" }, b: { status: "bad" } }, DEFAULT_POLICY)).toBe("bad");
    expect(overallOf({ a: { status: "ok" }, audit_anomalies: { status: "warn" } }, DEFAULT_POLICY)).toBe("ok");
    expect(overallOf({ a: { status: "ok" }, audit_anomalies: { status: "warn" } }, { ...DEFAULT_POLICY, audit_anomalies_warn_degrades: true })).toBe("warn");
    expect(overallOf({ a: { status: "ok" }, audit_anomalies: { status: "bad" } }, DEFAULT_POLICY)).toBe("bad");
  });

  test("a check that cannot be evaluated is warn with its error; the others and the answer survive", async () => {
    const h = await app();
    await h.ctx.store.run("DROP TABLE request_log"); // the request_errors check's query now fails (the log's own flush only logs)
    const r = await h.json("/api/public/system-status");
    expect(r.status).toBe(200);
    expect(r.body.checks.request_errors).toMatchObject({ status: "warn", summary: "the check could not be evaluated" });
    expect(r.body.checks.request_errors.evaluation_error).toContain("request_log");
    expect(r.body.checks.database.status).toBe("ok");
    expect(r.body.overall).toBe("warn");
  });
});
