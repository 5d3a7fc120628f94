// `herald serve` as a real child process: how it binds its port and how SIGTERM closes it (src/cli/serve.ts). On
// the test run's engine: a SQLite file each, or under HERALD_TEST_ENGINE=postgres a fresh PostgreSQL database each.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signRequest } from "../../src/client/sign";
import { exitWithin, freePort, spawnHerald, waitForHttp } from "../support/process";
import { type ServedDatabase, servedDatabase } from "../support/served-database";

// Real processes, seconds each on a loaded machine; bun's default is 5 s per test.
setDefaultTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), "herald-serve-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Herald = ReturnType<typeof spawnHerald>;

/** A `herald serve` child on 127.0.0.1:port over its own database; stdout is collected as it arrives. */
function startHerald(port: number, db: ServedDatabase | null, extra: Record<string, string> = {}, cwd?: string) {
  const proc = spawnHerald(
    ["serve"],
    {
      NODE_ENV: "test",
      PORT: String(port),
      HOST: "127.0.0.1",
      ...db?.env,
      LOG_LEVEL: "info",
      JOBS_ENABLED: "0",
      BOOTSTRAP_CREDENTIALS: "0",
      SHUTDOWN_GRACE_MS: "30000",
      ...extra,
    },
    cwd,
  );
  const out = { stdout: "" };
  const stdoutDone = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) out.stdout += decoder.decode(chunk, { stream: true });
  })();
  const stderr = new Response(proc.stderr).text();
  return { proc, out, stdoutDone, stderr };
}

/** Polls `done` every 10 ms, at most `ms` long (and at most 1000 times); returns its last answer. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (let i = 0; i < 1000 && Date.now() < deadline && !done(); i++) await Bun.sleep(10);
  return done();
}

async function stopped(h: { proc: Herald }) {
  if ((await exitWithin(h.proc, 30_000)) === null) throw new Error("herald did not exit");
}

/**
 * One TCP connection attempt: "refused" when the connect itself fails with ECONNREFUSED, "accepted" when the
 * handshake completes (whatever happens after: an answer, a reset or a close), or the other error's code.
 */
function connectOnce(port: number): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1");
    sock.once("connect", () => {
      sock.destroy();
      resolve("accepted");
    });
    sock.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED" ? "refused" : (err.code ?? err.message)));
  });
}

/**
 * POST /track with `Expect: 100-continue`: Bun answers `100 Continue` only once the request has reached the
 * app and its body is being read, which proves the request is in flight without any sleep. The body is sent
 * by `finish()`; `response()` resolves when the server closes the connection (Connection: close).
 */
async function startInFlightRequest(port: number) {
  const body = JSON.stringify({ event_type: "copy", destination_url: "/tracks/42", client_event_id: "drain-0001-aaaa" });
  let received = "";
  let socketError: string | null = null;
  const sock = net.connect(port, "127.0.0.1");
  sock.on("data", (chunk) => (received += chunk.toString("utf8")));
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
    "POST /api/public/audio-share-links/track HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nExpect: 100-continue\r\n" +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
  );
  return {
    inFlight: () => received.startsWith("HTTP/1.1 100 Continue"),
    finish: () => void sock.write(body),
    async response(ms: number) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
      sock.destroy();
      const final = received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
      const status = /^HTTP\/1\.1 (\d{3})/.exec(final)?.[1];
      const sep = final.indexOf("\r\n\r\n");
      return { status: status ? Number(status) : null, body: sep === -1 ? "" : final.slice(sep + 4), socketError };
    },
  };
}

describe("herald serve: SIGTERM stops listening first, then drains", () => {
  test("after SIGTERM new connections are refused (never accepted then reset); the request in flight gets its 200", async () => {
    const port = freePort();
    const db = await servedDatabase(dir, "drain.db");
    const h = startHerald(port, db);
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`);
      expect(await connectOnce(port)).toBe("accepted"); // the control: before the signal, connections are taken

      const slow = await startInFlightRequest(port);
      expect(await until(slow.inFlight, 10_000)).toBe(true);

      h.proc.kill("SIGTERM");
      // "shutting down" is logged right after the listening socket is closed (listening: false): from then on
      // the kernel has no listener on the port, so every connection attempt must be refused at connect.
      expect(await until(() => h.out.stdout.includes('"msg":"shutting down"'), 10_000)).toBe(true);
      const attempts: string[] = [];
      for (let i = 0; i < 25; i++) attempts.push(await connectOnce(port));
      expect(attempts).toEqual(Array(25).fill("refused"));

      // The request that was in flight is still served, after the listener closed.
      slow.finish();
      const r = await slow.response(20_000);
      expect(r.socketError).toBeNull();
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ success: true, recorded: true, client_event_id: "drain-0001-aaaa" });

      expect(await exitWithin(h.proc, 30_000)).toBe(0);
      await h.stdoutDone;
      const lines = h.out.stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { msg: string; [k: string]: unknown });
      expect(lines.find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM", listening: false });
      const msgs = lines.map((l) => l.msg);
      expect(msgs).toContain("stopped cleanly");
      expect(msgs).not.toContain("grace period over; closing remaining connections");
      // The drained request's write is in the database the process closed.
      expect(await db.query((q) => q.all("SELECT client_event_id FROM audio_share_track_events"))).toEqual([{ client_event_id: "drain-0001-aaaa" }]);
    } finally {
      h.proc.kill("SIGKILL");
      await h.proc.exited;
      await db.drop();
    }
  });
});

/**
 * One GET on a fresh keep-alive connection (no `Connection: close` from the client): its status, whether the answer
 * said `Connection: close`, and whether the server then closed the connection (waiting up to 1 s for that).
 */
async function keepAliveGet(port: number, path: string) {
  const sock = net.connect(port, "127.0.0.1");
  let received = "";
  let closed = false;
  sock.on("data", (chunk) => (received += chunk.toString("utf8")));
  sock.on("close", () => (closed = true));
  sock.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    sock.once("connect", () => resolve());
    sock.once("error", reject);
  });
  sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  const complete = () => {
    const sep = received.indexOf("\r\n\r\n");
    if (sep === -1) return false;
    const length = /\r\ncontent-length: (\d+)/i.exec(received.slice(0, sep))?.[1];
    return length !== undefined && Buffer.byteLength(received.slice(sep + 4)) >= Number(length);
  };
  await until(() => complete() || closed, 10_000);
  await until(() => closed, 1_000);
  sock.destroy();
  const head = received.slice(0, Math.max(0, received.indexOf("\r\n\r\n")));
  return {
    path,
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
    connectionClose: /\r\nconnection: close(\r\n|$)/i.test(head),
    closedByServer: closed,
  };
}

const logLines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { msg: string; [k: string]: unknown });

describe("herald serve: SIGTERM first drains for SHUTDOWN_DRAIN_DELAY_MS", () => {
  test("/readyz answers 503 (its shutdown check) while every route still answers, each with Connection: close; then the port closes and the process exits 0", async () => {
    const port = freePort();
    const db = await servedDatabase(dir, "drain-delay.db");
    const h = startHerald(port, db, { SHUTDOWN_DRAIN_DELAY_MS: "3000" });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForHttp(`${base}/readyz`);
      const before = (await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, unknown> };
      expect(before.checks.shutdown).toEqual({ ok: true, detail: "not requested" });
      // The control: before the signal a keep-alive connection stays open after its answer.
      expect(await keepAliveGet(port, "/healthz")).toEqual({ path: "/healthz", status: 200, connectionClose: false, closedByServer: false });

      const signalledAt = Date.now();
      h.proc.kill("SIGTERM");
      expect(await until(() => h.out.stdout.includes('"msg":"draining"'), 10_000)).toBe(true);
      const ready = await fetch(`${base}/readyz`);
      const body = (await ready.json()) as { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> };
      expect(ready.status).toBe(503);
      expect(body.ready).toBe(false);
      expect(body.checks.shutdown?.ok).toBe(false);
      expect(body.checks.shutdown?.detail).toStartWith("draining: SIGTERM at ");
      // Still listening and serving: the native probe, an Elysia route, a write, an unknown path — each answer
      // closes its connection, so a balancer's pooled connection moves on.
      const answers = [];
      for (const path of ["/healthz", "/api/partner/errors.json", "/readyz", "/no-such-route"]) answers.push(await keepAliveGet(port, path));
      expect(answers).toEqual([
        { path: "/healthz", status: 200, connectionClose: true, closedByServer: true },
        { path: "/api/partner/errors.json", status: 200, connectionClose: true, closedByServer: true },
        { path: "/readyz", status: 503, connectionClose: true, closedByServer: true },
        { path: "/no-such-route", status: 404, connectionClose: true, closedByServer: true },
      ]);
      const track = await fetch(`${base}/api/public/audio-share-links/track`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ event_type: "copy", destination_url: "/tracks/7", client_event_id: "drain-0002-bbbb" }),
      });
      expect(track.status).toBe(200);
      expect(await connectOnce(port)).toBe("accepted");

      // After the delay: the listening socket closes, and the process exits as before.
      expect(await until(() => h.out.stdout.includes('"msg":"shutting down"'), 10_000)).toBe(true);
      expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(2_900);
      expect(await connectOnce(port)).toBe("refused");
      expect(await exitWithin(h.proc, 30_000)).toBe(0);
      await h.stdoutDone;
      const lines = logLines(h.out.stdout);
      expect(lines.find((l) => l.msg === "draining")).toMatchObject({
        signal: "SIGTERM",
        drain_ms: 3000,
        ready: false,
        listening: true,
        connection_close: true,
      });
      expect(lines.find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM", listening: false, drain_cut_short: false });
      expect(lines.map((l) => l.msg)).toContain("stopped cleanly");
      expect(await db.query((q) => q.all("SELECT client_event_id FROM audio_share_track_events"))).toEqual([{ client_event_id: "drain-0002-bbbb" }]);
    } finally {
      h.proc.kill("SIGKILL");
      await h.proc.exited;
      await db.drop();
    }
  });

  test("a second signal ends the delay at once, and SIGINT (Ctrl-C) never waits for it", async () => {
    const port = freePort();
    const db = await servedDatabase(dir, "drain-cut.db");
    const h = startHerald(port, db, { SHUTDOWN_DRAIN_DELAY_MS: "60000" });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`);
      h.proc.kill("SIGTERM");
      expect(await until(() => h.out.stdout.includes('"msg":"draining"'), 10_000)).toBe(true);
      const secondAt = Date.now();
      h.proc.kill("SIGTERM");
      expect(await exitWithin(h.proc, 30_000)).toBe(0);
      expect(Date.now() - secondAt).toBeLessThan(20_000);
      await h.stdoutDone;
      expect(logLines(h.out.stdout).find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM", listening: false, drain_cut_short: true });
    } finally {
      h.proc.kill("SIGKILL");
      await h.proc.exited;
    }

    const ctrlC = startHerald(port, db, { SHUTDOWN_DRAIN_DELAY_MS: "60000" });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`);
      const signalledAt = Date.now();
      ctrlC.proc.kill("SIGINT");
      expect(await exitWithin(ctrlC.proc, 30_000)).toBe(0);
      expect(Date.now() - signalledAt).toBeLessThan(20_000);
      await ctrlC.stdoutDone;
      const msgs = logLines(ctrlC.out.stdout).map((l) => l.msg);
      expect(msgs).not.toContain("draining");
      expect(msgs).toContain("stopped cleanly");
    } finally {
      ctrlC.proc.kill("SIGKILL");
      await ctrlC.proc.exited;
      await db.drop();
    }
  });
});

/** Every file and folder under `root`, relative to it. */
function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" }).sort();
}

describe("herald serve: a port in use is a startup error", () => {
  test("a second herald on the same port exits 1 with a message naming the port, before creating anything; the first keeps serving alone", async () => {
    const port = freePort();
    const firstDb = await servedDatabase(dir, "first.db");
    const secondDb = await servedDatabase(dir, "second.db");
    const first = startHerald(port, firstDb);
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`);
      // Jobs on in the second one: it must fail before starting them.
      const second = startHerald(port, secondDb, { JOBS_ENABLED: "1" });
      const code = await exitWithin(second.proc, 30_000);
      await second.stdoutDone;
      const stderr = await second.stderr;
      // Without reusePort: false the second process binds too (SO_REUSEPORT) and keeps running: code null.
      expect(code).toBe(1);
      const message = `herald: cannot listen on 127.0.0.1:${port}: port ${port} is already in use (EADDRINUSE)`;
      expect(stderr.split(message).length - 1).toBe(1);
      expect(second.out.stdout).not.toContain('"msg":"herald listening"');
      // Found before the database was opened: no SQLite file; on PostgreSQL (a fresh database each test) no job ran.
      if (secondDb.engine === "sqlite") expect(existsSync(secondDb.path)).toBe(false);
      else expect(await secondDb.query((q) => q.get("SELECT count(*) AS n FROM job_runs"))).toEqual({ n: 0 });

      // Every connection still reaches the first process, which keeps running.
      for (let i = 0; i < 5; i++) expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      expect(first.proc.exitCode).toBeNull();
      first.proc.kill("SIGTERM");
      await stopped(first);
      expect(first.proc.exitCode).toBe(0);
    } finally {
      first.proc.kill("SIGKILL");
      await first.proc.exited;
      await firstDb.drop();
      await secondDb.drop();
    }
  });

  test("README's step 4 while step 1's server runs: from an empty folder, no data folder, database or master key, no banner, no credentials", async () => {
    const port = freePort();
    const firstDb = await servedDatabase(dir, "busy.db");
    const first = startHerald(port, firstDb);
    const empty = mkdtempSync(join(dir, "step4-"));
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`);
      // As a newcomer runs it: development, first-start credentials on, the database at its default ./data/herald.db.
      const env: Record<string, string> = { NODE_ENV: "development", BOOTSTRAP_CREDENTIALS: "1", HERALD_DB_PATH: "./data/herald.db" };
      // On PostgreSQL a fresh database of its own (the master key file would still go beside HERALD_DB_PATH).
      const pg = firstDb.engine === "postgres" ? await servedDatabase(dir, "step4.db") : null;
      if (pg) env.DATABASE_URL = pg.env.DATABASE_URL!;
      try {
        const second = startHerald(port, null, env, empty);
        expect(await exitWithin(second.proc, 30_000)).toBe(1);
        await second.stdoutDone;
        expect(await second.stderr).toContain(`port ${port} is already in use (EADDRINUSE); stop the other process or set PORT to a free port`);
        expect(filesUnder(empty)).toEqual([]);
        expect(second.out.stdout).not.toContain("Herald first start");
        expect(second.out.stdout).not.toContain("hat_");
        if (pg) expect(await pg.query((q) => q.get("SELECT count(*) AS n FROM partner_keys"))).toEqual({ n: 0 });
      } finally {
        await pg?.drop();
      }
    } finally {
      first.proc.kill("SIGKILL");
      await first.proc.exited;
      await firstDb.drop();
    }
  });
});

describe("herald serve: a bad PORT", () => {
  test("is refused once (exit 78), not again through PUBLIC_BASE_URL's default made from it; nothing is created", async () => {
    const empty = mkdtempSync(join(dir, "bad-port-"));
    const h = startHerald(0, null, { PORT: "abc", NODE_ENV: "development", BOOTSTRAP_CREDENTIALS: "1", HERALD_DB_PATH: "./data/herald.db" }, empty);
    expect(await exitWithin(h.proc, 30_000)).toBe(78);
    const stderr = await h.stderr;
    expect(stderr).toBe('herald: invalid configuration:\n  PORT="abc" is not valid: expected an integer from 0 to 65535\n');
    expect(filesUnder(empty)).toEqual([]);
  });
});

describe("herald serve: start-up lines", () => {
  test("'herald listening' comes once the process answers at once: /healthz and a signed call right after it; it names the console", async () => {
    const port = freePort();
    const db = await servedDatabase(dir, "ready.db");
    // With the first start's work too (its credentials, made once the port is bound).
    const h = startHerald(port, db, { BOOTSTRAP_CREDENTIALS: "1" });
    try {
      expect(await until(() => h.out.stdout.includes('"msg":"herald listening"'), 30_000)).toBe(true);
      // The first requests after the line. Before, the API documents were built on the event loop right after it:
      // 0.7 s on an idle machine, 2–8 s on a busy one, during which nothing was answered. The bound leaves room for
      // a loaded 2-core machine without letting that wait through.
      let t0 = performance.now();
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const healthMs = performance.now() - t0;
      const keyId = /key id : (hk_live_\S+)/.exec(h.out.stdout)![1]!;
      const secret = /secret : (\S+)/.exec(h.out.stdout)![1]!;
      const signed = signRequest({ keyId, secret, method: "GET", target: "/api/partner/capabilities", body: "", nonce: null });
      t0 = performance.now();
      const call = await fetch(`http://127.0.0.1:${port}/api/partner/capabilities`, { headers: { ...signed.headers } });
      const signedMs = performance.now() - t0;
      expect(call.status).toBe(200);
      expect({ healthMs: healthMs < 1_500, signedMs: signedMs < 1_500 }).toEqual({ healthMs: true, signedMs: true });
      // The banner came before the line; the line names where the operator console is.
      expect(h.out.stdout.indexOf("Herald first start")).toBeLessThan(h.out.stdout.indexOf('"msg":"herald listening"'));
      const listening = logLines(h.out.stdout).find((l) => l.msg === "herald listening")!;
      expect(listening.console).toBe(`http://localhost:${port}/admin/console`);
    } finally {
      h.proc.kill("SIGKILL");
      await h.proc.exited;
      await db.drop();
    }
  });

  test("credentials never used: a later start says how to make new ones, until one of them has been used", async () => {
    const port = freePort();
    const db = await servedDatabase(dir, "lost.db");
    const env = { BOOTSTRAP_CREDENTIALS: "1" };
    const hint = '"msg":"no credential of this database has been used yet"';
    const run = async (during?: (h: ReturnType<typeof startHerald>) => Promise<void>) => {
      const h = startHerald(port, db, env);
      try {
        expect(await until(() => h.out.stdout.includes('"msg":"herald listening"'), 30_000)).toBe(true);
        await during?.(h);
        h.proc.kill("SIGTERM");
        await stopped(h);
        await h.stdoutDone;
        return h.out.stdout;
      } finally {
        h.proc.kill("SIGKILL");
        await h.proc.exited;
      }
    };
    try {
      // The first start prints the banner, and no hint.
      const first = await run();
      expect(first).toContain("Herald first start");
      expect(first).not.toContain(hint);
      const token = /token {2}: (hat_\S+)/.exec(first)![1]!;
      // The second start: no banner (the database is not empty); one line with the commands that make new ones.
      const second = await run(async () => {
        // The operator now uses the token the first start printed (a bearer call: as a sign-in, it records the use).
        const r = await fetch(`http://127.0.0.1:${port}/admin/partners/keys`, { headers: { authorization: `Bearer ${token}` } });
        expect(r.status).toBe(200);
      });
      expect(second).not.toContain("Herald first start");
      const lines = logLines(second).filter((l) => l.msg === "no credential of this database has been used yet");
      expect(lines).toHaveLength(1);
      // A command that runs from a fresh shell, where the lost banner's `herald` function is gone and `bun` is not on
      // PATH: this herald by its absolute path, with this server's database file and address (test/cli/credentials.test.ts
      // runs it and what it prints).
      expect(lines[0]).toMatchObject({
        level: "info",
        command: expect.stringMatching(/^HERALD_DB_PATH='\/[^']+\/lost\.db' PUBLIC_BASE_URL='http:\/\/localhost:\d+' '\/.+' credentials new$/),
      });
      expect(lines[0]!.also_set).toEqual(db.engine === "postgres" ? ["DATABASE_URL"] : undefined);
      // The third start: a credential has been used, so nothing is said.
      const third = await run();
      expect(third).not.toContain(hint);
      expect(third).not.toContain("Herald first start");
    } finally {
      await db.drop();
    }
  });
});

describe("herald serve: a retired variable is named at start", () => {
  test("HERALD_PG_PREVIEW still set: one warning line naming it and what to do; the server serves as usual", async () => {
    const port = freePort();
    const db = await servedDatabase(dir, "retired.db");
    const h = startHerald(port, db, { HERALD_PG_PREVIEW: "1" });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`);
      expect(await until(() => h.out.stdout.includes('"msg":"environment variable no longer read"'), 10_000)).toBe(true);
      h.proc.kill("SIGTERM");
      await stopped(h);
      await h.stdoutDone;
      const lines = h.out.stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l));
      const warned = lines.filter((l) => l.msg === "environment variable no longer read");
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: "warn", name: "HERALD_PG_PREVIEW" });
      expect(warned[0].note).toContain("DATABASE_URL alone selects it");
    } finally {
      h.proc.kill("SIGKILL");
      await h.proc.exited;
      await db.drop();
    }
  });
});

describe("herald serve: an oversized body gets the JSON 413, not the runtime's bare one", () => {
  test("3 MB and 40 MB with Content-Length, and 3 MB chunked: 413 payload_too_large with a request id; the server serves on", async () => {
    const port = freePort();
    const db = await servedDatabase(dir, "body-cap.db");
    const h = startHerald(port, db);
    const url = `http://127.0.0.1:${port}/api/public/audio-share-links/short/resolve`;
    const refused = async (res: Response) => {
      const text = await res.text();
      const body = JSON.parse(text) as { success: boolean; error: string; request_id: string };
      return { status: res.status, success: body.success, error: body.error, idMatches: body.request_id === res.headers.get("x-request-id") };
    };
    const expected = { status: 413, success: false, error: "payload_too_large", idMatches: true };
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`);
      for (const size of [3_000_000, 40_000_000]) {
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: new Uint8Array(size).fill(0x20) });
        expect({ size, ...(await refused(res)) }).toEqual({ size, ...expected });
      }
      const chunk = new Uint8Array(64 * 1024).fill(0x20);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= 3_000_000) return controller.close();
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      const chunked = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: stream });
      expect(await refused(chunked)).toEqual(expected);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      h.proc.kill("SIGKILL");
      await h.proc.exited;
      await db.drop();
    }
  });
});
