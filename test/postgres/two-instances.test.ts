// The proof of issue 27: two `herald serve` processes on ONE PostgreSQL, a real webhook receiver, and a partner
// that does what partners do under failure. 2,000 signed credits and debits are spread over both instances; one
// in ten is sent to BOTH at the same moment with the same Idempotency-Key and nonce; instance B is SIGKILLed
// midway while the receiver holds its requests, and its unanswered requests are retried on A with the same key
// and a fresh nonce; B is restarted once A has taken over its job lease; then A's database sessions are
// terminated under load. Afterwards, in SQL: balance = Σ ledger and never negative; one ledger row per accepted
// request; one event per entry; for every delivery receiver requests ≤ attempts ≤ max_attempts + its interrupted
// attempts, and fewer than max_attempts interrupted; the attempts B had in flight are marked interrupted; no two runs of the singleton job overlap and A took it over within one
// lease period; every refusal while sessions were terminated was a 503, never a 500, and logged no error line.
import { afterAll, expect, test } from "bun:test";
import { newIdempotencyKey, newNonce, signRequest } from "../../src/client/sign";
import { PostgresStore } from "../../src/db/postgres-engine";
import { withDatabase } from "../support/engine";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { freePort, spawnHerald, waitForHttp } from "../support/process";

const pg = postgresPresent("test/postgres/two-instances.test.ts");
const OPS = 2_000;
const USERS = 8;
const IN_FLIGHT = 16;
const MAX_ATTEMPTS = 5;
const ADMIN = "hat_proof_admin_token_0123456789abcdefghijklmnop";
const MASTER_KEY = "ab".repeat(32);
/** job_leases' shortest lease (src/jobs/registry.ts): a takeover happens within it after the holder dies. */
const LEASE_MS = 30_000;

let cluster: TestCluster | undefined;
const children: Array<{ kill(signal?: number | NodeJS.Signals): void }> = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  cluster?.stop();
});

/** The receiver: counts requests per event id; while `hold` is on it keeps requests open and notes the ones whose sender died. */
function receiver() {
  const perEvent = new Map<string, number>();
  const released: Array<() => void> = [];
  const state = { hold: false, abortedWhileHeld: 0, total: 0 };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      await req.text();
      state.total++;
      const id = req.headers.get("x-webhook-id") ?? "?";
      perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
      if (state.hold) {
        let aborted = false;
        req.signal.addEventListener("abort", () => {
          aborted = true;
          state.abortedWhileHeld++;
        });
        await new Promise<void>((resolve) => released.push(resolve));
        if (aborted) return new Response(null, { status: 200 });
      }
      return new Response(null, { status: 204 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    perEvent,
    state,
    release() {
      state.hold = false;
      for (const r of released.splice(0)) r();
    },
    stop: () => server.stop(true),
  };
}

interface Instance {
  name: "A" | "B";
  url: string;
  proc: ReturnType<typeof spawnHerald>;
}

/** Each instance's last log lines (warnings and errors), printed when a check about it fails; and every error line. */
const logs = { A: [] as string[], B: [] as string[] };
const errorLines: string[] = [];
async function keepLines(name: "A" | "B", stream: ReadableStream<Uint8Array>): Promise<void> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      if (!line) continue;
      logs[name].push(`${name} ${line.slice(0, 400)}`);
      if (line.includes('"level":"error"')) errorLines.push(`${name} ${line.slice(0, 400)}`);
    }
    logs[name].splice(0, Math.max(0, logs[name].length - 200));
  }
}

async function startInstance(name: "A" | "B", env: Record<string, string>, port = freePort()): Promise<Instance> {
  const proc = spawnHerald(["serve"], { ...env, PORT: String(port), HERALD_INSTANCE_ID: name });
  children.push(proc);
  void keepLines(name, proc.stdout);
  void keepLines(name, proc.stderr);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, 30_000);
  return { name, url, proc };
}

type Outcome = { kind: "accepted"; entryId: number } | { kind: "refused"; error: string } | { kind: "retry"; why: string };

/** One signed call; a connection error (the instance died) is a retry, not a failure. */
async function call(base: string, key: { id: string; secret: string }, path: string, body: unknown, idem: string, nonce: string) {
  const raw = JSON.stringify(body);
  const signed = signRequest({ keyId: key.id, secret: key.secret, method: "POST", target: path, body: raw, nonce, timestamp: Math.floor(Date.now() / 1000) });
  const headers = { ...(signed.headers as unknown as Record<string, string>), "content-type": "application/json", "idempotency-key": idem };
  try {
    const res = await fetch(`${base}${path}`, { method: "POST", headers, body: raw, signal: AbortSignal.timeout(20_000) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  } catch (err) {
    return { status: 0, body: { error: `connection: ${(err as Error).message}` } };
  }
}

function outcomeOf(r: { status: number; body: Record<string, any> }): Outcome {
  if (r.status === 200) return { kind: "accepted", entryId: r.body.ledger_entry_id };
  if (r.status === 409 && r.body.error === "idempotency_replay") {
    return r.body.original_status === 200
      ? { kind: "accepted", entryId: r.body.original_response.ledger_entry_id }
      : { kind: "refused", error: "replayed refusal" };
  }
  if (r.status === 409 && (r.body.error === "insufficient_balance" || r.body.error === "conflict")) return { kind: "refused", error: r.body.error };
  // The twin of a doubled request, a request still running elsewhere, a lost session, a dead instance: try again.
  return { kind: "retry", why: `${r.status} ${r.body.error}` };
}

test.skipIf(!pg)(
  "two instances on one PostgreSQL lose no money, double no effect and deliver every event within bounds",
  async () => {
    cluster = await startCluster();
    const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
    await admin.run("CREATE DATABASE proof");
    await admin.close();
    const dbUrl = withDatabase(cluster.url, "proof");
    const db = new PostgresStore({ url: dbUrl, poolMax: 2 });
    const rx = receiver();
    const env = {
      DATABASE_URL: dbUrl,

      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      NODE_ENV: "development",
      BOOTSTRAP_CREDENTIALS: "0",
      ADMIN_TOKEN: ADMIN,
      HERALD_MASTER_KEY: MASTER_KEY,
      RATE_LIMIT_PARTNER_PER_MIN: "0",
      RATE_LIMIT_WEBHOOK_PER_MIN: "0",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
      WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      WEBHOOK_TIMEOUT_SECONDS: "2",
      WEBHOOK_RETRY_BASE_SECONDS: "1",
      WEBHOOK_RETRY_MAX_SECONDS: "2",
      DATABASE_POOL_MAX: "6",
      // A singleton job ticking every 2 s, so leadership and takeover show within the test.
      JOB_SCHEDULES: "auth-prune=*/2 * * * * *",
    };
    // B starts first and takes the singleton's lease; A starts once B holds it.
    let b = await startInstance("B", env);
    for (let i = 0; i < 100 && (await db.get<{ holder: string }>("SELECT holder FROM job_leases WHERE name = 'auth-prune'"))?.holder !== "B"; i++)
      await Bun.sleep(100);
    expect((await db.get<{ holder: string }>("SELECT holder FROM job_leases WHERE name = 'auth-prune'"))?.holder).toBe("B");
    const a = await startInstance("A", env);

    // A key, users and one webhook per event type, through the API.
    const bearer = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
    const created = (await (
      await fetch(`${a.url}/admin/partners/keys`, {
        method: "POST",
        headers: bearer,
        body: JSON.stringify({ partner: "Proof", mode: "live", scopes: ["credit", "debit", "users", "webhooks", "read"] }),
      })
    ).json()) as { key: { key_id: string }; secret: string };
    const key = { id: created.key.key_id, secret: created.secret };
    const users: string[] = [];
    for (let i = 0; i < USERS; i++) {
      const r = await call(a.url, key, "/api/partner/users", { external_id: `proof-${i}` }, newIdempotencyKey(), newNonce());
      expect(r.status).toBe(201);
      users.push(String(r.body.user.id));
    }
    for (const eventType of ["salutes.credit", "salutes.debit"]) {
      const r = await call(a.url, key, "/api/partner/webhooks", { target_url: rx.url, event_type: eventType }, newIdempotencyKey(), newNonce());
      expect(r.status).toBe(201);
    }

    // The load. Each logical request keeps its Idempotency-Key until it has a final answer.
    const ops = Array.from({ length: OPS }, (_, i) => ({
      idem: `proof-${i}-${newIdempotencyKey()}`,
      path: i % 3 === 2 ? "/api/salutes/debit" : "/api/salutes/credit",
      body: { user_id: users[i % USERS]!, amount: i % 3 === 2 ? 1 + (i % 23) : 1 + (i % 17), reason: "proof", source: "two-instances" },
      doubled: i % 10 === 5,
    }));
    const final = new Map<string, Outcome>();
    /** Every answer each request got, in order (instance, status, error): printed when a check fails. */
    const history = new Map<string, string[]>();
    const statuses = new Map<number, number>();
    const seen = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
    const instances = { a, b: b as Instance | null };
    let retries = 0;
    let killedAt = 0;
    /** When the restart loop first saw A hold the singleton's lease (0: it never did). */
    let takenOverAt = 0;
    let terminatedSessions = 0;
    let terminatedAt = 0;
    const startedAt = Date.now();

    async function settle(op: (typeof ops)[number], index: number): Promise<void> {
      let nonce = newNonce();
      for (let attempt = 0; attempt < 200; attempt++) {
        const target = instances.b && index % 2 === 1 ? instances.b : instances.a;
        let results: Array<{ status: number; body: Record<string, any> }>;
        if (op.doubled && attempt === 0 && instances.b) {
          // The same signed request to both instances at the same moment: one effect, whatever the interleaving.
          results = await Promise.all([instances.a.url, instances.b.url].map((u) => call(u, key, op.path, op.body, op.idem, nonce)));
        } else {
          results = [await call(target.url, key, op.path, op.body, op.idem, nonce)];
        }
        for (const r of results) seen(r.status);
        const h = history.get(op.idem) ?? [];
        h.push(results.map((r) => `${r.status} ${r.body.error ?? ""}${r.body.original_status ? ` (original ${r.body.original_status})` : ""}`).join(" | "));
        history.set(op.idem, h);
        const outcomes = results.map(outcomeOf);
        // Of two answers to a doubled request, an acceptance wins: a refusal (insufficient_balance) stores nothing and
        // frees the key (test/salutes/credit-debit.test.ts), so the twin that ran after it — once a credit landed —
        // may rightly succeed under the same key. One effect per key is what must hold, and check 3 counts it.
        const done = outcomes.find((o) => o.kind === "accepted") ?? outcomes.find((o) => o.kind !== "retry");
        if (done) {
          final.set(op.idem, done);
          return;
        }
        retries++;
        // A fresh nonce and the same key: how a partner retries a request whose answer it never got.
        nonce = newNonce();
        await Bun.sleep(attempt < 3 ? 20 : 200);
      }
      throw new Error(`request ${op.idem} never got a final answer`);
    }

    let next = 0;
    const worker = async () => {
      for (let i = next++; i < OPS; i = next++) {
        if (i === 700) rx.state.hold = true;
        if (i === 800 && instances.b) {
          // B dies with requests and deliveries in flight.
          await Bun.sleep(500);
          const dying = instances.b;
          instances.b = null;
          dying.proc.kill("SIGKILL");
          await dying.proc.exited;
          killedAt = Date.now();
          rx.release();
        }
        if (i === 1_500 && terminatedSessions === 0) {
          // A's sessions are ended by the server under load: what a failover or an operator does.
          const r = await db.all<{ t: boolean }>(
            "SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE datname = 'proof' AND application_name = 'herald A'",
          );
          terminatedSessions = r.length;
          terminatedAt = Date.now();
        }
        await settle(ops[i]!, i);
      }
    };
    let loadEndedAt = 0;
    const load = Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    // B comes back once A holds the singleton's lease (the takeover), while the load goes on.
    const restart = (async () => {
      for (let i = 0; i < 2_000 && killedAt === 0; i++) await Bun.sleep(50);
      for (let i = 0; i < 900; i++) {
        if ((await db.get<{ holder: string }>("SELECT holder FROM job_leases WHERE name = 'auth-prune'"))?.holder === "A") {
          takenOverAt = Date.now();
          break;
        }
        await Bun.sleep(100);
      }
      b = await startInstance("B", env);
      instances.b = b;
    })();
    await Promise.all([load.then(() => (loadEndedAt = Date.now())), restart]);
    expect(final.size).toBe(OPS);
    expect(terminatedSessions).toBeGreaterThan(0);

    // Every delivery settles (both instances dispatch).
    for (let i = 0; i < 600; i++) {
      const open = await db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status NOT IN ('succeeded', 'dead_letter', 'cancelled')");
      if (open?.n === 0) break;
      await Bun.sleep(200);
    }

    // 1. Never a 500: a lost session or a dead instance is a 503 or no answer, and the retry settles it.
    expect([...statuses.keys()].filter((s) => s >= 500 && s !== 503)).toEqual([]);

    // 2. balance = Σ ledger, never negative.
    expect(
      await db.all(
        "SELECT b.user_id FROM salutes_balances b WHERE b.balance_minor <> (SELECT COALESCE(SUM(l.delta_minor), 0) FROM salutes_ledger l WHERE l.user_id = b.user_id)",
      ),
    ).toEqual([]);
    expect((await db.get<{ n: number }>("SELECT count(*) AS n FROM salutes_ledger WHERE balance_after_minor < 0"))?.n).toBe(0);
    expect((await db.get<{ n: number }>("SELECT count(*) AS n FROM salutes_balances WHERE balance_minor < 0"))?.n).toBe(0);

    // 3. One ledger row per accepted request, each under its own key, with the id the partner was answered.
    const accepted = [...final.entries()].filter(([, o]) => o.kind === "accepted") as Array<[string, { kind: "accepted"; entryId: number }]>;
    const rows = await db.all<{ id: number; idempotency_key: string }>("SELECT id, idempotency_key FROM salutes_ledger ORDER BY id");
    const byKey = new Map(rows.map((r) => [r.idempotency_key, r.id]));
    const acceptedKeys = new Set(accepted.map(([idem]) => idem));
    const unexplained = rows.filter((r) => !acceptedKeys.has(r.idempotency_key) || byKey.get(r.idempotency_key) !== r.id);
    for (const r of unexplained)
      console.error(
        `ledger row ${r.id} under ${r.idempotency_key}: final ${JSON.stringify(final.get(r.idempotency_key))}; answers ${JSON.stringify(history.get(r.idempotency_key))}`,
      );
    expect(unexplained).toEqual([]);
    expect(rows.length).toBe(accepted.length);
    expect(byKey.size).toBe(rows.length);
    for (const [idem, o] of accepted) expect(byKey.get(idem)).toBe(o.entryId);
    expect(accepted.length).toBeGreaterThan(OPS / 2);

    // 4. One event per entry.
    const events = await db.all<{ data: string }>("SELECT data FROM events WHERE event_type IN ('salutes.credit', 'salutes.debit')");
    const entryIds = events.map((e) => (JSON.parse(e.data) as { ledger_entry_id: number }).ledger_entry_id);
    expect(new Set(entryIds).size).toBe(entryIds.length);
    expect(entryIds.sort((x, y) => x - y)).toEqual(rows.map((r) => r.id));

    // 5. Per delivery (docs/webhooks.md, "The exact guarantee"): receiver requests ≤ attempts (one row each) ≤
    // max_attempts + its interrupted attempts, which do not use up the budget, and fewer than max_attempts of those
    // (all were delivered); no attempt without an outcome; none doubled.
    const deliveries = await db.all<{ public_id: string; attempts: number; rows: number; interrupted: number; status: string }>(
      `SELECT e.public_id, d.attempts, d.status, (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS rows,
         (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.reason_tag = 'interrupted') AS interrupted
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.event_type IN ('salutes.credit', 'salutes.debit')`,
    );
    expect(deliveries.length).toBe(events.length);
    for (const d of deliveries) {
      const seen = rx.perEvent.get(d.public_id) ?? 0;
      const ok = seen <= d.rows && d.rows === d.attempts && d.rows <= MAX_ATTEMPTS + d.interrupted && d.interrupted < MAX_ATTEMPTS;
      expect({ id: d.public_id, seen, attempts: d.attempts, rows: d.rows, interrupted: d.interrupted, ok }).toMatchObject({ id: d.public_id, ok: true });
      expect(d.status).toBe("succeeded");
    }
    expect((await db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_attempts WHERE status_code IS NULL AND error IS NULL"))?.n).toBe(0);
    // 6. B's attempts in flight when it died are marked interrupted.
    expect(rx.state.abortedWhileHeld).toBeGreaterThan(0);
    const interrupted = (await db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_attempts WHERE reason_tag = 'interrupted'"))?.n ?? 0;
    expect(interrupted).toBeGreaterThanOrEqual(rx.state.abortedWhileHeld);

    // 7. The singleton job: runs never overlap across instances, and A took over within one lease period.
    const runs = await db.all<{ instance_id: string; started_at: string; finished_at: string | null }>(
      "SELECT instance_id, started_at, finished_at FROM job_runs WHERE name = 'auth-prune' ORDER BY started_at, id",
    );
    for (let i = 1; i < runs.length; i++) {
      const prev = runs[i - 1]!;
      expect(prev.finished_at !== null && prev.finished_at <= runs[i]!.started_at).toBe(true);
    }
    const lastB = runs.filter((r) => r.instance_id === "B" && Date.parse(r.started_at) < killedAt).at(-1);
    const firstA = runs.find((r) => r.instance_id === "A" && Date.parse(r.started_at) >= killedAt);
    const timeline =
      `B killed at +${killedAt - startedAt} ms, A seen holding the lease ${takenOverAt ? `${takenOverAt - killedAt} ms after` : "never"}, ` +
      `A's sessions terminated at +${terminatedAt - startedAt} ms, load done at +${loadEndedAt - startedAt} ms`;
    if (!lastB || !firstA) {
      const lease = await db.get("SELECT * FROM job_leases WHERE name = 'auth-prune'");
      console.error(
        `takeover: ${timeline}; lease now ${JSON.stringify(lease)}; last runs ${JSON.stringify(runs.slice(-6))}\n${[...logs.A, ...logs.B].join("\n")}`,
      );
    }
    expect(lastB).toBeDefined();
    expect(firstA).toBeDefined();
    expect(Date.parse(firstA!.started_at) - Date.parse(lastB!.started_at)).toBeLessThanOrEqual(LEASE_MS + 4_000);

    console.log(
      `two instances: ${OPS} requests, ${accepted.length} accepted, ${retries} retries, statuses ${JSON.stringify(Object.fromEntries(statuses))}, ` +
        `${terminatedSessions} sessions terminated, ${rx.state.total} receiver requests, ${interrupted} interrupted attempts; ${timeline}`,
    );
    // 8. A lost session is the engine's one warning, not an error line (with a stack) per request, pass or delivery.
    expect(errorLines).toEqual([]);
    rx.stop();
    await db.close();
  },
  300_000,
);
