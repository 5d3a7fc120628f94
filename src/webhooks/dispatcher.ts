import type { DeliveryDispatcher } from "../context";
import { type Queryable, StoreUnavailable } from "../db/port";
import { errorFields } from "../log";
import type { DispatchContext } from "./deps";
import { DeliveryLeases, type Leased, notifyDeadLetter } from "./leases";
import { inOrder } from "../db/in-order";
import { type AttemptOutcome, leaseSize, recordAttempt, recordDelivery, renewLease } from "./lease-store";
import { retried, SuccessWriter } from "./outcomes";
import { Slots } from "./slots";
import { Wakeup } from "./wakeup";
import { emitEvent } from "./outbox";
import { parseRetryAfter, retryDelaySeconds } from "./schedule";
import { type SendResult, sendDelivery, sendFailure } from "./send";
import { clearFailing, disableWebhook, markFailing } from "./store";
import { checkResolvedTarget, type TargetPolicy, targetPolicyOf } from "./target-policy";
import { WebhookSecrets } from "./secrets";

/** Outcomes being written at most, per send slot (WEBHOOK_CONCURRENCY), on PostgreSQL: past it the pass leases no more. */
const RECORDING_PER_SLOT = 4;

/**
 * Deliveries leased and waiting, at most, per send slot. Three, not one: a pass runs one lease at a time, each waiting
 * for its commit on PostgreSQL, so their size set a backlog's pace (bench/README.md "Leasing further ahead").
 */
const LEASED_PER_SLOT = 3;

/**
 * What an attempt's answer makes of its delivery: 410 Gone or the last attempt dead-letters it; another failure is
 * tried again after the schedule's delay, a receiver's longer Retry-After honoured.
 */
export function retryDecision(ctx: Pick<DispatchContext, "config" | "rng">, r: SendResult, attempts: number, final: boolean, now: Date) {
  if (r.ok) return { status: "succeeded" as const, nextIso: null };
  if (r.statusCode === 410 || final) return { status: "dead_letter" as const, nextIso: null };
  const delay = retryDelaySeconds(ctx.config.webhooks, attempts, ctx.rng, parseRetryAfter(r.retryAfter, now.getTime()));
  return { status: "failed" as const, nextIso: new Date(now.getTime() + delay * 1000).toISOString() };
}

/**
 * Leases due deliveries in one short transaction (which also records each attempt, before its request leaves),
 * sends them outside any transaction, and records each outcome in another short transaction guarded by the
 * lease token. A process killed mid-send leaves leases that expire; the next dispatcher marks those attempts
 * interrupted and takes the deliveries again — at-least-once, never lost, with the same event id. Only attempts
 * with a recorded outcome use up WEBHOOK_MAX_ATTEMPTS; interrupted ones have a bound of their own (leases.ts).
 * Several instances may dispatch from one database: the lease keeps each delivery to one of them. What is kept
 * here in memory is per instance: WEBHOOK_CONCURRENCY and WEBHOOK_PER_TARGET_CONCURRENCY bound this instance's
 * sends (N instances may have N × that many requests at one receiver host), and the target-check cache.
 */
export class Dispatcher implements DeliveryDispatcher {
  private readonly leases: DeliveryLeases;
  private readonly wakeup = new Wakeup();
  /** Send-time target checks, per URL, for a few seconds: a DNS lookup per delivery would dominate a burst. */
  private readonly targetChecks = new Map<string, { until: number; problem: Promise<string | null> }>();
  private readonly hostSlots = new Map<string, Slots>();
  /** A target URL's host (for hostSlots), bounded: parsing the URL for every send showed in a CPU profile. */
  private readonly hostOf = new Map<string, string>();
  private running: Promise<void> | null = null;
  private again = false;
  private readonly secrets: WebhookSecrets;
  private readonly successes: SuccessWriter;
  /** Deliveries whose outcome was recorded (for metrics and the benchmark). */
  completed = 0;

  /** Touches no database here: the context is built on either engine before anything runs. */
  constructor(private readonly ctx: DispatchContext) {
    this.secrets = new WebhookSecrets(ctx);
    this.leases = new DeliveryLeases(ctx);
    this.successes = new SuccessWriter(ctx.store);
  }

  /** Starts a pass soon (after the current commit) unless one is running; a running pass picks the new work up. */
  nudge(): void {
    if (this.running) {
      this.again = true;
      this.wakeup.poke();
      return;
    }
    queueMicrotask(() => {
      // Nudges in one tick queue several of these: only the one that starts the pass reports how it failed.
      const starts = this.running === null;
      void this.runOnce().catch((err) => starts && this.report("dispatch failed", err));
    });
  }

  /** An error line, unless the database is away (the engine's one warning): a lost outcome's lease runs out, it is sent again. */
  private report(msg: string, err: unknown, fields: Record<string, unknown> = {}): void {
    if (!(err instanceof StoreUnavailable)) this.ctx.log.error(msg, { ...fields, ...errorFields(err) });
  }

  /** Sends everything due now, up to WEBHOOK_CONCURRENCY at a time, and resolves when all outcomes are recorded. */
  async runOnceCounted(): Promise<{ idle: boolean }> {
    const before = this.completed;
    await this.runOnce();
    return { idle: this.completed === before };
  }

  runOnce(): Promise<void> {
    // Under a master key that cannot open the stored secrets no delivery can be signed: they wait, unleased and
    // unattempted, until Herald runs with the right key (/readyz says so meanwhile).
    if (this.ctx.secrets.mismatch) return Promise.resolve();
    if (this.running) {
      this.again = true;
      this.wakeup.poke();
      return this.running;
    }
    this.running = (async () => {
      try {
        for (let pass = 0; pass < 100; pass++) {
          this.again = false;
          await this.drainDue();
          if (!this.again) break;
        }
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async idle(): Promise<void> {
    await this.running;
  }

  /**
   * Keeps up to WEBHOOK_CONCURRENCY sends in flight and LEASED_PER_SLOT times as many leased and waiting. It leases in
   * batches (when room for half of WEBHOOK_CONCURRENCY is free, the last lease found all it asked for, and no lease
   * runs) beside the sends; when nothing is due it waits for a send to finish OR new work (nudge) — never for the
   * slowest receiver, so one hanging receiver cannot delay other partners' deliveries. Leasing ahead drained a backlog
   * 35–50 % faster on PostgreSQL and no slower on SQLite (bench/README.md "Leases ahead of the sends").
   */
  private async drainDue(): Promise<void> {
    const cfg = this.ctx.config.webhooks;
    const inFlight = new Set<Promise<void>>();
    // Outcomes being written. On PostgreSQL a send's slot is free once its answer is in, not once its outcome has
    // committed: 16 slots held through the commit's fsync capped deliveries near 1,000/s (1,146–1,332/s freed,
    // bench/README.md "Webhook outcomes behind the sends"); bounded, so a slow database slows the leasing instead.
    // On SQLite the send waits for its outcome: freed, the backlog drained 10–20 % slower.
    const behind = this.ctx.store.dialect === "postgres";
    const recording = new Set<Promise<void>>();
    const maxRecording = cfg.concurrency * RECORDING_PER_SLOT;
    const record = (d: Leased, written: Promise<void>): Promise<void> => {
      const tracked = written.catch((err) => this.report("delivery crashed", err, { delivery_id: d.id })).finally(() => recording.delete(tracked));
      recording.add(tracked);
      return behind ? Promise.resolve() : tracked;
    };
    const refillAt = Math.max(1, Math.floor(cfg.concurrency / 2));
    // Leased ahead (LEASED_PER_SLOT): a slot that frees up starts its next send at once, not after a lease's commit.
    const ready: Leased[] = [];
    let leasing: Promise<number> | null = null;
    // A lease that failed in the background: thrown at the next round, as one awaited would have been.
    let leaseFailure: { error: unknown } | null = null;
    const start = (d: Leased) => {
      const p = this.deliver(d, record).catch((err) => this.ctx.log.error("delivery crashed", { delivery_id: d.id, ...errorFields(err) }));
      const tracked = p.finally(() => {
        inFlight.delete(tracked);
        this.wakeup.poke();
      });
      inFlight.add(tracked);
    };
    // Whether the last lease found fewer than it asked for: then nothing more is due now, and no lease runs ahead
    // of the sends until one is announced (`again`) or the pass runs dry.
    let drained = false;
    const lease = (limit: number): Promise<number> =>
      retried(() => this.leases.take(limit, this.leaseUntil())).then((batch) => {
        this.completed += batch.settled;
        ready.push(...batch.leased);
        const found = batch.leased.length + batch.settled;
        drained = found < limit;
        return found;
      });
    for (let round = 0; round < 1_000_000; round++) {
      if (leaseFailure) throw (leaseFailure as { error: unknown }).error;
      if (recording.size >= maxRecording) await Promise.race(recording);
      while (inFlight.size < cfg.concurrency && ready.length) start(ready.shift()!);
      const room = (1 + LEASED_PER_SLOT) * cfg.concurrency - inFlight.size - ready.length;
      const idle = inFlight.size === 0 && ready.length === 0;
      if (!leasing && room > 0 && (idle || this.again || (room >= refillAt && !drained))) {
        // Nothing in flight: the outcomes first, so the lease sees what they queued (a failure's events).
        if (inFlight.size === 0 && recording.size > 0) await Promise.all(recording);
        this.again = false;
        // On PostgreSQL a lease asks for a size its one-statement form is written for (leaseSize).
        const taken = lease(behind ? leaseSize(room) : room);
        leasing = taken;
        // Nothing to send meanwhile: wait for it here, and stop once it found nothing (then every outcome is
        // written before the pass ends: a failure's may have queued events, and `again` runs another pass).
        if (idle) {
          const found = await taken;
          leasing = null;
          if (found > 0) continue;
          await Promise.all(recording);
          break;
        }
        void taken.then(
          () => {
            leasing = null;
            this.wakeup.poke();
          },
          (error: unknown) => {
            leasing = null;
            leaseFailure = { error };
            this.wakeup.poke();
          },
        );
      }
      if (inFlight.size === 0 && !leasing) continue;
      await this.wakeup.wait();
    }
    // A lease still running when the loop ends (an error above): its deliveries are sent by the next pass once
    // their leases lapse; nothing is lost.
    await leasing?.catch(() => {});
    while (ready.length) start(ready.shift()!);
    await Promise.all(inFlight);
    await Promise.all(recording);
  }

  /** Long enough for one send (timeout) with margin; a lease that outlives a crash is retaken. */
  private leaseUntil(): Date {
    return new Date(this.ctx.clock.now().getTime() + (this.ctx.config.webhooks.timeoutSeconds * 2 + 10) * 1000);
  }

  /**
   * Before a send (which may have waited for its host's slot, or been leased ahead): a lease too short to cover the
   * timeout and the outcome's write is extended, guarded by its token; a longer one is kept, which keeps a write off
   * the hot path. False when the lease was lost meanwhile (another instance owns the delivery and marked this attempt
   * interrupted).
   */
  private async keepLease(d: Leased): Promise<boolean> {
    const margin = (this.ctx.config.webhooks.timeoutSeconds + 5) * 1000;
    if (d.lease_until_ms - this.ctx.clock.now().getTime() >= margin) return true;
    const until = this.leaseUntil();
    if (!(await renewLease(this.ctx.store, d.id, d.lease_token, until.toISOString()))) return false;
    d.lease_until_ms = until.getTime();
    return true;
  }

  /**
   * Cached per URL for a few seconds, private targets too: with no DNS asked, parsing and normalising the URL on every
   * send still cost ~10 µs a delivery (a CPU profile of bench `webhooks`, whose receiver is on 127.0.0.1).
   */
  private checkTarget(url: string, policy: TargetPolicy): Promise<string | null> {
    const now = Date.now();
    const cached = this.targetChecks.get(url);
    if (cached && cached.until > now) return cached.problem;
    const problem = checkResolvedTarget(url, policy);
    if (this.targetChecks.size > 10_000) this.targetChecks.clear();
    this.targetChecks.set(url, { until: now + 5_000, problem });
    return problem;
  }

  private slotsFor(url: string): Slots {
    let host = this.hostOf.get(url);
    if (host === undefined) {
      host = new URL(url).host;
      if (this.hostOf.size >= 10_000) this.hostOf.clear();
      this.hostOf.set(url, host);
    }
    let s = this.hostSlots.get(host);
    if (!s) {
      s = new Slots(this.ctx.config.webhooks.perTargetConcurrency);
      this.hostSlots.set(host, s);
    }
    return s;
  }

  /** Sends one delivery; its outcome's write is handed to `record`, which says how long to wait for it (drainDue). */
  private async deliver(d: Leased, record: (d: Leased, written: Promise<void>) => Promise<void>): Promise<void> {
    const cfg = this.ctx.config.webhooks;
    const blocked = await this.checkTarget(d.target_url, targetPolicyOf(this.ctx.config));
    const startedAt = this.ctx.clock.now();
    let result: SendResult;
    if (blocked) {
      result = sendFailure("blocked_target", `target refused: ${blocked}`);
    } else {
      const { current, previous } = this.secrets.forSigning(d, startedAt);
      const envelope: Record<string, unknown> = { event_id: d.event_public_id, event_type: d.event_type, data: JSON.parse(d.event_data) };
      if (d.mode === "sandbox") envelope.sandbox = true;
      const slots = this.slotsFor(d.target_url);
      await slots.take();
      try {
        if (!(await this.keepLease(d))) return;
        result = await sendDelivery({
          url: d.target_url,
          eventPublicId: d.event_public_id,
          eventType: d.event_type,
          body: JSON.stringify(envelope),
          timestampSeconds: Math.floor(startedAt.getTime() / 1000),
          secret: current,
          previousSecret: previous,
          timeoutMs: cfg.timeoutSeconds * 1000,
        });
      } finally {
        slots.give();
      }
    }
    await record(d, this.finish(d, result, startedAt));
  }

  /** Records the outcome; the delivery is left alone when our lease was lost (another worker owns it now). */
  private async finish(d: Leased, r: SendResult, startedAt: Date): Promise<void> {
    const now = this.ctx.clock.now();
    const nowIso = now.toISOString();
    const startedAtIso = startedAt.toISOString();
    const outcome = { ...retryDecision(this.ctx, r, d.attempts, d.final_attempt, now), reasonTag: r.reasonTag, error: r.error, statusCode: r.statusCode };
    const attempt = { startedAtIso, durationMs: r.durationMs, statusCode: r.statusCode, error: r.error, reasonTag: r.reasonTag, excerpt: r.excerpt };
    // On PostgreSQL a success whose webhook was not failing changes only its delivery and its attempt: written
    // with others, in one round trip and no savepoints (SuccessWriter). SQLite's group commit already shares its
    // commits, and there the writer drained a backlog ~5 % slower (bench/README.md, "Webhook successes written together").
    const recorded =
      r.ok && !d.failing_since && this.ctx.store.dialect === "postgres"
        ? await this.successes.write({ id: d.id, token: d.lease_token, attemptId: d.attempt_id, nowIso, attempt })
        : await this.recordAlone(d, r, outcome, attempt, now);
    if (!recorded) return;
    this.completed++;
    // A failure may have queued events in the same transaction (webhook.delivery_failed, webhook.disabled), and
    // nothing else announces them. A lease running beside this commit cannot see them (on PostgreSQL it does run
    // beside it; SQLite queues the two), so the pass leases once more before it ends, as after a nudge.
    if (!r.ok) this.again = true;
  }

  /** An outcome in a transaction of its own (its webhook's outcomes share commits on PostgreSQL): whether the delivery was still held. */
  private recordAlone(d: Leased, r: SendResult, outcome: Parameters<typeof recordDelivery>[2], attempt: AttemptOutcome, now: Date): Promise<boolean> {
    const nowIso = now.toISOString();
    return retried(() =>
      this.ctx.store.tx(
        async (t) => {
          // The delivery's row first, then its attempt's: the order the lease transaction locks them in, so that a
          // stale sender finishing while another instance takes the delivery over cannot deadlock with it. Issued
          // together (one round trip on PostgreSQL, which runs them in this order): neither needs the other's answer.
          // The attempt is written even when the lease was lost meanwhile: the row is this request's history, and its
          // answer is the truth about it (the delivery record is left to the instance that holds it now).
          const [held] = await inOrder(
            recordDelivery(t, { id: d.id, token: d.lease_token }, outcome, attempt.startedAtIso, nowIso),
            recordAttempt(t, d.attempt_id, attempt),
          );
          if (held) await this.afterOutcome(t, d, r, outcome.status, now);
          return held;
        },
        // Group-commit key (TxOptions.group): the webhook's row (failing_since, disabled) that outcomes share.
        { group: `webhook:${d.webhook_id}` },
      ),
    );
  }

  private async afterOutcome(t: Queryable, d: Leased, r: SendResult, status: string, now: Date): Promise<void> {
    const nowIso = now.toISOString();
    const deps = { clock: this.ctx.clock, rng: this.ctx.rng };
    if (r.ok) {
      if (d.failing_since) await clearFailing(t, d.webhook_id);
      return;
    }
    if (!d.failing_since) await markFailing(t, d.webhook_id, nowIso);
    const failingForMs = d.failing_since ? now.getTime() - Date.parse(d.failing_since) : 0;
    const hours = this.ctx.config.webhooks.disableAfterHours;
    const disableReason =
      r.statusCode === 410 ? "the receiver answered 410 Gone" : failingForMs >= hours * 3_600_000 ? `every delivery failed for ${hours} h` : null;
    if (disableReason && (await disableWebhook(t, d.webhook_id, disableReason, nowIso))) {
      await emitEvent(t, deps, { partner: d.partner, mode: d.mode }, "webhook.disabled", {
        webhook_id: d.webhook_id,
        reason: disableReason,
        target_url: d.target_url,
      });
    }
    if (status === "dead_letter") await notifyDeadLetter(t, deps, d, r.reasonTag, r.error);
  }
}
