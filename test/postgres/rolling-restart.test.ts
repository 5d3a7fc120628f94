// Rolling restarts behind a real load balancer. HAProxy (Debian's `haproxy`) runs deploy/haproxy.cfg — the file
// operators install, with only its addresses, ports and system settings replaced — in front of two `herald serve`
// instances on one throwaway PostgreSQL cluster (the built binary with HERALD_TEST_TARGET=dist/herald, else the
// source). A steady mixed load goes through it the whole time: signed credits with Idempotency-Keys, signed balance
// reads, public reads, and a webhook receiver taking every salutes.credit event. Instance A is restarted (SIGTERM,
// wait for its exit, start it again, wait until HAProxy has it up), then B; then A is SIGKILLed and started again.
// The instances drain with the production default of SHUTDOWN_DRAIN_DELAY_MS.
//
// Checks: no request failed during the graceful restarts, each draining instance went on serving until HAProxy had
// marked it down; after the SIGKILL only requests in flight at that moment failed, each retried by the client with
// its Idempotency-Key (and a new nonce) to one effect. Then in SQL: balance = Σ ledger for every user, one ledger row
// per acknowledged credit under its own key, one event per entry, every event delivered to the receiver.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newIdempotencyKey, newNonce, signRequest } from "../../src/client/sign";
import { CONFIG_VARS } from "../../src/config/vars";
import { PostgresStore } from "../../src/db/postgres-engine";
import { testEngine, withDatabase } from "../support/engine";
import { postgresPresent, startCluster, type TestCluster } from "../support/postgres";
import { exitWithin, freePort, haproxyBinary, REPO_ROOT, spawnHerald, targetBinary, waitForHttp } from "../support/process";
import { reportSkipped, testOn } from "../support/skipped";

const FILE = "test/postgres/rolling-restart.test.ts";
const ADMIN = "hat_rolling_admin_token_0123456789abcdefghijklmn";
const MASTER_KEY = "cd".repeat(32);
const USERS = 6;
/** Requests in flight at once, each worker pausing PACE_MS between requests: a steady load, not a flood. */
const WORKERS = 8;
const PACE_MS = 8;
/** Bounds of the load, whatever happens to the restarts. */
const MAX_OPS = 40_000;
const MAX_LOAD_MS = 150_000;
const PUBLIC_PATH = "/api/public/system-status/policy";

/** The drain delay an instance has in production (src/config/vars.ts), which deploy/haproxy.cfg's checks are sized for. */
const productionDrain = CONFIG_VARS.SHUTDOWN_DRAIN_DELAY_MS.fallback;
const DRAIN_MS = Number(typeof productionDrain === "function" ? productionDrain({ NODE_ENV: "production" }) : productionDrain);

// Its own cluster, whatever the suite's engine: run once, in the PostgreSQL pass (and against dist/herald in CI).
const pg = testEngine() === "postgres" && postgresPresent(FILE);
const HAPROXY = haproxyBinary();
if (pg && !HAPROXY) reportSkipped(FILE, "HAProxy is absent (apt-get install -y haproxy)");

const dir = mkdtempSync(join(tmpdir(), "herald-rolling-"));
let cluster: TestCluster | undefined;
const children: Array<{ kill(signal?: number | NodeJS.Signals): void }> = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Ports {
  front: number;
  stats: number;
  a: number;
  b: number;
}

/**
 * deploy/haproxy.cfg as this test runs it: the system settings a throwaway process cannot use (its log socket,
 * chroot, user, daemon mode, socket path) and the addresses replaced; everything that decides what a request meets —
 * checks, retries, timeouts, keep-alive — left as shipped. Added: a log line per request naming the client's load id,
 * the server and the retries, and an `x-served-by` answer header. A line this test expects but cannot find fails it,
 * so the file and the test cannot drift apart silently.
 */
function haproxyConfig(ports: Ports): string {
  let text = readFileSync(join(REPO_ROOT, "deploy", "haproxy.cfg"), "utf8");
  const swap = (pattern: RegExp, replacement: string) => {
    if (!pattern.test(text)) throw new Error(`deploy/haproxy.cfg has no line matching ${pattern}: bring ${FILE} up to date with it`);
    text = text.replace(pattern, replacement);
  };
  swap(/^ {4}log \/dev\/log .*$/m, "    log stdout format raw local0");
  swap(/^ {4}chroot .*\n/m, "");
  swap(/^ {4}user .*\n/m, "");
  swap(/^ {4}group .*\n/m, "");
  swap(/^ {4}daemon\n/m, "");
  swap(/^ {4}stats socket \S+/m, `    stats socket ${join(dir, "admin.sock")}`);
  swap(/^ {4}bind :80$/m, `    bind 127.0.0.1:${ports.front}`);
  swap(/^ {4}bind 127\.0\.0\.1:8404$/m, `    bind 127.0.0.1:${ports.stats}`);
  swap(/^ {4}server herald1 \S+$/m, `    server herald1 127.0.0.1:${ports.a}`);
  swap(/^ {4}server herald2 \S+$/m, `    server herald2 127.0.0.1:${ports.b}`);
  swap(
    /^(frontend herald_http\n)/m,
    `$1    http-request capture req.hdr(x-load-id) len 64\n    log-format "load %[capture.req.hdr(0)] %s %ST %rc %tsc %TR/%Tw/%Tc/%Tr/%Ta %Ts%ms"\n    http-after-response set-header x-served-by %s\n`,
  );
  return text;
}

/** The receiver of the salutes.credit events: requests per event id. */
function receiver() {
  const perEvent = new Map<string, number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await req.text();
      const id = req.headers.get("x-webhook-id") ?? "?";
      perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
      return new Response(null, { status: 204 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, perEvent, stop: () => server.stop(true) };
}

/** Keeps a child's output (the last 32 KiB) for failure messages, draining its pipes so it never blocks on them. */
function tail(streams: Array<ReadableStream<Uint8Array>>): () => string {
  let text = "";
  for (const s of streams)
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of s) text = (text + decoder.decode(chunk, { stream: true })).slice(-32_768);
    })();
  return () => text;
}

interface Instance {
  /** The name HAProxy knows it by. */
  server: "herald1" | "herald2";
  label: "A" | "B";
  port: number;
  proc: ReturnType<typeof spawnHerald>;
  output: () => string;
}

/** One attempt of one logical request, as the client saw it. */
interface Attempt {
  op: number;
  kind: "credit" | "signed-get" | "public-get";
  loadId: string;
  start: number;
  end: number;
  status: number;
  error: string | null;
  servedBy: string | null;
  ok: boolean;
}

test("docs/postgres.md quotes deploy/haproxy.cfg as it is", () => {
  const cfg = readFileSync(join(REPO_ROOT, "deploy", "haproxy.cfg"), "utf8").split("\n");
  const doc = readFileSync(join(REPO_ROOT, "docs", "postgres.md"), "utf8");
  const excerpt = /```\n# \/etc\/haproxy\/haproxy\.cfg \(excerpt of deploy\/haproxy\.cfg\)\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(excerpt).toBeDefined();
  const lines = excerpt!.split("\n").filter((l) => l.trim() !== "");
  expect(lines.length).toBeGreaterThan(5);
  expect(lines.filter((l) => !cfg.includes(l))).toEqual([]);
});

testOn("postgres", FILE, test.skipIf(!pg || !HAPROXY))(
  "rolling restarts through HAProxy fail no request; a SIGKILL fails only the requests in flight, each retried to one effect",
  async () => {
    const began = Date.now();
    cluster = await startCluster();
    const admin = new PostgresStore({ url: cluster.url, poolMax: 1 });
    await admin.run("CREATE DATABASE rolling");
    await admin.close();
    const dbUrl = withDatabase(cluster.url, "rolling");
    const db = new PostgresStore({ url: dbUrl, poolMax: 2 });
    const rx = receiver();
    const ports: Ports = { front: freePort(), stats: freePort(), a: freePort(), b: freePort() };
    const front = `http://127.0.0.1:${ports.front}`;
    const env: Record<string, string> = {
      DATABASE_URL: dbUrl,
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      NODE_ENV: "development",
      PUBLIC_BASE_URL: front,
      TRUST_PROXY: "1",
      BOOTSTRAP_CREDENTIALS: "0",
      ADMIN_TOKEN: ADMIN,
      HERALD_MASTER_KEY: MASTER_KEY,
      RATE_LIMIT_PARTNER_PER_MIN: "0",
      RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
      RATE_LIMIT_WEBHOOK_PER_MIN: "0",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
      WEBHOOK_TIMEOUT_SECONDS: "2",
      WEBHOOK_RETRY_BASE_SECONDS: "1",
      WEBHOOK_RETRY_MAX_SECONDS: "2",
      DATABASE_POOL_MAX: "6",
      SHUTDOWN_DRAIN_DELAY_MS: String(DRAIN_MS),
      SHUTDOWN_GRACE_MS: "10000",
    };

    /** What each run of each instance printed, for failure messages. */
    const outputs: Record<Instance["label"], Array<() => string>> = { A: [], B: [] };
    /** When each signal went out and each instance exited, for failure messages. */
    const phases: Record<string, number> = {};
    const start = async (server: Instance["server"], label: Instance["label"], port: number): Promise<Instance> => {
      const proc = spawnHerald(["serve"], { ...env, PORT: String(port), HERALD_INSTANCE_ID: label });
      children.push(proc);
      const output = tail([proc.stdout, proc.stderr]);
      outputs[label].push(output);
      try {
        await waitForHttp(`http://127.0.0.1:${port}/readyz`, 30_000);
      } catch (err) {
        throw new Error(`instance ${label} did not start: ${(err as Error).message}\n${output()}`);
      }
      return { server, label, port, proc, output };
    };
    // A starts alone on the empty database (it migrates), then B.
    const instances = { A: await start("herald1", "A", ports.a), B: await start("herald2", "B", ports.b) };

    const cfgPath = join(dir, "haproxy.cfg");
    writeFileSync(cfgPath, haproxyConfig(ports));
    const haproxy = Bun.spawn([HAPROXY!, "-db", "-f", cfgPath], { stdout: "pipe", stderr: "pipe" });
    children.push(haproxy);
    /** HAProxy's log: the request line of each load id, and everything else (check results, state changes). */
    const byLoadId = new Map<string, string>();
    const haproxyEvents: string[] = [];
    void (async () => {
      const decoder = new TextDecoder();
      let pending = "";
      for await (const chunk of haproxy.stdout) {
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) {
          const m = /^load (\S+) /.exec(line);
          if (m) byLoadId.set(m[1]!, line);
          else if (line.trim()) haproxyEvents.push(line);
        }
      }
    })();
    const haproxyErr = tail([haproxy.stderr]);

    /** Each server's state in HAProxy (UP, DOWN, "UP 1/2"…), from its stats page. */
    const states = async (): Promise<Record<string, string>> => {
      const res = await fetch(`http://127.0.0.1:${ports.stats}/stats;csv`, { signal: AbortSignal.timeout(2_000) });
      const [head, ...rows] = (await res.text()).trim().split("\n");
      const cols = head!.replace(/^# /, "").split(",");
      const [px, sv, st] = ["pxname", "svname", "status"].map((c) => cols.indexOf(c)) as [number, number, number];
      const out: Record<string, string> = {};
      for (const row of rows) {
        const c = row.split(",");
        if (c[px] === "herald" && c[sv]?.startsWith("herald")) out[c[sv]!] = c[st]!;
      }
      return out;
    };
    /** Polls HAProxy's view of `server` until `want` matches it; the time it took. */
    const until = async (server: string, want: (state: string) => boolean, ms = 30_000): Promise<number> => {
      const t0 = Date.now();
      let last = "no answer";
      for (let i = 0; i < 1_000 && Date.now() - t0 < ms; i++) {
        try {
          last = (await states())[server] ?? "absent";
          if (want(last)) return Date.now() - t0;
        } catch (err) {
          last = (err as Error).message;
        }
        await Bun.sleep(50);
      }
      throw new Error(`HAProxy's ${server} still ${last} after ${ms} ms\n${haproxyEvents.slice(-20).join("\n")}\n${haproxyErr()}`);
    };
    await until("herald1", (s) => s === "UP");
    await until("herald2", (s) => s === "UP");

    // A partner key, users and a webhook, through the balancer.
    const bearer = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
    const created = (await (
      await fetch(`${front}/admin/partners/keys`, {
        method: "POST",
        headers: bearer,
        body: JSON.stringify({ partner: "Rolling", mode: "live", scopes: ["credit", "users", "webhooks", "read"] }),
      })
    ).json()) as { key: { key_id: string }; secret: string };
    const key = { id: created.key.key_id, secret: created.secret };

    let loadSeq = 0;
    /** One request through the balancer; a connection error is status 0. */
    const send = async (method: "GET" | "POST", target: string, body: unknown, signed: boolean, idem: string | null) => {
      const raw = body === undefined ? undefined : JSON.stringify(body);
      const loadId = `r${++loadSeq}`;
      const headers: Record<string, string> = { "x-load-id": loadId };
      if (signed) {
        const nonce = method === "POST" ? newNonce() : undefined;
        Object.assign(headers, signRequest({ keyId: key.id, secret: key.secret, method, target, body: raw, nonce }).headers);
      }
      if (raw !== undefined) headers["content-type"] = "application/json";
      if (idem) headers["idempotency-key"] = idem;
      const startedAt = Date.now();
      try {
        const res = await fetch(`${front}${target}`, { method, headers, body: raw, signal: AbortSignal.timeout(30_000) });
        const text = await res.text();
        let json: Record<string, any> = {};
        try {
          json = JSON.parse(text);
        } catch {
          json = { error: `not JSON: ${text.slice(0, 80)}` };
        }
        return { loadId, startedAt, status: res.status, body: json, servedBy: res.headers.get("x-served-by"), error: null as string | null };
      } catch (err) {
        return { loadId, startedAt, status: 0, body: {} as Record<string, any>, servedBy: null, error: (err as Error).message };
      }
    };

    const users: string[] = [];
    for (let i = 0; i < USERS; i++) {
      const r = await send("POST", "/api/partner/users", { external_id: `rolling-${i}` }, true, newIdempotencyKey());
      expect(r.status).toBe(201);
      users.push(String(r.body.user.id));
    }
    const hook = await send("POST", "/api/partner/webhooks", { target_url: rx.url, event_type: "salutes.credit" }, true, newIdempotencyKey());
    expect(hook.status).toBe(201);

    // The load: until `stop`, each worker sends one request after another, retrying a failed one (a credit with the
    // same Idempotency-Key and a new nonce) until it has its answer.
    const attempts: Attempt[] = [];
    /** Idempotency-Key → the ledger entry the client was answered with. */
    const acknowledged = new Map<string, number>();
    let stop = false;
    let next = 0;
    const runOp = async (op: number) => {
      const kind: Attempt["kind"] = op % 4 < 2 ? "credit" : op % 4 === 2 ? "signed-get" : "public-get";
      const user = users[op % USERS]!;
      const idem = kind === "credit" ? `rolling-${op}-${newIdempotencyKey()}` : null;
      for (let attempt = 0; attempt < 100; attempt++) {
        const r =
          kind === "credit"
            ? await send("POST", "/api/salutes/credit", { user_id: user, amount: 1 + (op % 13), reason: "rolling", source: "rolling-restart" }, true, idem)
            : kind === "signed-get"
              ? await send("GET", `/api/salutes/balance?user_id=${user}`, undefined, true, null)
              : await send("GET", PUBLIC_PATH, undefined, false, null);
        // A retried credit may find its first copy's effect: the stored answer, under the same key (409 idempotency_replay).
        const replayed = attempt > 0 && r.status === 409 && r.body.error === "idempotency_replay" && r.body.original_status === 200;
        const ok = r.status === 200 || replayed;
        attempts.push({
          op,
          kind,
          loadId: r.loadId,
          start: r.startedAt,
          end: Date.now(),
          status: r.status,
          error: r.error ?? r.body.error ?? null,
          servedBy: r.servedBy,
          ok,
        });
        if (ok) {
          if (idem) acknowledged.set(idem, replayed ? r.body.original_response.ledger_entry_id : r.body.ledger_entry_id);
          return;
        }
        await Bun.sleep(50);
      }
      throw new Error(`request ${op} (${kind}) never succeeded`);
    };
    const loadStart = Date.now();
    const worker = async () => {
      while (!stop && Date.now() - loadStart < MAX_LOAD_MS) {
        const op = next++;
        if (op >= MAX_OPS) return;
        await runOp(op);
        await Bun.sleep(PACE_MS);
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, worker));

    /** SIGTERM, wait for the exit, start again, wait until HAProxy sends it traffic. */
    const restarts: Array<{ label: string; servedWhileDraining: number; markedDownMs: number; exitMs: number; upAgainMs: number }> = [];
    const gracefulRestart = async (label: "A" | "B") => {
      const inst = instances[label];
      const sigtermAt = Date.now();
      phases[`${label} SIGTERM`] = sigtermAt - loadStart;
      inst.proc.kill("SIGTERM");
      const markedDownMs = await until(inst.server, (s) => s.startsWith("DOWN"), DRAIN_MS + 10_000);
      const code = await exitWithin(inst.proc, 30_000);
      const exitAt = Date.now();
      phases[`${label} exited`] = exitAt - loadStart;
      expect({ label, code }).toEqual({ label, code: 0 });
      instances[label] = await start(inst.server, label, inst.port);
      const upAgainMs = await until(inst.server, (s) => s === "UP");
      restarts.push({
        label,
        servedWhileDraining: attempts.filter((x) => x.servedBy === inst.server && x.ok && x.end > sigtermAt && x.end < exitAt).length,
        markedDownMs,
        exitMs: exitAt - sigtermAt,
        upAgainMs,
      });
    };

    await Bun.sleep(2_000);
    await gracefulRestart("A");
    await Bun.sleep(1_000);
    await gracefulRestart("B");
    await Bun.sleep(1_000);
    const gracefulEnd = Date.now();
    // A dies with requests in flight, then comes back.
    const killAt = Date.now();
    instances.A.proc.kill("SIGKILL");
    await instances.A.proc.exited;
    await Bun.sleep(1_000);
    instances.A = await start("herald1", "A", ports.a);
    await until("herald1", (s) => s === "UP");
    const upAfterKill = Date.now();
    await Bun.sleep(2_000);
    stop = true;
    await load;
    const loadMs = Date.now() - loadStart;

    // 1. The graceful restarts: no failure at all; each instance was marked down while it still served, and served
    //    what it received meanwhile; it left only after the drain delay.
    // In flight at the kill: started no later than it. A request started in the same millisecond as `killAt` may have
    // been handed to the client's connection thread before the kill went out, and reached A (its effect committed,
    // so HAProxy's resend to B meets replay_detected); one started later was sent after A was dead.
    const inFlightAtKill = (x: Attempt) => x.start <= killAt && x.end >= killAt;
    const failures = attempts.filter((x) => !x.ok);
    const describe = (x: Attempt) => ({ ...x, sinceKill: `${x.start - killAt}..${x.end - killAt} ms`, haproxy: byLoadId.get(x.loadId) ?? null });
    const unexplained = failures.filter((x) => !inFlightAtKill(x));
    if (unexplained.length > 0) {
      console.error(`phases (ms after the load began): ${JSON.stringify({ ...phases, kill: killAt - loadStart })}; kill at ${killAt}`);
      console.error(`HAProxy's events:\n${haproxyEvents.filter((l) => !l.includes("stats/<STATS>")).join("\n")}`);
      for (const [label, out] of Object.entries(outputs)) console.error(`instance ${label} printed:\n${out.map((o) => o()).join("\n---\n")}`);
    }
    expect(unexplained.map(describe)).toEqual([]);
    expect(attempts.filter((x) => x.start < gracefulEnd).length).toBeGreaterThan(500);
    for (const r of restarts) {
      expect({ label: r.label, markedDownBeforeListeningEnded: r.markedDownMs < DRAIN_MS }).toEqual({ label: r.label, markedDownBeforeListeningEnded: true });
      expect(r.servedWhileDraining).toBeGreaterThan(0);
      expect(r.exitMs).toBeGreaterThanOrEqual(DRAIN_MS);
    }

    // 2. The SIGKILL: what failed was in flight at the kill (at most one request per worker), on the killed instance
    //    (HAProxy's log names it) or a copy HAProxy resent from it to the other (a redispatch, "+" in the retries) —
    //    and each was retried by the client to success.
    //    A failure HAProxy has no line for at all never reached it: a connection error (status 0) on the client's side
    //    of the balancer, such as a request written into a kept-alive connection as HAProxy closed it. No instance saw
    //    it, so it had no effect to lose or double (the ledger checks below hold either way); it too must be retried.
    expect(failures.length).toBeLessThanOrEqual(WORKERS);
    // HAProxy logs a request when its session ends: give the last lines a moment to arrive (bounded).
    for (let i = 0; i < 40 && failures.some((f) => !byLoadId.has(f.loadId)); i++) await Bun.sleep(50);
    for (const f of failures) {
      const line = byLoadId.get(f.loadId) ?? "";
      const [, , server, , retries] = line.split(" ");
      const explained = server === "herald1" || (retries ?? "").startsWith("+") || (line === "" && f.status === 0);
      expect({ attempt: describe(f), explained }).toEqual({ attempt: describe(f), explained: true });
      expect(attempts.some((x) => x.op === f.op && x.ok && x.start > f.start)).toBe(true);
    }

    // Every delivery settles (both instances dispatch).
    for (let i = 0; i < 300; i++) {
      const open = await db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status NOT IN ('succeeded', 'dead_letter', 'cancelled')");
      if (open?.n === 0) break;
      await Bun.sleep(200);
    }

    // 3. balance = Σ ledger for every user.
    expect(
      await db.all(
        "SELECT b.user_id FROM salutes_balances b WHERE b.balance_minor <> (SELECT COALESCE(SUM(l.delta_minor), 0) FROM salutes_ledger l WHERE l.user_id = b.user_id)",
      ),
    ).toEqual([]);

    // 4. Ledger = acknowledged: one row per acknowledged credit, under its key, with the id the client was answered.
    const rows = await db.all<{ id: number; idempotency_key: string }>("SELECT id, idempotency_key FROM salutes_ledger ORDER BY id");
    const credits = new Set(attempts.filter((x) => x.kind === "credit").map((x) => x.op));
    expect(acknowledged.size).toBe(credits.size);
    expect(rows.length).toBe(acknowledged.size);
    expect(rows.filter((r) => acknowledged.get(r.idempotency_key) !== r.id)).toEqual([]);

    // 5. One event per entry, each delivered to the receiver.
    const events = await db.all<{ public_id: string; data: string }>("SELECT public_id, data FROM events WHERE event_type = 'salutes.credit'");
    expect(events.map((e) => (JSON.parse(e.data) as { ledger_entry_id: number }).ledger_entry_id).sort((x, y) => x - y)).toEqual(rows.map((r) => r.id));
    const deliveries = await db.all<{ status: string; n: number }>("SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status");
    expect(deliveries).toEqual([{ status: "succeeded", n: events.length }]);
    expect(events.filter((e) => !rx.perEvent.has(e.public_id)).map((e) => e.public_id)).toEqual([]);

    // What HAProxy did with the requests in flight at the kill: resent ("+1": to the other instance) or answered.
    const atKill = attempts.filter(inFlightAtKill).map((x) => byLoadId.get(x.loadId)?.split(" ").slice(2, 6).join(" ") ?? "no log line");
    const tally = (xs: string[]) => Object.fromEntries([...new Set(xs)].map((v) => [v, xs.filter((y) => y === v).length]));
    const kinds = (k: Attempt["kind"]) => new Set(attempts.filter((x) => x.kind === k).map((x) => x.op)).size;
    console.log(
      `rolling restart of ${targetBinary() ?? "bun src/main.ts serve"} behind HAProxy (${DRAIN_MS} ms drain): ${next} requests in ${loadMs} ms (${kinds("credit")} credits, ${kinds("signed-get")} signed GETs, ` +
        `${kinds("public-get")} public GETs), ${attempts.length} attempts; failed: ${failures.filter((x) => !inFlightAtKill(x)).length} outside the SIGKILL, ` +
        `${failures.length} in flight at it (${failures.map((f) => `${f.kind} ${f.status} ${f.error}`).join("; ") || "none"}), each retried to success; ` +
        `restarts ${JSON.stringify(restarts)}; in flight at the SIGKILL (HAProxy: server status retries termination) ${JSON.stringify(tally(atKill))}; ` +
        `phases: graceful ${gracefulEnd - loadStart} ms, SIGKILL to up again ${upAfterKill - killAt} ms; ${rows.length} ledger rows, ${events.length} events delivered; ${Math.round((Date.now() - began) / 1000)} s in all`,
    );
    rx.stop();
    await db.close();
    haproxy.kill("SIGTERM");
    await exitWithin(haproxy, 5_000);
  },
  240_000,
);
