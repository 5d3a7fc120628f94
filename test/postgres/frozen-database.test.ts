// A PostgreSQL that stops answering — every process of the cluster frozen with SIGSTOP, as a stalled host, a
// network partition or a failover in progress looks to a client — under light load on a `herald serve` process
// (dist/herald with HERALD_TEST_TARGET). While it is frozen every request answers within its deadline
// (DATABASE_*_TIMEOUT_MS, 5 s by default) + 1 s with 503 db_unavailable and Retry-After, and /readyz within 1 s
// with 503 and the reason. After SIGCONT the service answers again within 2 s with nothing from the operator; the
// pool is not wedged (a burst of credits all succeed); every credit refused during the freeze, retried with its
// Idempotency-Key, has exactly one effect; the outage is one warning and one "available again" line in the log.
import { afterAll, expect, test } from "bun:test";
import { newIdempotencyKey } from "../../src/client/sign";
import { PostgresStore } from "../../src/db/postgres-engine";
import { testEngine, withDatabase } from "../support/engine";
import { signedCaller } from "../support/partner";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { freePort, spawnHerald, targetBinary, waitForHttp } from "../support/process";
import { testOn } from "../support/skipped";

// Its own cluster, whatever the suite's engine: run once, in the PostgreSQL pass (and against dist/herald in CI).
const pg = testEngine() === "postgres" && postgresPresent("test/postgres/frozen-database.test.ts");
const ADMIN = "hat_frozen_admin_token_0123456789abcdefghijklmnop";
const MASTER_KEY = "cd".repeat(32);
const FREEZE_MS = 15_000;
/** The default request-path deadline (DATABASE_QUERY_TIMEOUT_MS and DATABASE_TRANSACTION_TIMEOUT_MS). */
const DEADLINE_MS = 5_000;
/** How soon after SIGCONT a credit succeeds again (docs/postgres.md quotes the figures). */
const RECOVERY_BOUND_MS = 2_000;

let cluster: TestCluster | undefined;
let frozen = false;
let child: ReturnType<typeof spawnHerald> | undefined;
afterAll(() => {
  if (frozen) cluster?.signalAll("SIGCONT");
  child?.kill("SIGKILL");
  cluster?.stop();
});

interface Answer {
  kind: string;
  status: number;
  error: string | null;
  retryAfter: string | null;
  ms: number;
  startedAt: number;
}

testOn("postgres", "test/postgres/frozen-database.test.ts", test.skipIf(!pg))(
  "a frozen PostgreSQL: 503 within the deadline, /readyz within 1 s, recovery within 2 s of SIGCONT, nothing lost or doubled",
  async () => {
    cluster = await startCluster();
    const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
    await admin.run("CREATE DATABASE frozen");
    await admin.close();
    const dbUrl = withDatabase(cluster.url, "frozen");
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    child = spawnHerald(["serve"], {
      DATABASE_URL: dbUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      NODE_ENV: "development",
      BOOTSTRAP_CREDENTIALS: "0",
      ADMIN_TOKEN: ADMIN,
      HERALD_MASTER_KEY: MASTER_KEY,
      RATE_LIMIT_PARTNER_PER_MIN: "0",
      RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
      METRICS_PUBLIC: "1",
      // Jobs on every second, so that their back-off during the outage shows in the log.
      JOB_SCHEDULES: "auth-prune=* * * * * *",
    });
    const logText = new Response(child.stdout).text();
    await waitForHttp(`${base}/readyz`, 30_000);

    const bearer = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
    const created = (await (
      await fetch(`${base}/admin/partners/keys`, {
        method: "POST",
        headers: bearer,
        body: JSON.stringify({ partner: "Frozen", mode: "live", scopes: ["credit", "debit", "users", "read"] }),
      })
    ).json()) as { key: { key_id: string }; secret: string };
    const key = { id: created.key.key_id, secret: created.secret };

    const signed = signedCaller(base, key);

    const user = await signed("POST", "/api/partner/users", { external_id: "frozen-1" }, newIdempotencyKey());
    expect(user.status).toBe(201);
    const userId = String(user.body.user.id);
    const credit = (idem: string, timeoutMs?: number) =>
      signed("POST", "/api/salutes/credit", { user_id: userId, amount: 7, reason: "freeze", source: "frozen-database" }, idem, timeoutMs);
    const acknowledged = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const idem = `warm-${i}-${newIdempotencyKey()}`;
      const r = await credit(idem);
      expect(r.status).toBe(200);
      acknowledged.add(idem);
    }

    // The freeze, under light load: a credit, a signed read and the readiness probe every 400 ms.
    const answers: Answer[] = [];
    const refusedCredits: string[] = [];
    const timed = async (kind: string, work: () => Promise<{ status: number; retryAfter: string | null; body: Record<string, any> }>) => {
      const t0 = performance.now();
      let a: Answer;
      try {
        const r = await work();
        a = { kind, status: r.status, error: r.body.error ?? null, retryAfter: r.retryAfter, ms: performance.now() - t0, startedAt: t0 };
      } catch (err) {
        a = { kind, status: 0, error: `no answer: ${(err as Error).message}`, retryAfter: null, ms: performance.now() - t0, startedAt: t0 };
      }
      answers.push(a);
      return a;
    };
    frozen = true;
    expect(cluster.signalAll("SIGSTOP")).toBeGreaterThan(1);
    const frozenAt = performance.now();
    const inFlight: Array<Promise<unknown>> = [];
    // Requests start until 2 × the deadline before the thaw, so each one's whole deadline falls inside the freeze.
    for (let i = 0; performance.now() - frozenAt < FREEZE_MS - 2 * DEADLINE_MS - 500 && i < 100; i++) {
      const idem = `frozen-${i}-${newIdempotencyKey()}`;
      inFlight.push(
        timed("credit", () => credit(idem)).then((a) => {
          if (a.status === 200) acknowledged.add(idem);
          else refusedCredits.push(idem);
        }),
      );
      inFlight.push(timed("signed GET", () => signed("GET", `/api/salutes/balance?user_id=${userId}`, null, null)));
      inFlight.push(
        timed("readyz", async () => {
          const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(30_000) });
          return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as Record<string, any> };
        }),
      );
      await Bun.sleep(400);
    }
    await Promise.all(inFlight);
    // /metrics keeps answering during the outage, and says so (the gauges it cannot read from the database are NaN).
    // Open, as a Prometheus on a private network scrapes it: an admin token is checked against the database.
    const during = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(6_000) });
    expect(during.status).toBe(200);
    expect(await during.text()).toMatch(/^herald_db_unavailable 1$/m);
    const sinceFreeze = performance.now() - frozenAt;
    expect(sinceFreeze).toBeLessThan(FREEZE_MS);
    await Bun.sleep(FREEZE_MS - sinceFreeze);

    cluster.signalAll("SIGCONT");
    frozen = false;
    const thawedAt = performance.now();
    // Recovery: the first credit that succeeds after the thaw, polled every 100 ms.
    let recoveredMs = Number.POSITIVE_INFINITY;
    const polls: string[] = [];
    for (let i = 0; i < 100 && performance.now() - thawedAt < 10_000; i++) {
      const idem = `thaw-${i}-${newIdempotencyKey()}`;
      const t0 = performance.now();
      const r: { status: number; body: Record<string, any> } = await credit(idem, 10_000).catch((err) => ({ status: 0, body: { error: String(err) } }));
      polls.push(`${Math.round(t0 - thawedAt)}+${Math.round(performance.now() - t0)}ms ${r.status} ${r.body?.error ?? ""} ${r.body?.message ?? ""}`);
      if (r.status === 200) {
        acknowledged.add(idem);
        recoveredMs = performance.now() - thawedAt;
        break;
      }
      refusedCredits.push(idem);
      await Bun.sleep(100);
    }
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);

    const byKind = (kind: string) => answers.filter((a) => a.kind === kind);
    // Every answer during the freeze: a 503 db_unavailable with Retry-After, within the deadline + 1 s.
    for (const a of answers) {
      expect({ kind: a.kind, status: a.status, error: a.error }).toEqual({
        kind: a.kind,
        status: 503,
        error: a.kind === "readyz" ? "service_unavailable" : "db_unavailable",
      });
      if (a.kind !== "readyz") expect(a.retryAfter).not.toBeNull();
      expect(a.ms).toBeLessThan(a.kind === "readyz" ? 1_000 : DEADLINE_MS + 1_000);
    }
    expect(byKind("credit").length).toBeGreaterThanOrEqual(5);
    expect(byKind("readyz").length).toBeGreaterThanOrEqual(5);
    if (recoveredMs >= 2_000 && process.env.FROZEN_LOG_LEVEL) {
      child.kill("SIGTERM");
      console.log(
        (await logText)
          .split("\n")
          .filter((l) => l.includes("database"))
          .slice(-30)
          .join("\n"),
      );
    }
    // Measured 0.5–0.8 s here, on a 2-core VM shared with a CI run (the probe's try in flight at the thaw is
    // answered once the cluster has worked through the few connection attempts queued while it was frozen).
    expect(recoveredMs, polls.join("\n")).toBeLessThan(RECOVERY_BOUND_MS);

    // Not wedged: a burst wider than the pool goes through at once.
    const burst = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const idem = `burst-${i}-${newIdempotencyKey()}`;
        const r = await credit(idem, 10_000);
        if (r.status === 200) acknowledged.add(idem);
        return r.status;
      }),
    );
    expect(burst.filter((s) => s !== 200)).toEqual([]);

    // Each refused credit retried with its Idempotency-Key: exactly one effect each.
    for (const idem of refusedCredits) {
      const r = await credit(idem, 10_000);
      expect(r.status).toBe(200);
      acknowledged.add(idem);
    }
    const db = new PostgresStore({ url: dbUrl, poolMax: 1 });
    try {
      const ledger = await db.all<{ n: number }>("SELECT count(*) AS n FROM salutes_ledger WHERE user_id = ?", [Number(userId)]);
      expect(ledger[0]!.n).toBe(acknowledged.size);
      const sums = await db.get<{ balance: number; total: number }>(
        "SELECT (SELECT balance_minor FROM salutes_balances WHERE user_id = ?) AS balance, (SELECT sum(delta_minor) FROM salutes_ledger WHERE user_id = ?) AS total",
        [Number(userId), Number(userId)],
      );
      expect(sums?.balance).toBe(sums?.total);
    } finally {
      await db.close();
    }

    const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    expect(metrics).toMatch(/^herald_db_outages_total [1-9]/m);
    expect(metrics).toMatch(/^herald_db_deadlines_total [1-9]/m);
    expect(metrics).toMatch(/^herald_db_unavailable 0$/m);

    child.kill("SIGTERM");
    await child.exited;
    const lines = (await logText)
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg: string; requests_refused?: number; down_ms?: number });
    // One warning when it went, one line when it came back (with what it cost); no error lines, no stack per job run.
    // Besides that warning, only the pool's replacement may warn (its server answered neither a statement nor
    // its cancellation), and the status page's incident when the minute's snapshot falls on the outage or its
    // 503s (status incident opened / closed: what the status page should say): nothing else, and no error lines.
    const expectedWarnings = new Set(["database unavailable", "database connections discarded", "status incident opened", "status incident closed"]);
    expect(lines.filter((l) => l.level === "warn" && !expectedWarnings.has(l.msg))).toEqual([]);
    expect(lines.filter((l) => l.msg === "database unavailable").length).toBe(1);
    const back = lines.filter((l) => l.msg === "database available again");
    expect(back.length).toBe(1);
    expect(back[0]!.requests_refused).toBeGreaterThanOrEqual(refusedCredits.length);
    expect(back[0]!.down_ms).toBeGreaterThan(FREEZE_MS - 2 * DEADLINE_MS);
    expect(lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([]);
    expect(lines.filter((l) => l.msg === "job skipped: database unavailable").length).toBeLessThanOrEqual(1);
    console.log(
      `frozen database (${targetBinary() ?? "source"}): ${answers.length} answers during the freeze, slowest ${Math.round(Math.max(...answers.filter((a) => a.kind !== "readyz").map((a) => a.ms)))} ms, readyz slowest ${Math.round(Math.max(...byKind("readyz").map((a) => a.ms)))} ms; recovered ${Math.round(recoveredMs)} ms after SIGCONT; ${refusedCredits.length} refused credits retried to one effect each`,
    );
  },
  120_000,
);
