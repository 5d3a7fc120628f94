import { type AppContext, slot, stateOf } from "../../context";
import type { Queryable } from "../../db/port";
import { errorFields } from "../../log";
import { checkResolvedTarget, retryDecision, sendDelivery, sendFailure, type SendResult, targetPolicyOf } from "../../webhooks/service";
import type { IncidentView } from "./incidents";
import { openSubscriberSecret } from "./subscribers";
import { deadLetterInterrupted, type DueDelivery, dueDeliveries, leaseDelivery, queueDeliveries, recordOutcome, subscriberTypes } from "../store/subscribers";

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

/**
 * `t` is the incident change's transaction: a listener writes its rows through it (and awaits nothing else), so
 * they commit or roll back with the change.
 */
type IncidentListener = (ctx: AppContext, type: StatusEventType, incident: IncidentView, t: Queryable) => void | Promise<void>;

/**
 * Other listeners of this context's incident events (the operators' link inbox, src/ops/link-inbox/notify.ts),
 * called in the same transaction so their outbox rows commit or roll back with the change. A Set: registering
 * twice is harmless. Per context (AppContext.state), so two apps in one process never hear each other.
 */
const LISTENERS = slot("status incident listeners", () => new Set<IncidentListener>());
export const incidentListeners = (ctx: AppContext): Set<IncidentListener> => stateOf(ctx, LISTENERS);

/** Queues one event for every subscriber of its type. Call INSIDE the incident change's transaction `t`. */
export async function enqueueIncidentEvent(ctx: AppContext, t: Queryable, type: StatusEventType, incident: IncidentView): Promise<number> {
  for (const listener of incidentListeners(ctx)) await listener(ctx, type, incident, t);
  const subscribers = await subscriberTypes(t);
  const targets = subscribers.filter((s) => (JSON.parse(s.event_types) as string[]).includes(type)).map((s) => s.id);
  if (targets.length === 0) return 0;
  const now = ctx.clock.now().toISOString();
  // One event id for every receiver and every retry: receivers dedupe on it (X-Webhook-Id).
  const eventId = "evt_status_" + Buffer.from(ctx.rng.bytes(12)).toString("hex");
  const body = JSON.stringify({ event_id: eventId, event_type: type, created_at: now, data: { incident } });
  await queueDeliveries(t, targets, { eventId, eventType: type, body, nowIso: now });
  return targets.length;
}

type Leased = DueDelivery & { lease_token: string };

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
          const batch = await this.lease();
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

  /** Resolves when no pass is running (shutdown and tests: nothing of this notifier still uses the store). */
  async idle(): Promise<void> {
    await Promise.resolve(); // a nudge queued just before starts its pass first
    while (this.running) await this.running.catch(() => {});
  }

  /** The job's entry: idle when nothing was due, so quiet ticks leave no job_runs row. */
  async runOnceCounted(): Promise<{ idle: boolean }> {
    const before = this.sent;
    await this.runOnce();
    return { idle: this.sent === before };
  }

  /** Instances leasing at once take disjoint rows (dueDeliveries); a row leased here is not due again until its lease expires. */
  private lease(): Promise<Leased[]> {
    const now = this.ctx.clock.now();
    const nowIso = now.toISOString();
    const untilIso = new Date(now.getTime() + (this.ctx.config.webhooks.timeoutSeconds * 2 + 10) * 1000).toISOString();
    const max = this.ctx.config.webhooks.maxAttempts;
    return this.ctx.store.tx(async (t) => {
      const due = await dueDeliveries(t, this.ctx.store.dialect, nowIso, BATCH);
      const out: Leased[] = [];
      for (const d of due) {
        if (d.attempts >= max) {
          await deadLetterInterrupted(t, d.id, nowIso);
          continue;
        }
        const token = Buffer.from(this.ctx.rng.bytes(12)).toString("hex");
        await leaseDelivery(t, d.id, { untilIso, token, nowIso });
        out.push({ ...d, attempts: d.attempts + 1, lease_token: token });
      }
      return out;
    });
  }

  private async deliver(d: Leased): Promise<void> {
    const cfg = this.ctx.config.webhooks;
    const startedAt = this.ctx.clock.now();
    const blocked = await checkResolvedTarget(d.url, targetPolicyOf(this.ctx.config));
    const result = blocked
      ? sendFailure("blocked_target", `target refused: ${blocked}`)
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
    await this.record(d, result, startedAt);
  }

  private async record(d: Leased, r: SendResult, startedAt: Date): Promise<void> {
    const now = this.ctx.clock.now();
    const { status, nextIso } = retryDecision(this.ctx, r, d.attempts, d.attempts >= this.ctx.config.webhooks.maxAttempts, now);
    const recorded = await recordOutcome(
      this.ctx.store,
      { id: d.id, token: d.lease_token },
      { status, nextIso, error: r.error, statusCode: r.statusCode, startedAtIso: startedAt.toISOString(), nowIso: now.toISOString() },
    );
    if (recorded) this.sent++;
    if (status === "dead_letter")
      this.ctx.log.warn("status notification dead-lettered", { delivery_id: d.id, subscriber_id: d.subscriber_id, event_id: d.event_id, error: r.error });
  }
}

// One notifier per context, so the routes' nudges and the status-notify job share one pass in a process (the
// lease makes concurrent passes safe anyway, across processes too).
const NOTIFIER = slot("status subscriber notifier", (ctx) => new StatusNotifier(ctx));

export const statusNotifier = (ctx: AppContext): StatusNotifier => stateOf(ctx, NOTIFIER);
