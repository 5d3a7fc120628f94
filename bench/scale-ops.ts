// The `scale` benchmark's requests (bench/scale.ts): a partner client that signs each request (src/client/sign.ts),
// the setup made through the API, the operations timed one at a time while the prober runs, and signed credits for
// the p99 with and without a backup. Every request has a time limit; every loop a count and a time bound.
import { newNonce, signRequest } from "../src/client/sign";
import { percentile } from "./percentiles";

/** A live partner key as `herald keys create --json` prints it. */
export interface PartnerKey {
  key_id: string;
  secret: string;
}

/** What one timed request answered: status, size, and a short note (a job's outcome, an error's code). */
export interface Answer {
  status: number;
  bytes: number;
  note: string;
}

const OP_TIMEOUT_MS = 900_000;

export class HeraldClient {
  private seq = 0;
  constructor(
    readonly baseUrl: string,
    private readonly key: PartnerKey,
    private readonly adminToken: string,
  ) {}

  /** A signed partner request (a nonce and an Idempotency-Key on writes), its JSON or text. */
  async partner(method: "GET" | "POST", target: string, body?: unknown, timeoutMs = OP_TIMEOUT_MS): Promise<Answer & { json: unknown }> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const write = method !== "GET";
    const { headers } = signRequest({ keyId: this.key.key_id, secret: this.key.secret, method, target, body: text, nonce: write ? newNonce() : undefined });
    const extra: Record<string, string> = write ? { "content-type": "application/json", "idempotency-key": `scale-${Date.now()}-${this.seq++}` } : {};
    return this.read(await fetch(this.baseUrl + target, { method, body: text, headers: { ...headers, ...extra }, signal: AbortSignal.timeout(timeoutMs) }));
  }

  /** An operator request (admin bearer token). */
  async admin(method: "GET" | "POST", target: string): Promise<Answer & { json: unknown }> {
    return this.read(
      await fetch(this.baseUrl + target, { method, headers: { authorization: `Bearer ${this.adminToken}` }, signal: AbortSignal.timeout(OP_TIMEOUT_MS) }),
    );
  }

  /** A public request. */
  async open(target: string): Promise<Answer & { json: unknown }> {
    return this.read(await fetch(this.baseUrl + target, { signal: AbortSignal.timeout(OP_TIMEOUT_MS) }));
  }

  private async read(res: Response): Promise<Answer & { json: unknown }> {
    const buf = await res.arrayBuffer();
    let json: unknown = null;
    let note = "";
    if ((res.headers.get("content-type") ?? "").includes("json")) {
      try {
        json = JSON.parse(new TextDecoder().decode(buf));
        const e = json as { error?: string; run?: { ok: boolean; error: string | null } };
        if (e.run) note = e.run.ok ? "job ok" : `job failed: ${(e.run.error ?? "").slice(0, 60)}`;
        else if (res.status >= 400 && e.error) note = e.error;
      } catch {
        note = "unparsable JSON";
      }
    }
    return { status: res.status, bytes: buf.byteLength, note, json };
  }
}

/** Made through the API before the data is multiplied: a webhook, a few users with credits and a debit, some reads. */
export async function setupThroughApi(c: HeraldClient): Promise<{ webhookId: number; userIds: string[] }> {
  const must = <T>(what: string, r: Answer & { json: unknown }, status: number) => {
    if (r.status !== status) throw new Error(`setup: ${what} answered ${r.status} (${r.note}), expected ${status}`);
    return r.json as T;
  };
  // users.updated: the benchmark's own requests change no user, so no delivery is queued while it measures.
  const hook = must<{ webhook: { id: number } }>(
    "POST /api/partner/webhooks",
    await c.partner("POST", "/api/partner/webhooks", { event_type: "users.updated", target_url: "http://127.0.0.1:9/herald-bench-scale" }),
    201,
  );
  const userIds: string[] = [];
  for (let i = 1; i <= 3; i++) {
    const u = must<{ user: { id: number } }>(
      "POST /api/partner/users",
      await c.partner("POST", "/api/partner/users", {
        external_id: `setup-${i}`,
        email: `setup${i}@example.com`,
        username: `setup_${i}`,
        display_name: `Setup ${i}`,
      }),
      201,
    );
    userIds.push(String(u.user.id));
    must(
      "POST /api/salutes/credit",
      await c.partner("POST", "/api/salutes/credit", { user_id: String(u.user.id), amount: 12.5, reason: "quest_reward", source: "game.arena" }),
      200,
    );
  }
  must(
    "POST /api/salutes/debit",
    await c.partner("POST", "/api/salutes/debit", { user_id: userIds[0], amount: 2.25, reason: "purchase", source: "shop.item" }),
    200,
  );
  must("GET /api/salutes/ledger", await c.partner("GET", `/api/salutes/ledger?user_id=${userIds[0]}`), 200);
  must("GET /api/partner/status", await c.partner("GET", "/api/partner/status"), 200);
  // The status history's row shape (checks list, policy version) is copied from this run's snapshot.
  must("POST /admin/jobs/status-snapshot/run", await c.admin("POST", "/admin/jobs/status-snapshot/run"), 200);
  return { webhookId: hook.webhook.id, userIds };
}

export interface CreditRun {
  latenciesMs: number[];
  failures: number;
  firstFailure: string | null;
}

/**
 * Signed credits, `inflight` at a time, to `users` round-robin, until `stop()` says so, `maxCount` were sent or
 * `maxMs` passed.
 */
export async function credits(
  c: HeraldClient,
  users: string[],
  o: { inflight: number; maxCount: number; maxMs: number; stop: () => boolean },
): Promise<CreditRun> {
  const out: CreditRun = { latenciesMs: [], failures: 0, firstFailure: null };
  const deadline = performance.now() + o.maxMs;
  let sent = 0;
  const worker = async () => {
    while (sent < o.maxCount && performance.now() < deadline && !o.stop()) {
      const user = users[sent++ % users.length]!;
      const t0 = performance.now();
      try {
        const r = await c.partner("POST", "/api/salutes/credit", { user_id: user, amount: 1.25, reason: "bench_credit", source: "bench.scale" }, 30_000);
        if (r.status !== 200) {
          out.failures++;
          out.firstFailure ??= `HTTP ${r.status} ${r.note}`;
        } else out.latenciesMs.push(performance.now() - t0);
      } catch (err) {
        out.failures++;
        out.firstFailure ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: o.inflight }, worker));
  return out;
}

/** "p50 x ms, p99 y ms (n credits)" of a run. */
export function creditFigures(r: CreditRun): { p50: number; p99: number; n: number } {
  const sorted = [...r.latenciesMs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), n: sorted.length };
}

/** One operation of the table: its label, and the request(s) it makes. */
export interface Operation {
  label: string;
  /** The status the operation must answer, when it is not a success (a refusal that is the point: a deep offset). */
  expectStatus?: number;
  /**
   * A read of the request summaries' targets (issue 72), its limit in ms at 10M rows: the time at 10M also ≤ 1.5× the
   * time at 10k. Timed again after the operations (bench/scale.ts) and tabled per size (bench/scale-report.ts).
   */
  readLimitMs?: number;
  run: () => Promise<Answer>;
}

/** Every route family once, in this order (the OpenAPI document first among the documents, so its build is timed). */
export function routeOperations(
  c: HeraldClient,
  engine: "sqlite" | "postgres",
  data: { heavyUserId: number; lookupEmail: string; rareReason: string },
): Operation[] {
  const open = (path: string): Operation => ({ label: `GET ${path}`, run: () => c.open(path) });
  const admin = (path: string, method: "GET" | "POST" = "GET"): Operation => ({ label: `${method} ${path}`, run: () => c.admin(method, path) });
  const signed = (path: string): Operation => ({ label: `GET ${path} (signed)`, run: () => c.partner("GET", path) });
  const read = (op: Operation, readLimitMs: number): Operation => ({ ...op, readLimitMs });
  const ops: Operation[] = [
    open("/api/openapi.json"),
    read(open("/status"), 20),
    open("/status.json"),
    open("/api/public/system-status"),
    open("/api/public/system-status/uptime?hours=720"),
    read(open("/api/public/latency-percentiles?hours=720"), 20),
    open("/status/badge/overall.svg?window=30d"),
    read(admin("/metrics"), 10),
    open("/readyz"),
    admin("/admin/ops/readiness"),
    read(signed("/api/partner/analytics/usage?hours=720"), 20),
    read(signed("/api/partner/analytics/usage?hours=24"), 20),
    read(signed("/api/partner/status"), 20),
    signed(`/api/salutes/ledger?user_id=${data.heavyUserId}&reason=${data.rareReason}`),
    signed(`/api/salutes/ledger?user_id=${data.heavyUserId}&offset=10000`),
    // Past the deepest offset (10,000): refused at once with 400 offset_too_large, which names the cursor instead.
    { ...signed(`/api/salutes/ledger?user_id=${data.heavyUserId}&offset=500000`), expectStatus: 400 },
    signed(`/api/partner/user-lookup?email=${encodeURIComponent(data.lookupEmail)}`),
    // A substring no user holds: one window of the owner's users a page (SEARCH_WINDOW), not all of them.
    signed("/api/partner/users?q=zzz-none"),
    signed("/api/partner/users?status=suspended"),
    // An event type no delivery has: one window of the owner's deliveries a page.
    signed("/api/partner/webhook-events?event_type=none.such"),
    signed("/api/partner/webhooks/dlq?hours=720"),
    admin("/admin/ops/403-digest"),
    admin("/admin/ops/403-digest/probe-trend.png"),
    admin("/admin/ops/403-digest/export.csv"),
    admin("/admin/ops/readiness/403-noise/export.csv?days=30"),
    admin("/admin/console/dead-letters.csv"),
    admin("/admin/ops/incidents/export.json"),
    admin("/admin/ops/link-inbox/events/export.csv"),
    admin("/admin/ops/alerts-monitor/export-usage.csv"),
  ];
  if (engine === "sqlite") ops.push(admin("/admin/backup/run", "POST"));
  return ops;
}
