// SIGTERM under load against a real `herald serve` child: stop accepting, drain in-flight requests, stop jobs,
// flush the request log, checkpoint the WAL, exit 0 (docs/design.md §8). On the test run's engine (a SQLite file, or
// PostgreSQL under HERALD_TEST_ENGINE=postgres); the WAL and the file's integrity are checked on SQLite only, the
// one engine where they are Herald's to keep.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, spawnHerald, waitForHttp, exitWithin } from "../support/process";
import { type ServedDatabase, servedDatabase } from "../support/served-database";
import { testOn } from "../support/skipped";

const LOAD = 200;
/** Health probes are kept out of request_log (they only count in /metrics); this route is logged. */
const LOGGED_ROUTE = "/api/partner/errors.json";
const LOAD_PATHS = ["/readyz", "/healthz", LOGGED_ROUTE] as const;
const ADMIN_TOKEN = "shutdown-test-admin-token-0123456789abcdef";

type Outcome = { kind: "response"; path: string; status: number; body: string } | { kind: "error"; path: string; error: string };
type LogLine = { level: string; msg: string; [k: string]: unknown };

/** A request whose body is still arriving when SIGTERM lands: the drain has to wait for it. */
interface SlowRequest {
  /** Whether herald had logged "shutting down" before the rest of the body was sent. */
  sentAfterShutdownBegan: boolean;
  status: number | null;
  body: string;
  socketError: string | null;
}

interface Run {
  dbPath: string;
  outcomes: Outcome[];
  responses: Array<Extract<Outcome, { kind: "response" }>>;
  slow: SlowRequest;
  exitCode: number | null;
  lines: LogLine[];
  /** Whether the WAL file was gone or empty right after exit, before anything reopened the DB. */
  walEmptyAfterExit: boolean;
  diag: string;
}

/** Polls `done` every 10 ms, at most `ms` long (and at most 1000 times); returns its last answer. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (let i = 0; i < 1000 && Date.now() < deadline && !done(); i++) await Bun.sleep(10);
  return done();
}

/**
 * Opens a raw connection and sends a POST /admin/partners/keys with only half its body. `finish()` sends the
 * rest; `response` resolves when the server closes the connection (Connection: close), bounded in time.
 */
async function startSlowRequest(port: number) {
  const body = JSON.stringify({ partner: "drain-test", mode: "sandbox", scopes: ["read"] });
  const half = Math.floor(body.length / 2);
  let received = "";
  let socketError: string | null = null;
  const sock = net.connect(port, "127.0.0.1");
  sock.on("data", (chunk) => {
    received += chunk.toString("utf8");
  });
  const closed = new Promise<void>((resolve) => {
    sock.on("error", (err) => {
      socketError = err.message;
      resolve();
    });
    sock.on("close", () => resolve());
  });
  await new Promise<void>((resolve, reject) => {
    sock.once("connect", () => resolve());
    sock.once("error", reject);
  });
  sock.write(
    "POST /admin/partners/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
      `Authorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
      body.slice(0, half),
  );
  return {
    finish() {
      sock.write(body.slice(half));
    },
    async response(ms: number): Promise<Omit<SlowRequest, "sentAfterShutdownBegan">> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
      sock.destroy();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
      const sep = received.indexOf("\r\n\r\n");
      return { status: status ? Number(status) : null, body: sep === -1 ? "" : received.slice(sep + 4), socketError };
    },
  };
}

let dir = "";
let database: ServedDatabase | null = null;
let run: Run;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "herald-shutdown-"));
  database = await servedDatabase(dir);
  const dbPath = database.path;
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const proc = spawnHerald(["serve"], {
    NODE_ENV: "test",
    PORT: String(port),
    HOST: "127.0.0.1",
    ...database.env,
    LOG_LEVEL: "info",
    JOBS_ENABLED: "1",
    SHUTDOWN_GRACE_MS: "10000",
    // Far longer than the test: request_log rows can only reach the file through the flush on shutdown.
    REQUEST_LOG_FLUSH_MS: "60000",
    ADMIN_TOKEN,
    BOOTSTRAP_CREDENTIALS: "0",
  });
  // Drain the pipes while the child runs so a full pipe never blocks its logging; stdout is read as it comes.
  let stdoutSoFar = "";
  const stdoutText = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) stdoutSoFar += decoder.decode(chunk, { stream: true });
    return stdoutSoFar;
  })();
  const stderrText = new Response(proc.stderr).text();

  let slowRequest: Awaited<ReturnType<typeof startSlowRequest>>;
  try {
    await waitForHttp(`${base}/readyz`);
    // One logged request before the load. It is recorded after its response went out (Elysia's
    // onAfterResponse runs in a setImmediate): wait until it is in the request-log buffer, so there is a row
    // only the flush on shutdown can write.
    const warmup = await fetch(`${base}${LOGGED_ROUTE}`, { signal: AbortSignal.timeout(10_000) });
    await warmup.arrayBuffer();
    if (warmup.status !== 200) throw new Error(`${LOGGED_ROUTE} answered ${warmup.status}`);
    if (!(await until(() => stdoutSoFar.includes(`"route":"${LOGGED_ROUTE}"`), 10_000))) {
      throw new Error("the warm-up request was never logged");
    }
    slowRequest = await startSlowRequest(port);
    // Give herald a moment to read the headers and start waiting for the rest of the body (not an assertion).
    await Bun.sleep(200);
  } catch (err) {
    proc.kill("SIGKILL");
    await proc.exited;
    throw new Error(`herald did not start: ${String(err)}\nstdout:\n${await stdoutText}\nstderr:\n${await stderrText}`);
  }

  // Fire the whole load at once; as soon as the first answer is back (so the server is busy with the rest),
  // send SIGTERM while the other requests are still in flight. Each fetch is bounded by its own timeout.
  const inFlight: Promise<Outcome>[] = [];
  for (let i = 0; i < LOAD; i++) {
    const path = LOAD_PATHS[i % LOAD_PATHS.length]!;
    inFlight.push(
      fetch(`${base}${path}`, { signal: AbortSignal.timeout(30_000) }).then(
        async (res): Promise<Outcome> => ({ kind: "response", path, status: res.status, body: await res.text() }),
        (err): Outcome => ({ kind: "error", path, error: String(err) }),
      ),
    );
  }
  await Promise.race(inFlight);
  proc.kill("SIGTERM");

  // The slow request's body is completed only once herald is shutting down: its answer proves the drain.
  const sentAfterShutdownBegan = await until(() => stdoutSoFar.includes('"msg":"shutting down"'), 10_000);
  slowRequest.finish();
  const slow: SlowRequest = { sentAfterShutdownBegan, ...(await slowRequest.response(20_000)) };

  const outcomes = await Promise.all(inFlight);
  const exitCode = await exitWithin(proc, 30_000);
  const wal = `${dbPath}-wal`;
  const walSize = existsSync(wal) ? statSync(wal).size : null;
  const stdout = await stdoutText;
  const stderr = await stderrText;
  const lines = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);
  const responses = outcomes.filter((o): o is Extract<Outcome, { kind: "response" }> => o.kind === "response");
  const errors = outcomes.filter((o): o is Extract<Outcome, { kind: "error" }> => o.kind === "error");
  const diag = [
    `exit=${exitCode} answered=${responses.length} connection-errors=${errors.length} wal=${walSize} ` +
      `request-lines=${lines.filter((l) => l.msg === "request").length} slow=${slow.status} ${slow.socketError ?? ""}`,
    `client errors: ${[...new Set(errors.map((e) => e.error))].join("; ")}`,
    `stderr:\n${stderr}`,
    `stdout (non-request lines):\n${lines
      .filter((l) => l.msg !== "request")
      .map((l) => JSON.stringify(l))
      .join("\n")}`,
  ].join("\n");
  run = { dbPath, outcomes, responses, slow, exitCode, lines, walEmptyAfterExit: walSize === null || walSize === 0, diag };
}, 90_000);

afterAll(async () => {
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A query over the database the served process used (the test's own connection, opened after the process exited). */
const read = <T>(sql: string, ...params: Array<string | number>) => database!.query((q) => q.get<T>(sql, params));

describe("herald serve: SIGTERM under load", () => {
  test("a request still arriving when SIGTERM lands is finished, and its write is kept", async () => {
    expect(run.slow.sentAfterShutdownBegan, run.diag).toBe(true);
    expect(run.slow.socketError, run.diag).toBeNull();
    expect(run.slow.status, `${run.diag}\nslow body: ${run.slow.body}`).toBe(201);
    const created = JSON.parse(run.slow.body) as { success: boolean; key: { key_id: string; partner: string } };
    expect(created.success).toBe(true);
    expect(await read("SELECT partner FROM partner_keys WHERE key_id = ?", created.key.key_id)).toEqual({ partner: "drain-test" });
  });

  test("every answered request got a 200; the others never reached the app (connection refused/reset)", () => {
    expect(run.outcomes.length).toBe(LOAD);
    // At least the request that triggered the SIGTERM was answered.
    expect(run.responses.length, run.diag).toBeGreaterThanOrEqual(1);
    expect(
      run.responses.filter((r) => r.status >= 500).map((r) => `${r.path} ${r.status} ${r.body.slice(0, 200)}`),
      run.diag,
    ).toEqual([]);
    expect(
      run.responses.filter((r) => r.status !== 200).map((r) => `${r.path} ${r.status} ${r.body.slice(0, 200)}`),
      run.diag,
    ).toEqual([]);
    for (const r of run.responses) expect(JSON.parse(r.body).success).toBe(true);
  });

  test("the process drains, logs 'stopped cleanly' and exits 0", () => {
    expect(run.exitCode, run.diag).toBe(0);
    const msgs = run.lines.map((l) => l.msg);
    expect(msgs, run.diag).toContain("shutting down");
    expect(msgs, run.diag).toContain("stopped cleanly");
    expect(msgs.indexOf("shutting down")).toBeLessThan(msgs.indexOf("stopped cleanly"));
    expect(run.lines.find((l) => l.msg === "shutting down")?.signal).toBe("SIGTERM");
    expect(msgs, run.diag).not.toContain("grace period over; closing remaining connections");
    expect(
      run.lines.filter((l) => l.level === "error"),
      run.diag,
    ).toEqual([]);
  });

  // SQLite only: the WAL and the file are SQLite's; PostgreSQL keeps its own log and files (and checks them).
  testOn("sqlite", "test/system/shutdown.test.ts")("the WAL is checkpointed and the file is intact", () => {
    // wal_checkpoint(TRUNCATE) on close, then SQLite removes the WAL as the last connection closes.
    expect(run.walEmptyAfterExit, run.diag).toBe(true);
    const db = new Database(run.dbPath, { readonly: true });
    try {
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    } finally {
      db.close();
    }
  });

  test("the request log was flushed on shutdown", async () => {
    // REQUEST_LOG_FLUSH_MS is 60 s, so these rows (at least the warm-up request's, buffered before the
    // load) were written by the flush on shutdown.
    const { n } = (await read<{ n: number }>("SELECT count(*) AS n FROM request_log WHERE route = ?", LOGGED_ROUTE))!;
    expect(n, run.diag).toBeGreaterThanOrEqual(1);
  });

  // A request is buffered for request_log when its answer is made, and shutdown flushes the buffer after the
  // drain, so even the last requests served are kept.
  test("every answered request to a logged route is in request_log (warm-up + load + the slow request)", async () => {
    const answered = run.responses.filter((r) => r.path === LOGGED_ROUTE).length;
    const { n } = (await read<{ n: number }>("SELECT count(*) AS n FROM request_log WHERE route = ? AND status = 200", LOGGED_ROUTE))!;
    expect(n, run.diag).toBe(answered + 1);
    const slow = (await read<{ n: number }>("SELECT count(*) AS n FROM request_log WHERE route = '/admin/partners/keys' AND status = 201"))!;
    expect(slow.n, run.diag).toBe(1);
  });
});
