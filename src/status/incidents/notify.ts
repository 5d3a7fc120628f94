import { type AppContext, slot, stateOf } from "../../context";
import { errorFields } from "../../log";
import { checkResolvedTarget, parseRetryAfter, retryDelaySeconds, sendDelivery, type SendResult } from "../../webhooks/service";
import type { IncidentView } from "./incidents";
import { openSubscriberSecret } from "./subscribers";

// Incident events for status subscribers: a small transactional outbox of its own, sent with the partner
// webhooks' own sender (src/webhooks/send.ts: the same envelope, signature headers and bounded read), their
// send-time SSRF check (every resolved address must be public unless WEBHOOK_ALLOW_PRIVATE_TARGETS) and their
// retry schedule (WEBHOOK_MAX_ATTEMPTS, capped exponential backoff with jitter, Retry-After honoured, 410 ends
// it). It is not the partner outbox: those tables, limits and dead-letter events belong to partners, and a
// status subscriber is not one. Events are queued in the transaction of the incident change; sending happens
// after the commit (a nudge) or from the status-notify job, never inside a request.

export const STATUS_EVENT_TYPES = ["status.incident.created", "status.incident.updated", "status.incident.resolved"] as const;
export type StatusEventType = (typeof STATUS_EVENT_TYPES)[number];

const BATCH = 16;
const MAX_PASSES = 100;

type Deps = AppContext;

type IncidentListener = (ctx: Deps, type: StatusEventType, incident: IncidentView) => void;

/**
 * Other listeners of this context's incident events (the operators' link inbox, src/ops/link-inbox/notify.ts),
 * called in the same transaction so their outbox rows commit or roll back with the change. A Set: registering
 * twice is harmless. Per context (AppContext.state), so two apps in one process never hear each other.
 */
const LISTENERS = slot("status incident listeners", () => new Set<IncidentListener>());
export const incidentListeners = (ctx: AppContext): Set<IncidentListener> => stateOf(ctx, LISTENERS);

/** Queues one event for every subscriber of its type. Call INSIDE the incident change's transaction. */
export function enqueueIncidentEvent(ctx: Deps, type: StatusEventType, incident: IncidentView): number {
  for (const listener of incidentListeners(ctx)) listener(ctx, type, incident);
  const subscribers = ctx.db.sqlite.query("SELECT id, event_types FROM status_subscribers ORDER BY id").all() as Array<{ id: number; event_types: string }>;
  const targets = subscribers.filter((s) => (JSON.parse(s.event_types) as string[]).includes(type));
  if (targets.length === 0) return 0;
  const now = ctx.clock.now().toISOString();
  // One event id for every receiver and every retry: receivers dedupe on it (X-Webhook-Id).
  const eventId = "evt_status_" + Buffer.from(ctx.rng.bytes(12)).toString("hex");
  const body = JSON.stringify({ event_id: eventId, event_type: type, created_at: now, data: { incident } });
  const insert = ctx.db.sqlite.query(
    "INSERT INTO status_subscriber_deliveries (subscriber_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'queued', 0, ?, ?, ?)",
  );
  for (const s of targets) insert.run(s.id, eventId, type, body, now, now, now);
  return targets.length;
}

interface Leased {
  id: number;
  subscriber_id: number;
  event_id: string;
  event_type: string;
  body: string;
  attempts: number;
  lease_token: string;
  url: string;
  secret_ciphertext: string;
}

/**
 * Leases due deliveries in one short transaction (counting the attempt before the request leaves), sends them
 * outside any transaction, and records each outcome guarded by the lease token. A process that dies mid-send
 * leaves a lease that expires and is taken again: at-least-once, with the same event id.
 */
export class StatusNotifier {
  private running: Promise<void> | null = null;
  private again = false;
  /** Outcomes recorded (for the job's idle report). */
  sent = 0;

  constructor(private readonly ctx: AppContext) {}

  /** Starts a pass after the current commit unless one is running (which then goes round again). */
  nudge(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    queueMicrotask(() => void this.runOnce().catch((err) => this.ctx.log.error("status notify failed", errorFields(err))));
  }

  /** Sends everything due now; resolves when every outcome is recorded (tests and the job await it). */
  runOnce(): Promise<void> {
    // Under a master key that cannot open the subscribers' secrets nothing can be signed: deliveries wait.
    if (this.ctx.secrets.mismatch) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        for (let pass = 0; pass < MAX_PASSES; pass++) {
          this.again = false;
          const batch = this.lease();
          await Promise.all(
            batch.map((d) => this.deliver(d).catch((err) => this.ctx.log.error("status delivery crashed", { delivery_id: d.id, ...errorFields(err) }))),
          );
          if (batch.length === 0 && !this.again) break;
        }
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** The job's entry: idle when nothing was due, so quiet ticks leave no job_runs row. */
  async runCounted(): Promise<{ idle: boolean }> {
    const before = this.sent;
    await this.runOnce();
    return { idle: this.sent === before };
  }

  private lease(): Leased[] {
    const sqlite = this.ctx.db.sqlite;
    const now = this.ctx.clock.now();
    const nowIso = now.toISOString();
    const until = new Date(now.getTime() + (this.ctx.config.webhooks.timeoutSeconds * 2 + 10) * 1000).toISOString();
    const max = this.ctx.config.webhooks.maxAttempts;
    return sqlite
      .transaction(() => {
        const due = sqlite
          .query(
            `SELECT d.id, d.subscriber_id, d.event_id, d.event_type, d.body, d.attempts, s.url, s.secret_ciphertext
           FROM status_subscriber_deliveries d JOIN status_subscribers s ON s.id = d.subscriber_id
           WHERE d.status IN ('queued', 'failed') AND d.next_attempt_at <= ?1 AND (d.lease_until IS NULL OR d.lease_until <= ?1)
           ORDER BY d.next_attempt_at, d.id LIMIT ?2`,
          )
          .all(nowIso, BATCH) as Array<Omit<Leased, "lease_token">>;
        const out: Leased[] = [];
        for (const d of due) {
          // A lease that expired after its last allowed attempt (the sender died): nothing more may be sent.
          if (d.attempts >= max) {
            sqlite
              .query(
                "UPDATE status_subscriber_deliveries SET status = 'dead_letter', lease_until = NULL, lease_token = NULL, last_error = coalesce(last_error, 'interrupted'), updated_at = ? WHERE id = ?",
              )
              .run(nowIso, d.id);
            continue;
          }
          const token = Buffer.from(this.ctx.rng.bytes(12)).toString("hex");
          sqlite
            .query("UPDATE status_subscriber_deliveries SET lease_until = ?, lease_token = ?, attempts = attempts + 1, updated_at = ? WHERE id = ?")
            .run(until, token, nowIso, d.id);
          out.push({ ...d, attempts: d.attempts + 1, lease_token: token });
        }
        return out;
      })
      .immediate();
  }

  private async deliver(d: Leased): Promise<void> {
    const cfg = this.ctx.config.webhooks;
    const policy = { allowPrivateTargets: cfg.allowPrivateTargets, requireHttps: this.ctx.config.isProduction };
    const startedAt = this.ctx.clock.now();
    const blocked = await checkResolvedTarget(d.url, policy);
    const result: SendResult = blocked
      ? { ok: false, statusCode: null, reasonTag: "blocked_target", error: `target refused: ${blocked}`, excerpt: null, retryAfter: null, durationMs: 0 }
      : await sendDelivery({
          url: d.url,
          eventPublicId: d.event_id,
          eventType: d.event_type,
          body: d.body,
          timestampSeconds: Math.floor(startedAt.getTime() / 1000),
          secret: openSubscriberSecret(this.ctx, d.subscriber_id, d.secret_ciphertext),
          previousSecret: null,
          timeoutMs: cfg.timeoutSeconds * 1000,
        });
    this.record(d, result, startedAt);
  }

  private record(d: Leased, r: SendResult, startedAt: Date): void {
    const cfg = this.ctx.config.webhooks;
    const now = this.ctx.clock.now();
    let status: "succeeded" | "failed" | "dead_letter" = "succeeded";
    let next: string | null = null;
    if (!r.ok) {
      if (r.statusCode === 410 || d.attempts >= cfg.maxAttempts) status = "dead_letter";
      else {
        status = "failed";
        const delay = retryDelaySeconds(cfg, d.attempts, this.ctx.rng, parseRetryAfter(r.retryAfter, now.getTime()));
        next = new Date(now.getTime() + delay * 1000).toISOString();
      }
    }
    const { changes } = this.ctx.db.sqlite
      .query(
        `UPDATE status_subscriber_deliveries SET status = ?, next_attempt_at = ?, lease_until = NULL, lease_token = NULL, last_error = ?, last_status_code = ?,
           last_attempt_at = ?, delivered_at = CASE WHEN ? = 'succeeded' THEN ? ELSE delivered_at END, updated_at = ? WHERE id = ? AND lease_token = ?`,
      )
      .run(status, next, r.error, r.statusCode, startedAt.toISOString(), status, now.toISOString(), now.toISOString(), d.id, d.lease_token);
    if (changes) this.sent++;
    if (status === "dead_letter")
      this.ctx.log.warn("status notification dead-lettered", { delivery_id: d.id, subscriber_id: d.subscriber_id, event_id: d.event_id, error: r.error });
  }
}

// One notifier per context, so the routes' nudges and the status-notify job share one pass in a process (the
// lease makes concurrent passes safe anyway, across processes too). Keyed weakly by the context: AppContext is
// the house's holder of such objects, and this is where it would live if it had a field for it.
const NOTIFIER = slot("status subscriber notifier", (ctx) => new StatusNotifier(ctx));

export const statusNotifier = (ctx: AppContext): StatusNotifier => stateOf(ctx, NOTIFIER);
