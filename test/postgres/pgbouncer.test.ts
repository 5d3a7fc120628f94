// Herald behind PgBouncer (issue 76). The real pooler (Debian's `pgbouncer`; Debian 12 ships 1.18) runs
// deploy/pgbouncer.ini — the file operators install, with only its listen address and port, system paths, auth file
// and database line replaced — on 127.0.0.1 in front of a throwaway cluster whose role carries the timeouts the file
// tells operators to set (ALTER ROLE … SET). Two `herald serve` processes (dist/herald with HERALD_TEST_TARGET) reach
// the database only through it, under a few seconds of mixed load: signed credits with Idempotency-Keys, one in five
// sent again with its key to the other instance, signed balance reads, and every credit's event delivered to a real
// receiver. Checks: no 5xx (every answer 200, each resent credit 409 idempotency_replay with the first answer), one
// ledger row per acknowledged credit under its key, balances = Σ ledger, one event per entry, each delivered; the
// sessions ran with the role's timeouts (no warning) and PgBouncer logged no pooler error.
//
// Then the shipped file with the transaction-mode lines as PgBouncer 1.18 can run them (no prepared statements) and
// with the startup parameters not ignored: `herald serve` exits 1 with one line naming the fix, no stack trace.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newIdempotencyKey } from "../../src/client/sign";
import { PostgresStore } from "../../src/db/postgres-engine";
import { testEngine, withDatabase } from "../support/engine";
import { signedCaller, type SignedAnswer } from "../support/partner";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { exitWithin, freePort, REPO_ROOT, spawnHerald, targetBinary, waitForHttp } from "../support/process";
import { startReceiver } from "../support/receiver";
import { reportSkipped, testOn } from "../support/skipped";

const FILE = "test/postgres/pgbouncer.test.ts";
const ADMIN = "hat_pgbouncer_admin_token_0123456789abcdefghijk";
const MASTER_KEY = "cf".repeat(32);
/** The password the instances give PgBouncer (its auth file holds it); the cluster itself trusts 127.0.0.1. */
const PASSWORD = "pgbouncer-test-password";
const USERS = 6;
/** A bounded load: requests in flight at once, each worker pausing PACE_MS between them, for this long, at most this many. */
const WORKERS = 6;
const PACE_MS = 5;
const LOAD_MS = 4_000;
const MAX_OPS = 4_000;

function pgbouncerBinary(): string | null {
  for (const p of [Bun.which("pgbouncer"), "/usr/sbin/pgbouncer", "/usr/local/bin/pgbouncer"]) if (p && existsSync(p)) return p;
  return null;
}

// Its own cluster, whatever the suite's engine: run once, in the PostgreSQL pass (and against dist/herald in CI).
const pg = testEngine() === "postgres" && postgresPresent(FILE);
const PGBOUNCER = pgbouncerBinary();
if (pg && !PGBOUNCER) reportSkipped(FILE, "PgBouncer is absent (apt-get install -y pgbouncer)");
const SHIPPED = readFileSync(join(REPO_ROOT, "deploy", "pgbouncer.ini"), "utf8");

const dir = mkdtempSync(join(tmpdir(), "herald-pgbouncer-"));
// PgBouncer refuses to run as root: as root it runs as `postgres` (as Debian's unit does), which must read its files.
chmodSync(dir, 0o755);
let cluster: Promise<TestCluster> | undefined;
const children: Array<{ kill(signal?: number | NodeJS.Signals): void }> = [];
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await cluster?.then((c) => c.stop()).catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

/** A database of its own on this file's cluster; the cluster's port. */
async function database(name: string): Promise<{ port: number; direct: string }> {
  cluster ??= startCluster();
  const c = await cluster;
  const admin = new PostgresStore({ url: c.url, poolMax: 1 });
  await admin.run(`CREATE DATABASE ${name}`);
  await admin.close();
  return { port: Number(new URL(c.url).port), direct: withDatabase(c.url, name) };
}

interface Variant {
  /** The transaction-mode lines as PgBouncer 1.18 runs them: pool_mode = transaction, max_prepared_statements unset. */
  transaction?: boolean;
  /** Without the shipped ignore_startup_parameters line. */
  keepStartupParameters?: boolean;
}

/**
 * deploy/pgbouncer.ini as this test runs it: where it listens (127.0.0.1, a free port, no Unix socket), the system
 * paths a throwaway process cannot use (log and pid files: its log goes to stderr), the auth file and the database line
 * replaced; pooling, startup parameters, sizing and retries as shipped. A line this test expects but cannot find fails
 * it, so the file and the test cannot drift apart silently.
 */
function pgbouncerConfig(listenPort: number, pgPort: number, dbname: string, variant: Variant = {}): string {
  let text = SHIPPED;
  const swap = (pattern: RegExp, replacement: string) => {
    if (!pattern.test(text)) throw new Error(`deploy/pgbouncer.ini has no line matching ${pattern}: bring ${FILE} up to date with it`);
    text = text.replace(pattern, replacement);
  };
  swap(/^herald = host=\S+ port=5432 dbname=herald$/m, `herald = host=127.0.0.1 port=${pgPort} dbname=${dbname}`);
  swap(/^listen_addr = \S+$/m, "listen_addr = 127.0.0.1");
  swap(/^listen_port = 6432$/m, `listen_port = ${listenPort}`);
  swap(/^unix_socket_dir = \S+$/m, "unix_socket_dir =");
  swap(/^logfile = \S+\n/m, "");
  swap(/^pidfile = \S+\n/m, "");
  const authFile = join(dir, `userlist-${listenPort}.txt`);
  writeFileSync(authFile, `"herald" "${PASSWORD}"\n`);
  swap(/^auth_file = \S+$/m, `auth_file = ${authFile}`);
  if (variant.transaction) {
    swap(/^pool_mode = session$/m, "pool_mode = transaction");
    swap(/^;pool_mode = transaction$/m, "");
  }
  if (variant.keepStartupParameters) swap(/^ignore_startup_parameters = .*\n/m, "");
  return text;
}

/** PgBouncer on 127.0.0.1 with `config`; resolves once it accepts connections. Its log (stderr) for the checks. */
async function startPgbouncer(listenPort: number, config: string) {
  const path = join(dir, `pgbouncer-${listenPort}.ini`);
  writeFileSync(path, config);
  const asRoot = process.getuid?.() === 0;
  const proc = Bun.spawn([PGBOUNCER!, ...(asRoot ? ["-u", "postgres"] : []), path], { stdout: "pipe", stderr: "pipe" });
  children.push(proc);
  const log = new Response(proc.stderr).text();
  for (let i = 0; ; i++) {
    const open = await Bun.connect({ hostname: "127.0.0.1", port: listenPort, socket: { data() {} } }).then(
      (s) => (s.end(), true),
      () => false,
    );
    if (open) break;
    if (i >= 100 || proc.exitCode !== null) {
      proc.kill("SIGKILL");
      throw new Error(`PgBouncer did not listen on ${listenPort}:\n${await log}`);
    }
    await Bun.sleep(50);
  }
  return {
    url: `postgres://herald:${PASSWORD}@127.0.0.1:${listenPort}/herald`,
    /** Stops it (SIGINT: its fast shutdown) and answers what it logged. */
    async stop(): Promise<string> {
      proc.kill("SIGINT");
      await exitWithin(proc, 5_000);
      return await log;
    },
  };
}

/** What the instances run with, beside their DATABASE_URL and port. */
const SERVE_ENV: Record<string, string> = {
  HOST: "127.0.0.1",
  LOG_LEVEL: "warn",
  NODE_ENV: "development",
  BOOTSTRAP_CREDENTIALS: "0",
  ADMIN_TOKEN: ADMIN,
  HERALD_MASTER_KEY: MASTER_KEY,
  RATE_LIMIT_PARTNER_PER_MIN: "0",
  RATE_LIMIT_WEBHOOK_PER_MIN: "0",
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
  WEBHOOK_TIMEOUT_SECONDS: "2",
  WEBHOOK_RETRY_BASE_SECONDS: "1",
  WEBHOOK_RETRY_MAX_SECONDS: "2",
};

/** Log lines (JSON) of a finished process's stdout. */
const jsonLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test("deploy/pgbouncer.ini: session pooling, Herald's startup parameters ignored, a short login retry; docs/postgres.md quotes it as it is", () => {
  const settings = new Map(
    SHIPPED.split("\n")
      .filter((l) => /^[a-z_]+ = /.test(l))
      .map((l) => l.split(" = ") as [string, string]),
  );
  expect(settings.get("pool_mode")).toBe("session");
  expect(settings.get("ignore_startup_parameters")?.split(",").sort()).toEqual(["idle_in_transaction_session_timeout", "statement_timeout"]);
  expect(settings.get("server_login_retry")).toBe("1");
  // 2 instances × (DATABASE_POOL_MAX + 1) and one CLI command at the default pool size.
  expect(Number(settings.get("default_pool_size"))).toBeGreaterThanOrEqual(3 * 11);
  expect(SHIPPED).toContain("\n;pool_mode = transaction\n;max_prepared_statements = ");
  const doc = readFileSync(join(REPO_ROOT, "docs", "postgres.md"), "utf8");
  const excerpt = /```ini\n; \/etc\/pgbouncer\/pgbouncer\.ini \(excerpt of deploy\/pgbouncer\.ini\)\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(excerpt).toBeDefined();
  const lines = excerpt!.split("\n").filter((l) => l.trim() !== "");
  expect(lines.length).toBeGreaterThan(5);
  expect(lines.filter((l) => !SHIPPED.split("\n").includes(l))).toEqual([]);
});

testOn("postgres", FILE, test.skipIf(!pg || !PGBOUNCER))(
  "two instances through PgBouncer in session mode: no 5xx, every acknowledged credit once, retries answered the first answer, every event delivered",
  async () => {
    const began = Date.now();
    const { port: pgPort, direct } = await database("pgbouncer_session");
    const db = new PostgresStore({ url: direct, poolMax: 2 });
    // What docs/postgres.md tells operators to do, since PgBouncer drops the two startup parameters that carry them.
    await db.run("ALTER ROLE herald SET statement_timeout = '30s'");
    await db.run("ALTER ROLE herald SET idle_in_transaction_session_timeout = '60s'");
    const listenPort = freePort();
    const pooler = await startPgbouncer(listenPort, pgbouncerConfig(listenPort, pgPort, "pgbouncer_session"));
    const rx = startReceiver();

    const start = async (label: "A" | "B") => {
      const port = freePort();
      const proc = spawnHerald(["serve"], { ...SERVE_ENV, DATABASE_URL: pooler.url, PORT: String(port), HERALD_INSTANCE_ID: label });
      children.push(proc);
      const out = new Response(proc.stdout).text();
      const err = new Response(proc.stderr).text();
      const base = `http://127.0.0.1:${port}`;
      await waitForHttp(`${base}/readyz`, 30_000).catch(async (e) => {
        proc.kill("SIGKILL");
        throw new Error(`instance ${label} did not start through PgBouncer: ${(e as Error).message}\n${await out}\n${await err}`);
      });
      return { label, base, proc, out, err };
    };
    // A starts alone on the empty database (it migrates), then B.
    const instances = [await start("A"), await start("B")] as const;

    const created = (await (
      await fetch(`${instances[0].base}/admin/partners/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        body: JSON.stringify({ partner: "Pooled", mode: "live", scopes: ["credit", "users", "webhooks", "read"] }),
      })
    ).json()) as { key: { key_id: string }; secret: string };
    const key = { id: created.key.key_id, secret: created.secret };
    const callers = instances.map((i) => signedCaller(i.base, key));
    const users: string[] = [];
    for (let i = 0; i < USERS; i++) {
      const r = await callers[i % 2]!("POST", "/api/partner/users", { external_id: `pooled-${i}` }, newIdempotencyKey());
      expect(r.status).toBe(201);
      users.push(String(r.body.user.id));
    }
    expect((await callers[1]!("POST", "/api/partner/webhooks", { target_url: rx.url(), event_type: "salutes.credit" }, newIdempotencyKey())).status).toBe(201);

    // The load: credits and balance reads spread over both instances; one credit in five sent again with its key to
    // the other instance once answered (a new nonce: how a partner retries an answer it did not keep).
    const answers: Array<{ op: number; kind: "credit" | "again" | "read"; instance: string; status: number; error: string | null }> = [];
    /** Idempotency-Key → the ledger entry the client was answered with. */
    const acknowledged = new Map<string, number>();
    const resent: Array<{ idem: string; first: Record<string, unknown>; again: SignedAnswer }> = [];
    const loadStart = Date.now();
    let next = 0;
    const runOp = async (op: number) => {
      const [here, there] = op % 2 === 0 ? [0, 1] : [1, 0];
      const user = users[op % USERS]!;
      const note = (kind: (typeof answers)[number]["kind"], i: number, r: SignedAnswer) =>
        answers.push({ op, kind, instance: instances[i]!.label, status: r.status, error: (r.body.error as string) ?? null });
      if (op % 4 === 3) {
        note("read", here, await callers[here]!("GET", `/api/salutes/balance?user_id=${user}`, null, null));
        return;
      }
      const idem = `pooled-${op}-${newIdempotencyKey()}`;
      const body = { user_id: user, amount: 1 + (op % 7), reason: "pooled", source: "pgbouncer" };
      const first = await callers[here]!("POST", "/api/salutes/credit", body, idem);
      note("credit", here, first);
      if (first.status !== 200) return;
      acknowledged.set(idem, first.body.ledger_entry_id as number);
      if (op % 5 === 0) {
        const again = await callers[there]!("POST", "/api/salutes/credit", body, idem);
        note("again", there, again);
        resent.push({ idem, first: first.body, again });
      }
    };
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (Date.now() - loadStart < LOAD_MS && next < MAX_OPS) {
          await runOp(next++);
          await Bun.sleep(PACE_MS);
        }
      }),
    );
    const loadMs = Date.now() - loadStart;

    // Every answer as it should be: 200, and each resent credit 409 idempotency_replay with the first answer.
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    expect(answers.filter((a) => a.status !== (a.kind === "again" ? 409 : 200))).toEqual([]);
    expect(answers.length).toBeGreaterThan(100);
    expect(resent.length).toBeGreaterThan(10);
    for (const r of resent)
      expect({ idem: r.idem, error: r.again.body.error, status: r.again.body.original_status, answer: r.again.body.original_response }).toEqual({
        idem: r.idem,
        error: "idempotency_replay",
        status: 200,
        answer: r.first,
      });

    // Both instances' sessions reached the server through the pooler with their names and the role's timeouts.
    const names = await db.all<{ application_name: string }>("SELECT DISTINCT application_name FROM pg_stat_activity WHERE datname = 'pgbouncer_session'");
    expect(names.map((n) => n.application_name)).toEqual(expect.arrayContaining(["herald A", "herald B"]));
    const viaPooler = new PostgresStore({ url: pooler.url, poolMax: 1 });
    expect(
      await viaPooler.get("SELECT current_setting('statement_timeout') AS statement, current_setting('idle_in_transaction_session_timeout') AS idle"),
    ).toEqual({ statement: "30s", idle: "1min" });
    await viaPooler.close();

    // Every delivery settles (both instances dispatch).
    for (let i = 0; i < 150; i++) {
      const open = await db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status NOT IN ('succeeded', 'dead_letter', 'cancelled')");
      if (open?.n === 0) break;
      await Bun.sleep(100);
    }

    // Ledger = acknowledged: one row per acknowledged credit, under its key, with the id the client was answered.
    const rows = await db.all<{ id: number; idempotency_key: string }>("SELECT id, idempotency_key FROM salutes_ledger ORDER BY id");
    expect(rows.length).toBe(acknowledged.size);
    expect(rows.filter((r) => acknowledged.get(r.idempotency_key) !== r.id)).toEqual([]);
    // balance = Σ ledger for every user.
    expect(
      await db.all(
        "SELECT b.user_id FROM salutes_balances b WHERE b.balance_minor <> (SELECT COALESCE(SUM(l.delta_minor), 0) FROM salutes_ledger l WHERE l.user_id = b.user_id)",
      ),
    ).toEqual([]);
    // One event per entry, each delivered, each event id received (once or more: a delivery may be resent).
    const events = await db.all<{ public_id: string; data: string }>("SELECT public_id, data FROM events WHERE event_type = 'salutes.credit'");
    expect(events.map((e) => (JSON.parse(e.data) as { ledger_entry_id: number }).ledger_entry_id).sort((x, y) => x - y)).toEqual(rows.map((r) => r.id));
    expect(await db.all("SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status")).toEqual([{ status: "succeeded", n: events.length }]);
    const received = new Set(rx.received.map((r) => r.headers["x-webhook-id"]));
    expect(events.filter((e) => !received.has(e.public_id)).map((e) => e.public_id)).toEqual([]);
    expect(received.size).toBe(events.length);

    // Stopped cleanly; nothing logged as an outage or an error, and no warning about the sessions' timeouts.
    for (const i of instances) i.proc.kill("SIGTERM");
    const codes = await Promise.all(instances.map((i) => exitWithin(i.proc, 15_000)));
    expect(codes).toEqual([0, 0]);
    for (const i of instances) {
      const lines = jsonLines(await i.out);
      expect({
        instance: i.label,
        bad: lines.filter((l) => l.level === "error" || l.msg === "database unavailable" || /timeouts/.test(String(l.msg))),
      }).toEqual({
        instance: i.label,
        bad: [],
      });
    }
    const pgbouncerLog = await pooler.stop();
    expect(pgbouncerLog.split("\n").filter((l) => / (WARNING|ERROR|FATAL) /.test(l))).toEqual([]);
    rx.stop();
    await db.close();
    const credits = answers.filter((a) => a.kind === "credit").length;
    console.log(
      `${targetBinary() ?? "bun src/main.ts serve"} through PgBouncer (${PGBOUNCER}, session pooling, deploy/pgbouncer.ini): ${answers.length} answers in ${loadMs} ms over 2 instances ` +
        `(${credits} credits, ${resent.length} resent with their key, ${answers.filter((a) => a.kind === "read").length} signed reads), 0 5xx; ` +
        `${rows.length} ledger rows, ${events.length} events delivered; ${Math.round((Date.now() - began) / 1000)} s in all`,
    );
  },
  90_000,
);

testOn("postgres", FILE, test.skipIf(!pg || !PGBOUNCER))(
  "a pooler Herald cannot run behind: transaction pooling on PgBouncer without prepared statements, startup parameters refused — exit 1, one line naming the fix",
  async () => {
    const cases: Array<{ variant: Variant; db: string; fix: RegExp[] }> = [
      {
        variant: { transaction: true },
        db: "pgbouncer_transaction",
        fix: [
          /prepared statement "[^"]+" (already exists|does not exist)/,
          /PgBouncer in transaction mode needs version 1\.21 or later with max_prepared_statements > 0/,
          /session pooling/,
        ],
      },
      {
        variant: { keepStartupParameters: true },
        db: "pgbouncer_parameters",
        fix: [/unsupported startup parameter: statement_timeout/, /ignore_startup_parameters/, /ALTER ROLE herald SET statement_timeout/],
      },
    ];
    for (const c of cases) {
      const { port: pgPort } = await database(c.db);
      const listenPort = freePort();
      const pooler = await startPgbouncer(listenPort, pgbouncerConfig(listenPort, pgPort, c.db, c.variant));
      const proc = spawnHerald(["serve"], { ...SERVE_ENV, DATABASE_URL: pooler.url, PORT: String(freePort()) });
      children.push(proc);
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), exitWithin(proc, 30_000)]);
      await pooler.stop();
      const said = err.trim();
      expect({ variant: c.variant, code, lines: said.split("\n").length, stack: said.includes("    at ") }).toEqual({
        variant: c.variant,
        code: 1,
        lines: 1,
        stack: false,
      });
      for (const fix of c.fix) expect(said).toMatch(fix);
      // Never listening: nothing in the log says it started.
      expect(jsonLines(out).map((l) => l.msg)).not.toContain("herald listening");
    }
  },
  60_000,
);
