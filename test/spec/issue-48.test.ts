// Issue 48 (PostgreSQL in production), re-verified over HTTP: "Deadlocks and serialization failures inside the port
// are retried a bounded number of times with jitter before they become a 503; count the retries in /metrics", and the
// outage's own series (unavailable now, outages, deadlines). test/db/deadlines.test.ts counts the retries on the
// store; this checks an operator's scrape names them, on the run's engine.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { PostgresStore } from "../../src/db/postgres-engine";
import { testEngine, withDatabase } from "../support/engine";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { freePort, spawnHerald, waitForHttp } from "../support/process";
import { testOn } from "../support/skipped";
import { createAdminToken, createKey, signedInit } from "../support/partner";
import { startTarget, TARGET } from "../support/target";

let h: TestApp;
beforeAll(async () => {
  h = await openTestApp();
});
afterAll(() => h?.close());

test("/metrics names the database's retries, deadlines, outages and availability", async () => {
  const res = await h.request("/metrics", { headers: { authorization: `Bearer ${await createAdminToken(h)}` } });
  expect(res.status).toBe(200);
  const text = await res.text();
  for (const name of ["herald_db_tx_retries_total", "herald_db_deadlines_total", "herald_db_outages_total", "herald_db_unavailable"]) {
    expect({ name, present: new RegExp(`^${name} \\d+$`, "m").test(text) }).toEqual({ name, present: true });
  }
  expect(text).toMatch(/^herald_db_unavailable 0$/m);
  // Issue 49's batches (PostgreSQL only, docs/http-conventions.md): run together, and redone after a failure.
  if (testEngine() === "postgres") {
    for (const name of ["herald_db_batches_together_total", "herald_db_batches_redone_total", "herald_db_round_trips_total", "herald_db_pool_max"]) {
      expect({ name, present: new RegExp(`^${name} \\d+$`, "m").test(text) }).toEqual({ name, present: true });
    }
  }
});

// Acceptance: "8 concurrent sandbox resets × 10 rounds: 0 5xx on both engines" — over HTTP to the run's target
// (HERALD_TEST_TARGET=dist/herald: the binary, as the outside checks run it); every reset answers 200.
test(`8 concurrent sandbox resets × 10 rounds through HTTP: every one 200, never a 5xx (${TARGET.label})`, async () => {
  const t = await startTarget({ env: { PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE: "0", RATE_LIMIT_PARTNER_PER_MIN: "0" } });
  try {
    const key = await createKey(t, { mode: "sandbox" });
    const statuses: Record<number, number> = {};
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => t.request("/api/partner/sandbox/reset", signedInit(t, key, "POST", "/api/partner/sandbox/reset"))),
      );
      for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    }
    expect(statuses).toEqual({ 200: 80 });
  } finally {
    await t.stop();
  }
}, 180_000);

// "/readyz answers within 1 s whatever the database does (its own short deadline; it reports the reason)".
// test/postgres/frozen-database.test.ts times it; this reads what it says while the cluster is frozen (SIGSTOP).
const pg = testEngine() === "postgres" && postgresPresent("test/spec/issue-48.test.ts");
let cluster: TestCluster | undefined;
let child: ReturnType<typeof spawnHerald> | undefined;
afterAll(() => {
  child?.kill("SIGKILL");
  cluster?.signalAll("SIGCONT");
  cluster?.stop();
});
testOn("postgres", "test/spec/issue-48.test.ts", test.skipIf(!pg))(
  "a frozen database: /readyz within 1 s is 503 and names the database check that failed and why",
  async () => {
    cluster = await startCluster();
    const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
    await admin.run("CREATE DATABASE frozen48");
    await admin.close();
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    child = spawnHerald(["serve"], {
      DATABASE_URL: withDatabase(cluster.url, "frozen48"),
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      NODE_ENV: "development",
      BOOTSTRAP_CREDENTIALS: "0",
      HERALD_MASTER_KEY: "ef".repeat(32),
    });
    await waitForHttp(`${base}/readyz`, 30_000);
    expect(cluster.signalAll("SIGSTOP")).toBeGreaterThan(1);
    try {
      const started = performance.now();
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
      const ms = performance.now() - started;
      const body = (await res.json()) as { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> };
      expect({ status: res.status, ready: body.ready, database: body.checks.database?.ok }).toEqual({ status: 503, ready: false, database: false });
      expect(body.checks.database!.detail).toMatch(/^not available: .+/);
      expect(ms).toBeLessThan(1_000);
    } finally {
      cluster.signalAll("SIGCONT");
    }
  },
  90_000,
);
