// A PostgreSQL that answers but takes no writes (issue 76): `default_transaction_read_only = on` set for the whole
// server at runtime (ALTER SYSTEM and a reload, as a managed database does on a full disk; a standby behind a
// mis-pointed pooler refuses writes with the same SQLSTATE 25006). On a `herald serve` process (dist/herald with
// HERALD_TEST_TARGET): every credit and every signed GET (it stores its nonce) answers 503 db_unavailable with
// Retry-After, never 500; /readyz answers 503 and says why; the outage is one warning. Made writable again, Herald
// serves within seconds with nothing from the operator, and the refused credits retried with their keys each have
// one effect.
import { afterAll, expect, test } from "bun:test";
import { newIdempotencyKey } from "../../src/client/sign";
import { PostgresStore } from "../../src/db/postgres-engine";
import { testEngine, withDatabase } from "../support/engine";
import { liveKeyCaller } from "../support/partner";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { freePort, spawnHerald, waitForHttp } from "../support/process";
import { testOn } from "../support/skipped";

// Its own cluster (the setting is the server's), whatever the suite's engine: run once, in the PostgreSQL pass.
const pg = testEngine() === "postgres" && postgresPresent("test/postgres/read-only-database.test.ts");
const ADMIN = "hat_readonly_admin_token_0123456789abcdefghijklmn";
const MASTER_KEY = "ce".repeat(32);
/** What both tests' servers and commands run with, beside their DATABASE_URL. */
const SERVE_ENV = {
  HOST: "127.0.0.1",
  LOG_LEVEL: "info",
  NODE_ENV: "development",
  BOOTSTRAP_CREDENTIALS: "0",
  ADMIN_TOKEN: ADMIN,
  HERALD_MASTER_KEY: MASTER_KEY,
};

let cluster: TestCluster | undefined;
let child: ReturnType<typeof spawnHerald> | undefined;
afterAll(() => {
  child?.kill("SIGKILL");
  cluster?.stop();
});

testOn("postgres", "test/postgres/read-only-database.test.ts", test.skipIf(!pg))(
  "a read-only PostgreSQL: 503 db_unavailable with Retry-After, /readyz 503 with the reason, one warning; writable again: served, nothing lost or doubled",
  async () => {
    cluster = await startCluster();
    const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
    await admin.run("CREATE DATABASE readonly");
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    child = spawnHerald(["serve"], {
      ...SERVE_ENV,
      DATABASE_URL: withDatabase(cluster.url, "readonly"),
      PORT: String(port),
      RATE_LIMIT_PARTNER_PER_MIN: "0",
      // Jobs every second: during the outage they skip quietly instead of logging failures.
      JOB_SCHEDULES: "auth-prune=* * * * * *",
    });
    const logText = new Response(child.stdout).text();
    await waitForHttp(`${base}/readyz`, 30_000);

    const signed = await liveKeyCaller(base, ADMIN, "ReadOnly", ["credit", "users", "read"]);
    const user = await signed("POST", "/api/partner/users", { external_id: "read-only-1" }, newIdempotencyKey());
    expect(user.status).toBe(201);
    const userId = String(user.body.user.id);
    const credit = (idem: string) => signed("POST", "/api/salutes/credit", { user_id: userId, amount: 3, reason: "read_only", source: "read-only-test" }, idem);
    expect((await credit(newIdempotencyKey())).status).toBe(200);

    // Read-only for every session, the pool's open ones included (a reload applies the server's setting to them).
    await admin.run("ALTER SYSTEM SET default_transaction_read_only = on");
    await admin.run("SELECT pg_reload_conf()");
    await Bun.sleep(500);
    const refused: string[] = [];
    const answers: Array<{ kind: string; status: number; error: string | null; retryAfter: string | null }> = [];
    for (let i = 0; i < 6; i++) {
      const idem = `ro-${i}-${newIdempotencyKey()}`;
      refused.push(idem);
      const c = await credit(idem);
      answers.push({ kind: "credit", status: c.status, error: c.body.error ?? null, retryAfter: c.retryAfter });
      const g = await signed("GET", `/api/salutes/balance?user_id=${userId}`, null, null);
      answers.push({ kind: "signed GET", status: g.status, error: g.body.error ?? null, retryAfter: g.retryAfter });
      await Bun.sleep(300);
    }
    for (const a of answers)
      expect({ ...a, retryAfter: a.retryAfter !== null }).toEqual({ kind: a.kind, status: 503, error: "db_unavailable", retryAfter: true });
    const t0 = performance.now();
    const ready = await fetch(`${base}/readyz`);
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain("read-only");

    // Writable again: served within seconds, by itself.
    // (The admin's own session first: a read-only transaction may not run ALTER SYSTEM.)
    await admin.run("SET default_transaction_read_only = off");
    await admin.run("ALTER SYSTEM RESET default_transaction_read_only");
    await admin.run("SELECT pg_reload_conf()");
    const writableAt = performance.now();
    let retried = 0;
    for (const idem of refused) {
      for (let i = 0; i < 100 && performance.now() - writableAt < 10_000; i++) {
        const r = await credit(idem);
        if (r.status === 200) {
          retried++;
          break;
        }
        expect(r.body.error).toBe("db_unavailable");
        await Bun.sleep(100);
      }
    }
    expect(retried).toBe(refused.length);
    expect(performance.now() - writableAt).toBeLessThan(10_000);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    // Each refused credit, retried with its key, took effect once: the first credit and the six retries.
    const herald = new PostgresStore({ url: withDatabase(cluster.url, "readonly"), poolMax: 1 });
    const rows = await herald.all<{ idempotency_key: string }>("SELECT idempotency_key FROM salutes_ledger");
    await herald.close();
    await admin.close();
    expect(rows).toHaveLength(1 + refused.length);
    expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(rows.length);

    // The outage ends in the log at the first answer a second after the last refusal (src/db/health.ts): give it that.
    await Bun.sleep(1_500);
    child.kill("SIGTERM");
    await child.exited;
    const lines = (await logText)
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.msg === "database unavailable")).toHaveLength(1);
    expect(String(lines.find((l) => l.msg === "database unavailable")?.reason)).toContain("read-only");
    expect(lines.filter((l) => l.msg === "database available again").length).toBeGreaterThanOrEqual(1);
    expect(lines.filter((l) => l.level === "error")).toEqual([]);
  },
  90_000,
);

testOn("postgres", "test/postgres/read-only-database.test.ts", test.skipIf(!pg))(
  "started on a read-only PostgreSQL: waits without listening, says why once; writable: starts by itself. A CLI command fails at once in one line",
  async () => {
    const own = await startCluster();
    try {
      const admin = new PostgresStore({ url: own.url, poolMax: 1 });
      await admin.run("CREATE DATABASE waiting");
      await admin.run("ALTER SYSTEM SET default_transaction_read_only = on");
      await admin.run("SELECT pg_reload_conf()");
      const env = { ...SERVE_ENV, DATABASE_URL: withDatabase(own.url, "waiting") };
      // A command that needs the database: one line naming the cause, exit 1, no stack trace.
      const cli = spawnHerald(["keys", "list"], env);
      const [cliErr, cliCode] = await Promise.all([new Response(cli.stderr).text(), cli.exited]);
      expect(cliCode).toBe(1);
      expect(cliErr).toContain("takes no writes");
      expect(cliErr).not.toContain("    at ");

      const port = freePort();
      const server = spawnHerald(["serve"], { ...env, PORT: String(port) });
      try {
        const out = new Response(server.stdout).text();
        await Bun.sleep(3_000);
        // Not listening (a load balancer sees it not ready), still running.
        expect(
          await fetch(`http://127.0.0.1:${port}/healthz`).then(
            () => "answered",
            () => "refused",
          ),
        ).toBe("refused");
        expect(server.exitCode).toBeNull();
        await admin.run("SET default_transaction_read_only = off");
        await admin.run("ALTER SYSTEM RESET default_transaction_read_only");
        await admin.run("SELECT pg_reload_conf()");
        await admin.close();
        await waitForHttp(`http://127.0.0.1:${port}/readyz`, 15_000);
        server.kill("SIGTERM");
        expect(await server.exited).toBe(0);
        const lines = (await out)
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        const waits = lines.filter((l) => l.msg === "the database takes no writes: waiting for it to become writable before starting");
        expect(waits).toHaveLength(1);
        expect(String(waits[0]!.reason)).toContain("read-only");
        expect(lines.map((l) => l.msg)).toContain("the database takes writes: starting");
        expect(lines.map((l) => l.msg)).toContain("herald listening");
      } finally {
        server.kill("SIGKILL");
      }
    } finally {
      own.stop();
    }
  },
  90_000,
);
