// Crash safety with real processes (DESIGN.md §6): deliveries in flight when `herald serve` is SIGKILLed are
// neither lost nor re-identified. A real receiver on 127.0.0.1 hangs every request while herald sends, herald is
// killed mid-send, the receiver starts answering 200, and a second `herald serve` over the same database
// delivers every event — each with the event id the API returned, as X-Webhook-Id and in the envelope.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newIdempotencyKey, newNonce, signRequest } from "../../src/client/sign";
import { freePort, spawnHerald, waitForHttp } from "../support/process";

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

afterAll(() => {
  for (const p of procs) if (p.exitCode === null) p.kill("SIGKILL");
  rx?.stop();
  rmSync(dir, { recursive: true, force: true });
});

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

test(
  "deliveries in flight when herald is SIGKILLed are delivered after a restart, each with the event id the API returned",
  async () => {
    rx = crashReceiver();
    const dbPath = join(dir, "herald.db");
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      NODE_ENV: "test",
      HOST: "127.0.0.1",
      PORT: String(port),
      HERALD_DB_PATH: dbPath,
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
    // both kinds must come through the restart.)
    {
      const db = new Database(dbPath);
      try {
        const rows = db.query("SELECT status, attempts FROM webhook_deliveries").all() as Array<{ status: string; attempts: number }>;
        expect(rows).toHaveLength(N);
        expect(rows.filter((r) => r.attempts !== 0 || (r.status !== "processing" && r.status !== "queued"))).toEqual([]);
        expect(rows.filter((r) => r.status === "processing").length).toBeGreaterThanOrEqual(1);
        expect((db.query("SELECT count(*) AS n FROM webhook_attempts").get() as { n: number }).n).toBe(0);
      } finally {
        db.close();
      }
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

    const db = new Database(dbPath, { readonly: true });
    try {
      const rows = db
        .query("SELECT e.public_id, d.status, d.attempts FROM webhook_deliveries d JOIN events e ON e.id = d.event_id ORDER BY d.id")
        .all() as Array<{ public_id: string; status: string; attempts: number }>;
      expect(rows.map((r) => r.public_id).sort()).toEqual([...eventIds].sort());
      expect(rows.filter((r) => r.status !== "succeeded")).toEqual([]);
      // One recorded attempt each: the attempts cut off by the crash left no outcome behind.
      expect(rows.filter((r) => r.attempts !== 1)).toEqual([]);
    } finally {
      db.close();
    }
  },
  120_000,
);
