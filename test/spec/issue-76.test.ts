// Issue 76 (PostgreSQL high availability), re-verified: "Every 'the database cannot take this write now' state —
// read-only transaction, in recovery, admin shutdown, cannot-connect-now, too many connections, and whatever else
// PostgreSQL's SQLSTATE classes say — is StoreUnavailable … Never a 500." test/postgres/read-only-database.test.ts
// drives the read-only one on a real cluster; this checks the mapping of each of the others the issue names.
import { afterAll, expect, test } from "bun:test";
import { newIdempotencyKey } from "../../src/client/sign";
import { PostgresStore } from "../../src/db/postgres-engine";
import { StoreUnavailable } from "../../src/db/port";
import { mapped } from "../../src/db/postgres-wire";
import { testEngine, withDatabase } from "../support/engine";
import { liveKeyCaller } from "../support/partner";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { freePort, spawnHerald, waitForHttp } from "../support/process";
import { testOn } from "../support/skipped";

/** An error as Bun's SQL client raises a server's refusal: the SQLSTATE in errno. */
const serverError = (sqlstate: string, message: string) => Object.assign(new Error(message), { code: "ERR_POSTGRES_SERVER_ERROR", errno: sqlstate });

test("each state the issue names is StoreUnavailable; a plain bug stays what it was", () => {
  const states: Array<[string, string]> = [
    ["25006", "cannot execute INSERT in a read-only transaction"], // read-only, and a write on a standby in recovery
    ["57P01", "terminating connection due to administrator command"], // admin shutdown
    ["57P02", "terminating connection due to crash of another server process"],
    ["57P03", "the database system is starting up"], // cannot connect now (also a promotion under way)
    ["53300", "sorry, too many clients already"], // too many connections
    ["53100", "could not extend file: No space left on device"],
    ["08006", "connection failure"],
    ["58030", "could not read block"],
  ];
  const mappedAs = states.map(([s, m]) => [s, mapped(serverError(s, m)) instanceof StoreUnavailable]);
  expect(mappedAs).toEqual(states.map(([s]) => [s, true]));
  const bug = serverError("42703", 'column "nope" does not exist');
  expect(mapped(bug)).toBe(bug);
});

// Live, on a cluster of its own (PostgreSQL pass only): Herald's connections ended by the server (admin shutdown,
// 57P01) while the database refuses new ones (too many connections, 53300): every answer is 2xx or 503
// db_unavailable with Retry-After, never a 500; /readyz says 503; taking connections again, Herald serves by itself.
const pg = testEngine() === "postgres" && postgresPresent("test/spec/issue-76.test.ts");
const ADMIN = "hat_issue76_admin_token_0123456789abcdefghijklmnop";
let cluster: TestCluster | undefined;
let child: ReturnType<typeof spawnHerald> | undefined;
afterAll(() => {
  child?.kill("SIGKILL");
  cluster?.stop();
});

testOn("postgres", "test/spec/issue-76.test.ts", test.skipIf(!pg))(
  "connections ended by the server, new ones refused (too many connections): 503 with Retry-After, never 500; then served again",
  async () => {
    cluster = await startCluster();
    const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
    // Herald as an ordinary role: a database's connection limit does not bind a superuser.
    await admin.run("CREATE ROLE h76 LOGIN");
    await admin.run("CREATE DATABASE outage76 OWNER h76");
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    child = spawnHerald(["serve"], {
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      BOOTSTRAP_CREDENTIALS: "0",
      ADMIN_TOKEN: ADMIN,
      HERALD_MASTER_KEY: "cd".repeat(32),
      DATABASE_URL: withDatabase(cluster.url, "outage76").replace("//herald@", "//h76@"),
      PORT: String(port),
      RATE_LIMIT_PARTNER_PER_MIN: "0",
      JOB_SCHEDULES: "auth-prune=* * * * * *",
    });
    const logText = new Response(child.stdout).text();
    await waitForHttp(`${base}/readyz`, 30_000);
    const signed = await liveKeyCaller(base, ADMIN, "Outage", ["credit", "users", "read"]);
    const user = await signed("POST", "/api/partner/users", { external_id: "outage-76" }, newIdempotencyKey());
    expect(user.status).toBe(201);
    const credit = (idem: string) =>
      signed("POST", "/api/salutes/credit", { user_id: String(user.body.user.id), amount: 2, reason: "outage", source: "issue-76" }, idem);
    expect((await credit(newIdempotencyKey())).status).toBe(200);

    await admin.run("ALTER DATABASE outage76 CONNECTION LIMIT 0");
    await admin.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'outage76'");
    const answers: Array<{ status: number; error: string | null; retryAfter: boolean }> = [];
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      const idem = `o76-${i}-${newIdempotencyKey()}`;
      keys.push(idem);
      const r = await credit(idem);
      answers.push({ status: r.status, error: r.body.error ?? null, retryAfter: r.retryAfter !== null });
      await Bun.sleep(200);
    }
    for (const a of answers) expect(a).toEqual({ status: 503, error: "db_unavailable", retryAfter: true });
    expect((await fetch(`${base}/readyz`)).status).toBe(503);

    await admin.run("ALTER DATABASE outage76 CONNECTION LIMIT -1");
    const back = performance.now();
    for (const idem of keys) {
      let status = 0;
      while (performance.now() - back < 15_000) {
        const r = await credit(idem);
        status = r.status;
        if (status === 200) break;
        expect({ status, error: r.body.error }).toEqual({ status: 503, error: "db_unavailable" });
        await Bun.sleep(100);
      }
      expect(status).toBe(200);
    }
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    await admin.close();
    child.kill("SIGTERM");
    await child.exited;
    const lines = (await logText)
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([]);
  },
  90_000,
);
