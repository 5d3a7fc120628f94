// Crash safety with real processes (docs/design.md §6): deliveries in flight when `herald serve` is SIGKILLed are
// neither lost nor re-identified. A real receiver on 127.0.0.1 hangs every request while herald sends, herald is
// killed mid-send, the receiver starts answering 200, and a second `herald serve` over the same database
// delivers every event — each with the event id the API returned, as X-Webhook-Id and in the envelope. On the
// test run's engine: a SQLite file, or under HERALD_TEST_ENGINE=postgres a fresh PostgreSQL database, which both
// processes (and the CLI commands before them) share as they would in production.
import { afterAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newIdempotencyKey, newNonce, signRequest } from "../../src/client/sign";
import { freePort, spawnHerald, waitForHttp } from "../support/process";
import { type ServedDatabase, servedDatabase } from "../support/served-database";

const N = 20;
const TIMEOUT_SECONDS = 2; // lease = timeout × 2 + 10 s = 14 s

interface Hit {
  id: string | null;
  envelopeId: string | null;
  signature: string | null;
  timestamp: string | null;
  rawBody: string;
  answered: "hung" | 200;
}

/** A real receiver: hangs every request until switched to answering 200; records every request it gets. */
function crashReceiver() {
  let mode: "hang" | "ok" = "hang";
  const hits: Hit[] = [];
  const hanging: Array<() => void> = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const rawBody = await req.text();
      let envelopeId: string | null = null;
      try {
        envelopeId = (JSON.parse(rawBody) as { event_id?: string }).event_id ?? null;
      } catch {
        // recorded as null; the assertions below catch it
      }
      const hit: Hit = {
        id: req.headers.get("x-webhook-id"),
        envelopeId,
        signature: req.headers.get("x-webhook-signature"),
        timestamp: req.headers.get("x-webhook-timestamp"),
        rawBody,
        answered: "hung",
      };
      hits.push(hit);
      if (mode === "hang") {
        await new Promise<void>((resolve) => hanging.push(resolve));
        return new Response("too late", { status: 200 }); // the sender is dead by now
      }
      hit.answered = 200;
      return new Response(null, { status: 200 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks/herald`,
    hits,
    answerNow() {
      mode = "ok";
      for (const release of hanging.splice(0)) release();
    },
    stop() {
      for (const release of hanging.splice(0)) release();
      server.stop(true);
    },
  };
}

type Proc = ReturnType<typeof spawnHerald>;
const procs = new Set<Proc>();
const dir = mkdtempSync(join(tmpdir(), "herald-crash-"));
let rx: ReturnType<typeof crashReceiver> | undefined;
const stoppers: Array<() => void> = [];
const databases: ServedDatabase[] = [];

afterAll(async () => {
  for (const p of procs) if (p.exitCode === null) p.kill("SIGKILL");
  await Promise.all([...procs].map((p) => p.exited));
  rx?.stop();
  for (const stop of stoppers) stop();
  for (const db of databases) await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A database of the test run's engine for one test's processes, dropped after the file's tests. */
async function databaseFor(name: string): Promise<ServedDatabase> {
  const db = await servedDatabase(dir, name);
  databases.push(db);
  return db;
}

/** Drains a child's pipes as it runs (a full pipe would block it), keeping the text for diagnostics. */
function collect(p: Proc) {
  let text = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const d = new TextDecoder();
    for await (const chunk of s) text += d.decode(chunk, { stream: true });
  };
  const done = Promise.all([drain(p.stdout), drain(p.stderr)]);
  return { text: () => text, done };
}

async function runCli(env: Record<string, string>, args: string[]): Promise<Record<string, any>> {
  const p = spawnHerald(args, env);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`herald ${args.join(" ")} exited ${code}: ${err || out}`);
  return JSON.parse(out);
}

/** Polls `check` every `everyMs` until it returns true; bounded in count and time. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < Math.ceil(timeoutMs / everyMs) + 1 && Date.now() < deadline; i++) {
    if (await check()) return;
    await Bun.sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

async function exitWithin(p: Proc, ms: number): Promise<number | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const code = await Promise.race([p.exited, new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)))]);
  clearTimeout(timer);
  return code;
}

test("deliveries in flight when herald is SIGKILLed are delivered after a restart, each with the event id the API returned", async () => {
  rx = crashReceiver();
  const database = await databaseFor("herald.db");
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    NODE_ENV: "test",
    HOST: "127.0.0.1",
    PORT: String(port),
    ...database.env,
    LOG_LEVEL: "warn",
    JOBS_ENABLED: "1",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
    BOOTSTRAP_CREDENTIALS: "0",
  };

  // Credentials through the CLI, against the same database, before the server starts.
  const key = await runCli(env, ["keys", "create", "--partner", "Crash", "--mode", "live", "--scopes", "webhooks", "--json"]);
  const admin = await runCli(env, ["admin-token", "create", "--name", "crash-test", "--json"]);
  expect(key.key_id).toBeString();
  expect(admin.token).toBeString();

  const call = async (method: string, target: string, body?: unknown) => {
    const raw = body === undefined ? "" : JSON.stringify(body);
    const mutation = method !== "GET";
    const signed = signRequest({ keyId: key.key_id, secret: key.secret, method, target, body: raw, nonce: mutation ? newNonce() : null });
    const headers: Record<string, string> = { ...(signed.headers as unknown as Record<string, string>) };
    if (mutation) headers["Idempotency-Key"] = newIdempotencyKey();
    if (raw) headers["Content-Type"] = "application/json";
    const res = await fetch(base + target, { method, headers, body: raw || undefined, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  // ---- first process: deliveries leased and hanging when it dies
  const first = spawnHerald(["serve"], env);
  procs.add(first);
  const firstOut = collect(first);
  await waitForHttp(`${base}/readyz`);

  const created = await call("POST", "/api/partner/webhooks", { event_type: "webhook.test", target_url: rx.url, description: "crash test" });
  expect(created.status).toBe(201);
  const webhook = created.body.webhook as { id: number; secret: string };

  const tests = await Promise.all(Array.from({ length: N }, () => call("POST", `/api/partner/webhooks/${webhook.id}/test`)));
  for (const t of tests) expect(t).toMatchObject({ status: 200, body: { success: true, queued: true, webhook_id: webhook.id } });
  const eventIds = tests.map((t) => t.body.event_id as string);
  expect(new Set(eventIds).size).toBe(N);

  await until("the receiver to see a first (hanging) request", () => rx!.hits.length > 0, 10_000, 10);
  first.kill("SIGKILL");
  expect(await exitWithin(first, 10_000)).not.toBe(0);
  await firstOut.done;
  const hungBeforeCrash = rx.hits.length;

  // What the crash left: deliveries leased (processing) or still queued, and no outcome recorded for any —
  // the kill happened within the 2 s send timeout, so nothing had been answered or timed out. (Today that is
  // 1 processing and 19 queued: the pass that sends the first delivery does not lease work committed after it
  // started until its sends finish. If the dispatcher re-leases on a nudge, up to 16 will be processing here;
  // both kinds must come through the restart.) A leased delivery's attempt was counted, and its attempt row
  // written, before its request left: attempts = 1 and one attempt row without an outcome; queued ones have 0.
  const cutOff = new Set<number>();
  {
    const rows = await database.query((q) => q.all<{ id: number; status: string; attempts: number }>("SELECT id, status, attempts FROM webhook_deliveries"));
    expect(rows).toHaveLength(N);
    expect(rows.filter((r) => r.status !== "processing" && r.status !== "queued")).toEqual([]);
    expect(rows.filter((r) => r.attempts !== (r.status === "processing" ? 1 : 0))).toEqual([]);
    for (const r of rows) if (r.status === "processing") cutOff.add(r.id);
    expect(cutOff.size).toBeGreaterThanOrEqual(1);
    const attempts = await database.query((q) => q.all("SELECT delivery_id, attempt_no, status_code, error FROM webhook_attempts ORDER BY delivery_id"));
    expect(attempts).toEqual([...cutOff].sort((a, b) => a - b).map((id) => ({ delivery_id: id, attempt_no: 1, status_code: null, error: null })));
  }

  // ---- the receiver recovers; a second process over the same database finishes the job
  rx.answerNow();
  const second = spawnHerald(["serve"], env);
  procs.add(second);
  const secondOut = collect(second);
  await waitForHttp(`${base}/readyz`);

  const okIds = () => new Set(rx!.hits.filter((h) => h.answered === 200).map((h) => h.id));
  // Queued deliveries go at once; leased ones after their 14 s lease runs out.
  await until(`all ${N} events answered 200 (so far ${okIds().size})`, () => eventIds.every((id) => okIds().has(id)), 60_000, 100);

  // Every event arrived at least once, only events the API returned arrived, and every request carried the
  // event id as X-Webhook-Id and in the envelope, signed with the webhook's secret.
  const byId = new Map<string, Hit[]>();
  for (const h of rx.hits) byId.set(h.id ?? "(none)", [...(byId.get(h.id ?? "(none)") ?? []), h]);
  expect([...byId.keys()].sort()).toEqual([...eventIds].sort());
  for (const id of eventIds) {
    const hits = byId.get(id)!;
    expect(hits.length).toBeGreaterThanOrEqual(1);
    for (const h of hits) {
      expect(h.id).toBe(id);
      expect(h.envelopeId).toBe(id);
      expect(h.signature).toBe(createHmac("sha256", webhook.secret).update(`${h.timestamp}.${h.rawBody}`).digest("hex"));
    }
  }
  // Events that hung before the crash arrived again (at-least-once): same id, a 200 the second time.
  for (const h of rx.hits.slice(0, hungBeforeCrash)) expect(okIds().has(h.id)).toBe(true);

  // The backlog gauge drains to 0 once the outcomes are recorded (read with the operator token).
  await until(
    "herald_webhook_backlog 0",
    async () => {
      const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${admin.token}` } });
      return res.status === 200 && /^herald_webhook_backlog 0$/m.test(await res.text());
    },
    20_000,
    100,
  );

  second.kill("SIGTERM");
  const code = await exitWithin(second, 20_000);
  await secondOut.done;
  if (code !== 0) throw new Error(`second herald exited ${code}:\n${secondOut.text().slice(-2000)}`);

  const rows = await database.query((q) =>
    q.all<{ id: number; public_id: string; status: string; attempts: number }>(
      "SELECT d.id, e.public_id, d.status, d.attempts FROM webhook_deliveries d JOIN events e ON e.id = d.event_id ORDER BY d.id",
    ),
  );
  expect(rows.map((r) => r.public_id).sort()).toEqual([...eventIds].sort());
  expect(rows.filter((r) => r.status !== "succeeded")).toEqual([]);
  // The attempts cut off by the crash count: two for those (interrupted, then delivered), one for the rest.
  expect(rows.filter((r) => r.attempts !== (cutOff.has(r.id) ? 2 : 1))).toEqual([]);
  const outcomes = await database.query((q) =>
    q.all("SELECT delivery_id, attempt_no, reason_tag FROM webhook_attempts WHERE reason_tag IS NOT NULL ORDER BY delivery_id"),
  );
  expect(outcomes).toEqual([...cutOff].sort((a, b) => a - b).map((id) => ({ delivery_id: id, attempt_no: 1, reason_tag: "interrupted" })));
}, 120_000);

/** A real receiver that answers its requests from a script — a status, or "hang" (no answer while the sender lives) — then 200. */
function scriptedReceiver(script: Array<number | "hang">) {
  const hits: Array<{ id: string | null; answered: number | "hang" }> = [];
  const hanging: Array<() => void> = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      await req.text();
      const step = script[hits.length] ?? 200;
      const hit = { id: req.headers.get("x-webhook-id"), answered: step };
      hits.push(hit);
      if (step === "hang") {
        await new Promise<void>((resolve) => hanging.push(resolve));
        return new Response("too late", { status: 200 });
      }
      return new Response(null, { status: step });
    },
  });
  const stop = () => {
    for (const release of hanging.splice(0)) release();
    server.stop(true);
  };
  stoppers.push(stop);
  return { url: `http://127.0.0.1:${server.port}/hooks/herald`, hits, stop };
}

test("an attempt cut off by SIGKILL does not use up the budget: during the last allowed one, the restarted herald sends the delivery again", async () => {
  // Attempt 1 is answered 500; attempt 2 hangs at the receiver and herald is killed during it. With
  // WEBHOOK_MAX_ATTEMPTS=2, attempt 2 has no recorded outcome, so it is not one of the two: the restarted herald
  // sends attempt 3 (answered 500), and only then dead-letters the delivery.
  const rx2 = scriptedReceiver([500, "hang", 500]);
  const database = await databaseFor("bound.db");
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    NODE_ENV: "test",
    HOST: "127.0.0.1",
    PORT: String(port),
    ...database.env,
    LOG_LEVEL: "warn",
    JOBS_ENABLED: "1",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    // Long enough that attempt 2 cannot time out (and be recorded) before the kill.
    WEBHOOK_TIMEOUT_SECONDS: "30",
    WEBHOOK_MAX_ATTEMPTS: "2",
    WEBHOOK_RETRY_BASE_SECONDS: "1",
    WEBHOOK_RETRY_JITTER_PCT: "0",
    BOOTSTRAP_CREDENTIALS: "0",
  };
  const key = await runCli(env, ["keys", "create", "--partner", "Bound", "--mode", "live", "--scopes", "webhooks", "--json"]);
  const call = async (method: string, target: string, body?: unknown) => {
    const raw = body === undefined ? "" : JSON.stringify(body);
    const mutation = method !== "GET";
    const signed = signRequest({ keyId: key.key_id, secret: key.secret, method, target, body: raw, nonce: mutation ? newNonce() : null });
    const headers: Record<string, string> = { ...(signed.headers as unknown as Record<string, string>) };
    if (mutation) headers["Idempotency-Key"] = newIdempotencyKey();
    if (raw) headers["Content-Type"] = "application/json";
    const res = await fetch(base + target, { method, headers, body: raw || undefined, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const first = spawnHerald(["serve"], env);
  procs.add(first);
  const firstOut = collect(first);
  await waitForHttp(`${base}/readyz`);
  const created = await call("POST", "/api/partner/webhooks", { event_type: "webhook.test", target_url: rx2.url });
  expect(created.status).toBe(201);
  const queued = await call("POST", `/api/partner/webhooks/${created.body.webhook.id}/test`);
  expect(queued.status).toBe(200);
  const deliveryId = queued.body.delivery_id as number;

  await until("attempt 2 at the receiver", () => rx2.hits.length === 2, 20_000, 10);
  first.kill("SIGKILL");
  expect(await exitWithin(first, 10_000)).not.toBe(0);
  await firstOut.done;

  // Both attempts recorded — the second before its request left — and the second has no outcome.
  expect(await database.query((q) => q.get("SELECT status, attempts FROM webhook_deliveries WHERE id = ?", [deliveryId]))).toEqual({
    status: "processing",
    attempts: 2,
  });
  expect(
    await database.query((q) => q.all("SELECT attempt_no, status_code, reason_tag FROM webhook_attempts WHERE delivery_id = ? ORDER BY id", [deliveryId])),
  ).toEqual([
    { attempt_no: 1, status_code: 500, reason_tag: "http_error" },
    { attempt_no: 2, status_code: null, reason_tag: null },
  ]);

  // The dead sender's lease (2 × 30 s + 10 s) has to run out before anyone may take the delivery over. Rather
  // than wait 70 s, move its end into the past — what the passing of time would do, and nothing else.
  const moved = await database.query((q) =>
    q.run("UPDATE webhook_deliveries SET lease_until = '2000-01-01T00:00:00.000Z' WHERE id = ? AND status = 'processing'", [deliveryId]),
  );
  expect(moved.changes).toBe(1);

  const second = spawnHerald(["serve"], env);
  procs.add(second);
  const secondOut = collect(second);
  await waitForHttp(`${base}/readyz`);
  const statusNow = async () =>
    (await database.query((q) => q.get<{ status: string }>("SELECT status FROM webhook_deliveries WHERE id = ?", [deliveryId])))!.status;
  await until("the restarted herald to dead-letter the delivery", async () => (await statusNow()) === "dead_letter", 30_000, 50);

  const listed = await call("GET", "/api/partner/webhook-events?status=dead_letter");
  expect(listed.body.events).toMatchObject([
    { id: deliveryId, status: "failed", is_dead_letter: true, attempts: 3, reason_tag: "http_error", last_status_code: 500 },
  ]);
  // The receiver saw max_attempts requests with an outcome and the interrupted one; the settled delivery is never
  // sent again.
  expect(rx2.hits.map((h) => h.id)).toEqual([queued.body.event_id, queued.body.event_id, queued.body.event_id]);

  second.kill("SIGTERM");
  const code = await exitWithin(second, 20_000);
  await secondOut.done;
  if (code !== 0) throw new Error(`second herald exited ${code}:\n${secondOut.text().slice(-2000)}`);
  expect(await database.query((q) => q.all("SELECT attempt_no, reason_tag FROM webhook_attempts WHERE delivery_id = ? ORDER BY id", [deliveryId]))).toEqual([
    { attempt_no: 1, reason_tag: "http_error" },
    { attempt_no: 2, reason_tag: "interrupted" },
    { attempt_no: 3, reason_tag: "http_error" },
  ]);
}, 120_000);
